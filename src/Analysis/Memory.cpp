//===- Memory.cpp - Liveness and memory simulation of a schedule ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One pass over the schedule finds each value's storage owner and extends the
/// owner's live range to every step that reads it, a view of it or a result
/// written in place of it; a difference array then turns the ranges into live
/// bytes per step. The rules are those of docs/memory-model.md.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Memory.h"

#include "remat/Analysis/OpRoles.h"
#include "remat/IR/Graph.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>

namespace remat {

bool isAlias(const Op &op, unsigned i) {
  return i == 0 && op.hasFlag(OpFlagView) && op.numOperands() > 0;
}

const Value *storageOwner(const Value *value) {
  while (isAlias(*value->producer(), value->resultIndex()))
    value = value->producer()->operand(0);
  return value;
}

int64_t ownedBytes(const Value &value) {
  return isAlias(*value.producer(), value.resultIndex())
             ? 0
             : value.type().byteSize();
}

llvm::ArrayRef<int64_t> inPlaceOperands(const Op &op) {
  if (!op.hasFlag(OpFlagForeign))
    return {};
  const Attribute *operands = op.findAttr("inplace");
  return operands ? operands->asIntList() : llvm::ArrayRef<int64_t>();
}

namespace {

constexpr llvm::StringLiteral kGradSuffix = ".grad";

bool isParam(const Value &value) { return value.producer()->kind() == "param"; }

/// Owners of the storage of graph outputs named `<param>.grad` after a param
/// of the graph.
llvm::BitVector paramGradOwners(const Graph &graph, const Liveness &liveness) {
  llvm::BitVector owners(graph.valueIdBound());
  for (const Value *output : graph.outputs()) {
    llvm::StringRef name = output->name();
    if (!name.endswith(kGradSuffix))
      continue;
    const Value *param = graph.lookupValue(name.drop_back(kGradSuffix.size()));
    if (param && isParam(*param) && liveness.owner[output->id()])
      owners.set(liveness.owner[output->id()]->id());
  }
  return owners;
}

/// Decides which results are written in place (`inPlaceOperands`): a storage
/// may be taken over at a step when every value sharing it is read there at
/// the latest. Knows each value's last reading step beforehand; none of its
/// work is done on a graph without in-place ops.
class InPlaceWrites {
public:
  explicit InPlaceWrites(const Graph &graph) {
    if (llvm::none_of(graph.ops(), [](const Op &op) {
          return !inPlaceOperands(op).empty();
        }))
      return;
    lastRead_.assign(graph.valueIdBound(), -1);
    lastUse_.assign(graph.valueIdBound(), -1);
    int64_t step = 0;
    for (const Op &op : graph.ops()) {
      for (const Value *operand : op.operands())
        lastRead_[operand->id()] = step;
      ++step;
    }
    for (const Value *output : graph.outputs())
      lastRead_[output->id()] = step;
  }

  /// `value` shares `owner`'s storage from now on.
  void join(const Value &value, const Value &owner) {
    if (!lastUse_.empty())
      lastUse_[owner.id()] =
          std::max(lastUse_[owner.id()], lastRead_[value.id()]);
  }

  /// The storage result 0 of `op`, at `step`, takes over, or null.
  const Value *storageTaken(const Op &op, int64_t step,
                            llvm::ArrayRef<const Value *> owners) const {
    const Value &result = *op.result(0);
    for (int64_t index : inPlaceOperands(op)) {
      const Value *owner = owners[op.operand(index)->id()];
      if (owner && !owner->producer()->hasFlag(OpFlagLeaf) &&
          lastUse_[owner->id()] <= step &&
          owner->type().byteSize() == result.type().byteSize())
        return owner;
    }
    return nullptr;
  }

private:
  std::vector<int64_t> lastRead_;
  /// By owner: the last step that reads a value sharing its storage.
  std::vector<int64_t> lastUse_;
};

} // namespace

Liveness computeLiveness(const Graph &graph) {
  Liveness liveness;
  liveness.owner.assign(graph.valueIdBound(), nullptr);
  liveness.firstStep.assign(graph.valueIdBound(), -1);
  liveness.lastStep.assign(graph.valueIdBound(), -1);
  liveness.numSteps = graph.numOps();
  int64_t lastStep = liveness.numSteps - 1;
  InPlaceWrites inPlace(graph);

  int64_t step = 0;
  for (const Op &op : graph.ops()) {
    for (const Value *operand : op.operands())
      if (const Value *owner = liveness.owner[operand->id()])
        liveness.lastStep[owner->id()] =
            std::max(liveness.lastStep[owner->id()], step);
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      const Value *shared = nullptr;
      if (isAlias(op, i))
        shared = liveness.owner[op.operand(0)->id()];
      else if (i == 0)
        shared = inPlace.storageTaken(op, step, liveness.owner);
      if (shared) {
        liveness.owner[result->id()] = shared;
        inPlace.join(*result, *shared);
        continue;
      }
      liveness.owner[result->id()] = result;
      inPlace.join(*result, *result);
      bool isLeaf = op.hasFlag(OpFlagLeaf);
      liveness.firstStep[result->id()] = isLeaf ? 0 : step;
      liveness.lastStep[result->id()] = isLeaf ? lastStep : step;
    }
    ++step;
  }
  for (const Value *output : graph.outputs())
    if (const Value *owner = liveness.owner[output->id()])
      liveness.lastStep[owner->id()] = lastStep;
  return liveness;
}

namespace {

/// The kind `MemoryBreakdown` gives `owner`: `Param`, `Input`, `ParamGrad`,
/// or `Activation` for the rest.
StorageKind breakdownKind(const Value &owner, const llvm::BitVector &gradOwners) {
  if (isParam(owner))
    return StorageKind::Param;
  if (owner.producer()->hasFlag(OpFlagLeaf))
    return StorageKind::Input;
  if (gradOwners.test(owner.id()))
    return StorageKind::ParamGrad;
  return StorageKind::Activation;
}

/// Live bytes at every step in `numColumns` columns, step-major: each
/// owner's bytes count in column `columnOf(owner)` over its live range. The
/// one place where live ranges become bytes.
std::vector<int64_t>
liveBytesByColumn(const Graph &graph, const Liveness &liveness,
                  unsigned numColumns,
                  llvm::function_ref<unsigned(const Value &)> columnOf) {
  std::vector<int64_t> bytes((liveness.numSteps + 1) * numColumns, 0);
  for (const Op &op : graph.ops())
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      if (liveness.owner[result->id()] != result)
        continue;
      int64_t size = result->type().byteSize();
      unsigned column = columnOf(*result);
      bytes[liveness.firstStep[result->id()] * numColumns + column] += size;
      bytes[(liveness.lastStep[result->id()] + 1) * numColumns + column] -=
          size;
    }
  for (size_t i = numColumns, e = bytes.size(); i < e; ++i)
    bytes[i] += bytes[i - numColumns];
  bytes.resize(liveness.numSteps * numColumns);
  return bytes;
}

} // namespace

MemoryProfile simulateMemory(const Graph &graph) {
  MemoryProfile profile;
  Liveness liveness = computeLiveness(graph);
  if (liveness.numSteps == 0)
    return profile;

  profile.timeline = liveBytesByColumn(graph, liveness, 1,
                                       [](const Value &) { return 0u; });
  for (int64_t step = 0; step < liveness.numSteps; ++step)
    if (profile.peakStep < 0 || profile.timeline[step] > profile.peakBytes) {
      profile.peakBytes = profile.timeline[step];
      profile.peakStep = step;
    }

  llvm::BitVector gradOwners = paramGradOwners(graph, liveness);
  KindBytes atPeak = {};
  for (const Op &op : graph.ops())
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      if (liveness.owner[result->id()] != result ||
          liveness.firstStep[result->id()] > profile.peakStep ||
          liveness.lastStep[result->id()] < profile.peakStep)
        continue;
      profile.liveAtPeak.push_back(result);
      atPeak[unsigned(breakdownKind(*result, gradOwners))] +=
          result->type().byteSize();
    }
  MemoryBreakdown &breakdown = profile.peakBreakdown;
  breakdown.params = atPeak[unsigned(StorageKind::Param)];
  breakdown.paramGrads = atPeak[unsigned(StorageKind::ParamGrad)];
  breakdown.inputs = atPeak[unsigned(StorageKind::Input)];
  breakdown.activations = atPeak[unsigned(StorageKind::Activation)];
  return profile;
}

std::vector<KindBytes> profileMemoryByKind(const Graph &graph) {
  Liveness liveness = computeLiveness(graph);
  std::vector<OpRoleKind> roles = classifyOps(graph, liveness);
  llvm::BitVector gradOwners = paramGradOwners(graph, liveness);
  auto kindOf = [&](const Value &owner) {
    StorageKind kind = breakdownKind(owner, gradOwners);
    if (kind != StorageKind::Activation)
      return unsigned(kind);
    switch (roles[owner.producer()->id()]) {
    case OpRoleKind::Recomputed:
      return unsigned(StorageKind::Recomputed);
    case OpRoleKind::Gradient:
      return unsigned(StorageKind::Gradient);
    default:
      return unsigned(StorageKind::Activation);
    }
  };
  std::vector<int64_t> bytes =
      liveBytesByColumn(graph, liveness, kNumStorageKinds, kindOf);
  std::vector<KindBytes> steps(liveness.numSteps);
  for (size_t step = 0; step < steps.size(); ++step)
    std::copy_n(bytes.begin() + step * kNumStorageKinds, kNumStorageKinds,
                steps[step].begin());
  return steps;
}

} // namespace remat

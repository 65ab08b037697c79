//===- Memory.cpp - Liveness and memory simulation of a schedule ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One pass over the schedule finds each value's storage owner and extends the
/// owner's live range to every step that reads it or a view of it; a
/// difference array then turns the ranges into live bytes per step. The rules
/// are those of docs/memory-model.md.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Memory.h"

#include "remat/IR/Graph.h"

#include "llvm/ADT/BitVector.h"

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

} // namespace

Liveness computeLiveness(const Graph &graph) {
  Liveness liveness;
  liveness.owner.assign(graph.valueIdBound(), nullptr);
  liveness.firstStep.assign(graph.valueIdBound(), -1);
  liveness.lastStep.assign(graph.valueIdBound(), -1);
  liveness.numSteps = graph.numOps();
  int64_t lastStep = liveness.numSteps - 1;

  int64_t step = 0;
  for (const Op &op : graph.ops()) {
    for (const Value *operand : op.operands())
      if (const Value *owner = liveness.owner[operand->id()])
        liveness.lastStep[owner->id()] =
            std::max(liveness.lastStep[owner->id()], step);
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      const Value *aliased = nullptr;
      if (isAlias(op, i))
        aliased = liveness.owner[op.operand(0)->id()];
      if (aliased) {
        liveness.owner[result->id()] = aliased;
        continue;
      }
      liveness.owner[result->id()] = result;
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

MemoryProfile simulateMemory(const Graph &graph) {
  MemoryProfile profile;
  Liveness liveness = computeLiveness(graph);
  if (liveness.numSteps == 0)
    return profile;

  auto isOwner = [&](const Value *value) {
    return liveness.owner[value->id()] == value;
  };
  std::vector<int64_t> delta(liveness.numSteps + 1, 0);
  for (const Op &op : graph.ops())
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      if (!isOwner(result))
        continue;
      int64_t bytes = result->type().byteSize();
      delta[liveness.firstStep[result->id()]] += bytes;
      delta[liveness.lastStep[result->id()] + 1] -= bytes;
    }

  profile.timeline.reserve(liveness.numSteps);
  int64_t live = 0;
  for (int64_t step = 0; step < liveness.numSteps; ++step) {
    live += delta[step];
    profile.timeline.push_back(live);
    if (profile.peakStep < 0 || live > profile.peakBytes) {
      profile.peakBytes = live;
      profile.peakStep = step;
    }
  }

  llvm::BitVector gradOwners = paramGradOwners(graph, liveness);
  MemoryBreakdown &breakdown = profile.peakBreakdown;
  for (const Op &op : graph.ops())
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      if (!isOwner(result) ||
          liveness.firstStep[result->id()] > profile.peakStep ||
          liveness.lastStep[result->id()] < profile.peakStep)
        continue;
      profile.liveAtPeak.push_back(result);
      int64_t bytes = result->type().byteSize();
      if (isParam(*result))
        breakdown.params += bytes;
      else if (op.hasFlag(OpFlagLeaf))
        breakdown.inputs += bytes;
      else if (gradOwners.test(result->id()))
        breakdown.paramGrads += bytes;
      else
        breakdown.activations += bytes;
    }
  return profile;
}

} // namespace remat

//===- PeakFloor.cpp - A lower bound on the peak of every plan ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One forward pass sums the leaves and the outputs' storage and bounds each
/// op's step; one backward pass over the gradient ops finds those that some
/// other output's gradient producer depends on, which cannot produce the
/// last output. Owners come from `storageOwner`, so views count as the
/// memory model counts them; no live range is needed.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/PeakFloor.h"

#include "remat/Analysis/Memory.h"
#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <cassert>
#include <cstdint>
#include <limits>
#include <vector>

namespace remat {
namespace {

/// Sums the distinct storages an op's step holds, with int64 checks.
class FloorCounter {
public:
  FloorCounter(const Graph &graph, unsigned forwardOpIdBound)
      : graph_(graph), forwardOpIdBound_(forwardOpIdBound),
        isOutputOwner_(graph.valueIdBound()),
        producesOutputOwner_(graph.opIdBound()),
        outputBytesOf_(graph.opIdBound(), 0), opById_(graph.opIdBound()),
        stamp_(graph.valueIdBound(), 0) {
    for (const Op &op : graph.ops())
      opById_[op.id()] = &op;
  }

  absl::StatusOr<PeakFloor> run() {
    REMAT_RETURN_IF_ERROR(sumLeavesAndOutputs());
    llvm::BitVector notLast = gradientOpsBeforeAnOutput();

    int64_t mostAtAnOp = floor_.leafBytes;
    const Op *mostOp = nullptr;
    int64_t leastAtLast = std::numeric_limits<int64_t>::max();
    const Op *leastOp = nullptr;
    // Gradient ops with their own step's bound, in schedule order.
    std::vector<std::pair<int64_t, const Op *>> gradientSteps;
    for (const Op &op : graph_.ops()) {
      if (op.hasFlag(OpFlagLeaf))
        continue;
      REMAT_ASSIGN_OR_RETURN(int64_t own,
                             ownedAtStep(op, /*skipOutputs=*/false));
      int64_t atOp = 0;
      if (llvm::AddOverflow(floor_.leafBytes, own, atOp))
        return overflowAt(op);
      if (atOp > mostAtAnOp) {
        mostAtAnOp = atOp;
        mostOp = &op;
      }
      if (isGradient(op))
        gradientSteps.push_back({atOp, &op});
      if (!producesOutputOwner_.test(op.id()) || notLast.test(op.id()))
        continue;
      REMAT_ASSIGN_OR_RETURN(int64_t besideOutputs,
                             ownedAtStep(op, /*skipOutputs=*/true));
      int64_t atLast = 0;
      if (llvm::AddOverflow(floor_.leafBytes, floor_.outputBytes, atLast) ||
          llvm::AddOverflow(atLast, besideOutputs, atLast))
        return overflowAt(op);
      if (atLast < leastAtLast) {
        leastAtLast = atLast;
        leastOp = &op;
      }
    }
    floor_.bytes = mostAtAnOp;
    floor_.op = mostOp;
    if (leastOp && leastAtLast > mostAtAnOp) {
      floor_.bytes = leastAtLast;
      floor_.op = leastOp;
      floor_.lastOutput = true;
    }
    std::vector<const Op *> pending = pendingCandidates(gradientSteps);
    std::vector<llvm::BitVector> ancestors = gradientAncestors(pending);
    for (size_t i = 0; i < pending.size(); ++i) {
      const Op *op = pending[i];
      REMAT_ASSIGN_OR_RETURN(int64_t atOp,
                             withPendingGradients(*op, ancestors[i]));
      if (atOp > floor_.bytes) {
        floor_.bytes = atOp;
        floor_.op = op;
        floor_.lastOutput = false;
      }
    }
    return floor_;
  }

private:
  bool isGradient(const Op &op) const { return op.id() >= forwardOpIdBound_; }

  /// The gradient ops whose step bound 3 (docs/memory-model.md) is taken
  /// at: each costs O(ops + edges), so a few, deterministically: the
  /// `kPendingOps` largest of bound 1 and the last `kPendingOps` in
  /// schedule order (where most outputs wait).
  static constexpr size_t kPendingOps = 2;
  static std::vector<const Op *>
  pendingCandidates(llvm::ArrayRef<std::pair<int64_t, const Op *>> steps) {
    std::vector<const Op *> ops;
    for (size_t i = steps.size() > kPendingOps ? steps.size() - kPendingOps : 0;
         i < steps.size(); ++i)
      ops.push_back(steps[i].second);
    // The largest, earlier first among equals: kPendingOps linear scans.
    llvm::SmallVector<const Op *, kPendingOps> largest;
    for (size_t round = 0; round < kPendingOps; ++round) {
      const std::pair<int64_t, const Op *> *best = nullptr;
      for (const auto &step : steps)
        if ((!best || step.first > best->first) &&
            !llvm::is_contained(largest, step.second))
          best = &step;
      if (!best)
        break;
      largest.push_back(best->second);
      if (!llvm::is_contained(ops, best->second))
        ops.push_back(best->second);
    }
    return ops;
  }

  /// The ops `gradientAncestors` takes at once: one bit each of a byte.
  static constexpr size_t kMaxAncestorSets = 8;
  static_assert(2 * kPendingOps <= kMaxAncestorSets,
                "pendingCandidates returns at most 2 * kPendingOps ops");

  /// For each of `ops`, the gradient ops from which it is reached through
  /// gradient values alone (edges no rewrite reroutes), by op id. One walk
  /// for all of them, in reverse schedule order (topological: a verified
  /// graph): each op passes on to its producers the `ops` it reaches.
  std::vector<llvm::BitVector>
  gradientAncestors(llvm::ArrayRef<const Op *> ops) const {
    assert(ops.size() <= kMaxAncestorSets && "more ops than bits");
    std::vector<uint8_t> reaches(graph_.opIdBound(), 0);
    for (size_t i = 0; i < ops.size(); ++i)
      reaches[ops[i]->id()] |= uint8_t(1u << i);
    std::vector<llvm::BitVector> ancestors(
        ops.size(), llvm::BitVector(graph_.opIdBound()));
    for (const Op &op : llvm::reverse(graph_.ops())) {
      uint8_t bits = reaches[op.id()];
      if (!bits)
        continue;
      for (const Value *operand : op.operands()) {
        const Op *producer = operand->producer();
        if (!isGradient(*producer))
          continue;
        reaches[producer->id()] |= bits;
        for (size_t i = 0; i < ops.size(); ++i)
          if (bits & (1u << i))
            ancestors[i].set(producer->id());
      }
    }
    return ancestors;
  }

  /// Bound 3 at `op`'s step: bound 1, plus the storage of outputs produced
  /// by its gradient `ancestors`, plus for each other gradient value `v` an
  /// ancestor produced: the least of `v` and the outputs of its readers
  /// that are not ancestors (if `v` is freed, they ran before `op`).
  absl::StatusOr<int64_t>
  withPendingGradients(const Op &op, const llvm::BitVector &ancestors) {
    REMAT_ASSIGN_OR_RETURN(int64_t bytes,
                           ownedAtStep(op, /*skipOutputs=*/false));
    uint64_t ownTag = tag_;
    // Each reader's outputs count in one value's group only.
    llvm::BitVector grouped(graph_.opIdBound());
    bool overflow = llvm::AddOverflow(bytes, floor_.leafBytes, bytes);
    for (int id = ancestors.find_first(); id >= 0 && !overflow;
         id = ancestors.find_next(id)) {
      const Op &producer = *opById_[id];
      for (unsigned i = 0, e = producer.numResults(); i < e; ++i) {
        const Value *value = producer.result(i);
        // A result written in place may share an operand's storage.
        if (&ownerOf(value) != value || !isCounted(*value) ||
            stamp_[value->id()] == ownTag ||
            (i == 0 && mayWriteInPlace(producer)))
          continue;
        int64_t size = value->type().byteSize();
        if (!isOutputOwner_.test(value->id()))
          size = std::min(
              size, outputsOfLaterReaders(*value, op, ancestors, grouped));
        overflow |= llvm::AddOverflow(bytes, size, bytes);
      }
    }
    if (overflow)
      return overflowAt(op);
    return bytes;
  }

  /// The output storage produced by the readers of `value` (through views)
  /// that are neither `op` nor in `ancestors`, each reader counted in one
  /// group. Sums of distinct outputs: no overflow past `outputBytes`.
  int64_t outputsOfLaterReaders(const Value &value, const Op &op,
                                const llvm::BitVector &ancestors,
                                llvm::BitVector &grouped) const {
    int64_t bytes = 0;
    std::vector<const Value *> views = {&value};
    while (!views.empty()) {
      const Value *view = views.back();
      views.pop_back();
      for (const Use &use : view->uses()) {
        const Op *reader = use.user;
        for (unsigned i = 0, e = reader->numResults(); i < e; ++i)
          if (isAlias(*reader, i) && use.operandIndex == 0)
            views.push_back(reader->result(i));
        if (reader == &op || ancestors.test(reader->id()) ||
            grouped.test(reader->id()))
          continue;
        grouped.set(reader->id());
        bytes += outputBytesOf_[reader->id()];
      }
    }
    return bytes;
  }

  absl::Status overflowAt(const Op &op) const {
    return opError(op, "the bytes live at its step overflow int64");
  }

  const Value &ownerOf(const Value *value) const {
    return *storageOwner(value);
  }

  /// Storage beyond the leaves' sum: not of a param, an input or a constant.
  static bool isCounted(const Value &owner) {
    return owner.producer()->numOperands() != 0;
  }

  /// Sums the params and inputs, and marks and sums the outputs' storage.
  absl::Status sumLeavesAndOutputs() {
    for (const Op &op : graph_.ops())
      if (op.hasFlag(OpFlagLeaf))
        for (unsigned i = 0, e = op.numResults(); i < e; ++i)
          if (llvm::AddOverflow(floor_.leafBytes,
                                op.result(i)->type().byteSize(),
                                floor_.leafBytes))
            return overflowAt(op);
    for (const Value *output : graph_.outputs()) {
      const Value &owner = ownerOf(output);
      if (!isCounted(owner) || isOutputOwner_.test(owner.id()))
        continue;
      isOutputOwner_.set(owner.id());
      producesOutputOwner_.set(owner.producer()->id());
      outputBytesOf_[owner.producer()->id()] += owner.type().byteSize();
      if (llvm::AddOverflow(floor_.outputBytes, owner.type().byteSize(),
                            floor_.outputBytes))
        return overflowAt(*owner.producer());
    }
    return absl::OkStatus();
  }

  /// Gradient ops on which, through gradient values alone, another op that
  /// produces an output's storage depends: that op runs later in every
  /// rewritten graph, so they do not produce the last output. One walk over
  /// the gradient ops in reverse schedule order.
  llvm::BitVector gradientOpsBeforeAnOutput() const {
    llvm::BitVector before(graph_.opIdBound());
    for (const Op &op : llvm::reverse(graph_.ops())) {
      if (op.id() < forwardOpIdBound_)
        continue;
      for (unsigned i = 0, e = op.numResults(); i < e && !before.test(op.id());
           ++i)
        for (const Use &use : op.result(i)->uses()) {
          unsigned user = use.user->id();
          if (producesOutputOwner_.test(user) || before.test(user)) {
            before.set(op.id());
            break;
          }
        }
    }
    return before;
  }

  /// Bytes of the distinct counted storages `op` reads and writes, those of
  /// outputs left out when `skipOutputs`.
  absl::StatusOr<int64_t> ownedAtStep(const Op &op, bool skipOutputs) {
    ++tag_;
    int64_t sum = 0;
    auto count = [&](const Value *value) {
      const Value &owner = ownerOf(value);
      if (!isCounted(owner) || stamp_[owner.id()] == tag_ ||
          (skipOutputs && isOutputOwner_.test(owner.id())))
        return true;
      stamp_[owner.id()] = tag_;
      return !llvm::AddOverflow(sum, owner.type().byteSize(), sum);
    };
    for (const Value *operand : op.operands())
      if (!count(operand))
        return overflowAt(op);
    for (unsigned i = 0, e = op.numResults(); i < e; ++i)
      if (!count(op.result(i)))
        return overflowAt(op);
    // Result 0 and the operand it overwrites, counted both, are one storage:
    // the output's where result 0 is one (then left out as the operand).
    if (mayWriteInPlace(op))
      sum -= op.result(0)->type().byteSize();
    return sum;
  }

  /// Whether some plan may write `op`'s result 0 in place of an operand
  /// (`inPlaceOperands`): one whose storage is neither a leaf's nor an
  /// output's, and of its bytes, so counted above.
  bool mayWriteInPlace(const Op &op) const {
    return llvm::any_of(inPlaceOperands(op), [&](int64_t index) {
      const Value &owner = ownerOf(op.operand(index));
      return isCounted(owner) && !isOutputOwner_.test(owner.id()) &&
             owner.type().byteSize() == op.result(0)->type().byteSize();
    });
  }

  const Graph &graph_;
  unsigned forwardOpIdBound_;
  /// By value id: the storage of a counted output.
  llvm::BitVector isOutputOwner_;
  /// By op id: the op produces a counted output's storage, and its bytes.
  llvm::BitVector producesOutputOwner_;
  std::vector<int64_t> outputBytesOf_;
  std::vector<const Op *> opById_;
  /// By value id: the last `tag_` that counted the storage.
  std::vector<uint64_t> stamp_;
  uint64_t tag_ = 0;
  PeakFloor floor_;
};

} // namespace

absl::StatusOr<PeakFloor> computePeakFloor(const Graph &graph,
                                           unsigned forwardOpIdBound) {
  return FloorCounter(graph, forwardOpIdBound).run();
}

std::string describePeakFloorOp(const PeakFloor &floor) {
  if (!floor.op)
    return "params and inputs alone";
  std::string name = fmt::format("'{}'", floor.op->describe());
  if (floor.op->loc().isKnown())
    name += fmt::format(" ({})", opLocation(*floor.op));
  if (floor.lastOutput)
    name += " or a later output's producer, with every output live";
  return name;
}

} // namespace remat

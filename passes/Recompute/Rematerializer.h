//===- Rematerializer.h - The recompute rewrite, internals ------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The rewrite behind `rematerialize` (remat/Pass/Recompute.h), split by
/// concern: Levels.cpp decides what each level keeps and how it splits into
/// segments, Rewrite.cpp makes and places the copies, ForcedDependency.cpp
/// orders them with data instead of control dependencies. The walk is
/// described in RecomputePass.cpp and docs/recompute.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_RECOMPUTE_REMATERIALIZER_H
#define REMAT_PASSES_RECOMPUTE_REMATERIALIZER_H

#include "remat/IR/Graph.h"
#include "remat/Analysis/Memory.h"
#include "remat/Pass/Recompute.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <utility>
#include <vector>

namespace remat::recompute {

/// The selected regions that enclose each op, by depth.
class RegionTree {
public:
  explicit RegionTree(llvm::ArrayRef<RegionSpan> regions);

  unsigned numLevels() const { return numLevels_; }

  /// The index of the selected region of depth `depth` enclosing `op`, or -1.
  int enclosing(const Op &op, unsigned depth) const;

private:
  llvm::StringMap<unsigned> index_;
  std::vector<unsigned> depthOf_;
  unsigned numLevels_ = 0;
};

/// One application of the rewrite: which ops are the computation to
/// recompute, which of their values stay, and how they split into segments.
struct Level {
  unsigned number = 1;
  /// By op id: ops whose values may be recomputed at this level.
  llvm::BitVector source;
  /// By value id: source values the readers may keep reading.
  llvm::BitVector kept;
  /// By op id: the segment of each source op.
  std::vector<int> segment;
  /// Segment labels by segment number.
  std::vector<std::string> labels;
  /// By segment number: whether it is a region, recomputed from its inputs
  /// alone, rather than a stretch between kept values.
  std::vector<bool> isRegion;
};

/// The first level of `plan`: the forward ops (`forward`, in the order the
/// rewrite sees them), with the plan's kept values; segments are the regions
/// of depth 0, and elsewhere the stretches between kept values. `reported`
/// (by value id) gets the kept values the result lists.
Level firstLevel(const Graph &graph, llvm::ArrayRef<const Op *> forward,
                 const RematPlan &plan, const RegionTree &regions,
                 llvm::BitVector &reported);

/// Whether a reader of `value` at `level` reads a copy instead.
inline bool needsCopy(const Level &level, const Value &value) {
  const Op *producer = value.producer();
  return producer->id() < level.source.size() &&
         level.source.test(producer->id()) && !level.kept.test(value.id());
}

/// A copy of the forward op `original` reading `operands`, created before
/// `before`: its results are named like the original's with `.re` (made
/// unique), and it keeps the original's region, device and location.
Op *createCopy(Graph &graph, const Op &original,
               llvm::ArrayRef<Value *> operands, Op *before);

/// Adds (`sign` +1) or removes (-1) `copy` from a segment's figures.
void countCopy(RecomputeSegment &segment, const Op &copy, int sign);

/// Erases from the graph and from `created` (ops the rewrite made, in
/// creation order) those whose results nothing reads and that nothing waits
/// for, latest first, so that a chain of them goes whole; `onErase` sees
/// each just before. A schedule may recompute values its backward no longer
/// reads (a chain run whose output has no reader left).
void eraseUnreadOps(Graph &graph, std::vector<Op *> &created,
                    llvm::function_ref<void(Op &)> onErase);

/// What copies made before `reader` wait for, so that no scheduler hoists
/// them into the forward pass: the latest, by `position`, of the producers
/// of its operands that `isGradientOp` accepts and that read something (a
/// constant is no gradient to wait for); null when there is none. It
/// precedes `reader`, so ordering copies after it makes no cycle.
template <typename IsGradientOp, typename Position>
Op *latestGradientOperandProducer(const Op &reader, IsGradientOp isGradientOp,
                                  Position position) {
  Op *latest = nullptr;
  for (const Value *operand : reader.operands()) {
    Op *producer = operand->producer();
    if (isGradientOp(*producer) && producer->numOperands() != 0 &&
        (!latest || position(producer) > position(latest)))
      latest = producer;
  }
  return latest;
}

/// Realises an explicit schedule (`RematPlan::schedule`) on `graph`, whose
/// ops below `forwardOpIdBound` are the forward pass.
absl::StatusOr<RecomputeResult>
realiseSchedule(Graph &graph, unsigned forwardOpIdBound,
                llvm::ArrayRef<RecomputeStep> steps,
                const RecomputeOptions &options);

/// One run of the rewrite over one training graph.
class Rematerializer {
public:
  Rematerializer(Graph &graph, unsigned forwardOpIdBound,
                 const RematPlan &plan, const RecomputeOptions &options)
      : graph_(graph), forwardOpIdBound_(forwardOpIdBound), plan_(plan),
        options_(options), regions_(plan.regions),
        reported_(graph.valueIdBound()) {}

  absl::StatusOr<RecomputeResult> run();

private:
  /// The copies of the enclosing level whose originals lie in regions of
  /// `depth`: each such region is recomputed again from its inputs.
  Level nestedLevel(unsigned depth);
  void rewrite(const Level &level);

  /// The copy of `value` in `segment`, created before `reader` if needed.
  Value *copyOf(const Level &level, int segment, Value *value, Op *reader);
  Value *lookupCopy(int segment, const Value *value) const;
  void copyOp(const Level &level, int segment, Op *original, Op *reader);

  /// What a copy reads for a value it does not recompute: a shared
  /// stop_gradient of it, so that no gradient could flow back through the
  /// copy into the kept value.
  Value *boundary(Value *kept, Op *reader);

  /// The index of the segment's report entry, created with its trigger at
  /// the segment's first copy.
  int segmentInfo(const Level &level, int segment, Op *reader);

  /// The gradient op the first reader of a segment waits for: the latest
  /// producer of one of its gradient operands, else the gradient op just
  /// before it. Both precede every copy of the segment, so ordering the
  /// copies after it makes no cycle.
  Op *triggerFor(Op *reader);

  /// An op autodiff emitted (not a forward op, copy or helper of the rewrite).
  bool isGradientOp(const Op &op) const;

  /// The schedule position of an op that existed before the rewrite.
  int64_t position(const Op *op) const { return positions_[op->id()]; }
  void orderAfter(Op *copy, Op *trigger);

  /// Makes the smallest float operand of `copy` read `operand - 0 * g0^2`,
  /// g0 the first element of the trigger's first float result: exactly
  /// `operand`, bit for bit, while g0 is finite. Falls back to a control
  /// dependency when there is no such pair of values.
  void forceDataDependency(Op *copy, Op *trigger);

  /// A scalar +0 computed from `gradient`, once per gradient and placed right
  /// after its producer, so that every later copy can read it:
  /// 0 * (g0 * g0) with g0 = reshape(slice(g, 0, 1), []).
  Value *zeroOf(Value *gradient);

  /// Creates an op of the rewrite's own (not a copy) before `before`.
  Op *createHelper(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
                   AttrList attrs, Type resultType, const std::string &name,
                   Op *before);

  /// Keeps the id-indexed tables as large as the graph's id space.
  void growTables();

  /// After nested levels: erases what the rewrite made and nothing reads any
  /// more (copies of the enclosing level that the nested one replaced, and
  /// their stop_gradients), last first so that chains go together.
  void eraseDeadOps();
  absl::StatusOr<RecomputeResult> finish();
  Graph &graph_;
  unsigned forwardOpIdBound_;
  const RematPlan &plan_;
  const RecomputeOptions &options_;
  RegionTree regions_;

  /// The gradient ops, in schedule order, before the rewrite.
  std::vector<Op *> readers_;

  /// Copies by (segment, value id of the original).
  absl::flat_hash_map<std::pair<int, unsigned>, Value *> copyMap_;

  /// Every copy, in creation order.
  std::vector<Op *> copies_;

  /// Every op the rewrite made (copies, stop_gradients, forced
  /// dependencies), in creation order.
  std::vector<Op *> created_;

  /// By op id: the forward op a copy recomputes (itself for forward ops).
  std::vector<Op *> origin_;

  /// By op id: the level that made a copy (0 for other ops).
  std::vector<unsigned> copyLevel_;
  std::vector<int> copySegment_;

  /// By op id: a copy's index into `segmentsInfo_`.
  std::vector<int> copyInfo_;

  /// By value id: the stop_gradient of a kept value, the zero of a gradient.
  std::vector<Value *> stopGradient_;
  std::vector<Value *> zeroOf_;

  /// By value id: results of forced dependencies (`k - 0 * g0^2`).
  llvm::BitVector forced_;

  /// By value id: the kept values the result lists: the plan's, their
  /// sibling results, and those kept because a later segment reads them.
  llvm::BitVector reported_;

  /// By op id, for the ops that existed before the rewrite.
  std::vector<int64_t> positions_;
  std::vector<RecomputeSegment> segmentsInfo_;

  /// By segment of the current level: index into `segmentsInfo_`.
  std::vector<int> segmentIndex_;
};

} // namespace remat::recompute

#endif // REMAT_PASSES_RECOMPUTE_REMATERIALIZER_H

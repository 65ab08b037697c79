//===- Recompute.h - The recompute rewrite ----------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Turns a forward graph into a training graph in which the backward pass
/// reads only the kept forward values (a `RematPlan`); every other
/// forward value it needs is recomputed from them by copies of the forward
/// ops, one segment at a time. Gradients are emitted once, by `differentiate`,
/// and the rewrite only changes where the backward pass reads its forward
/// values, so the gradients equal plain autodiff's bitwise. See
/// docs/recompute.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_RECOMPUTE_H
#define REMAT_PASS_RECOMPUTE_H

#include "remat/Pass/Autodiff.h"
#include "remat/Pass/Planner.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

class Graph;
class Op;
class Value;

struct RecomputeOptions {
  AutodiffOptions autodiff;
  /// Orders each segment's recomputation after its trigger with a data
  /// dependency (the root copies read `kept + 0 * g[0]` for the trigger's
  /// gradient g) instead of control dependencies, for backends that drop
  /// control dependencies. It costs a copy of each such kept input.
  bool forceDataDependency = false;
};

/// One segment: the copies that recompute the forward values that one stretch
/// of the backward pass reads.
struct RecomputeSegment {
  /// "after %k" (the kept value that opens it), "from the leaves", or
  /// "region p"; nested regions add their level.
  std::string label;
  /// 1 for copies of forward ops, 2 and up for copies of copies inside
  /// nested regions.
  unsigned level = 1;
  /// The gradient op the segment's recomputation waits for; null when the
  /// segment is needed by the first gradient op.
  Op *trigger = nullptr;
  int64_t numCopies = 0;
  int64_t flops = 0;
  /// Bytes of the recomputed (non-view) values.
  int64_t bytes = 0;
};

struct RecomputeResult {
  AutodiffResult autodiff;
  /// The kept forward values, in schedule order: the plan's, the other
  /// results of their ops, and those that a forward op of a later segment
  /// reads (kept so that no segment's copies reach into an earlier one;
  /// docs/recompute.md). Leaves, constants, outputs and their views are kept
  /// too, and not listed.
  std::vector<Value *> kept;
  /// Segments in the order their first copies run in the rewritten
  /// schedule, nested levels among them; segments without copies are left
  /// out.
  std::vector<RecomputeSegment> segments;
  int64_t numCopies = 0;
  /// The most copies of any one forward op (several with nested regions or
  /// a schedule that recomputes a value again).
  int64_t maxRecomputations = 0;
  /// FLOPs of the copies and of the forced dependencies' arithmetic.
  int64_t flopsRecompute = 0;
};

/// Whether the rewrite may copy `op`: not when its `recompute` attribute
/// (`kRecomputeAttr`) is false. A pinned op's values are kept, whatever the
/// plan says, and a schedule's copies of it are left out.
bool mayRecompute(const Op &op);

/// Rewrites `training`, whose ops with id below `forwardOpIdBound` are the
/// forward pass and the rest its gradient ops (as `differentiate` appends
/// them), so that gradient ops read only the values `plan` keeps (and leaves,
/// constants, outputs and views of them); the rest are recomputed by copies
/// placed just before their first reader. A plan with a schedule is realised
/// step by step instead (docs/planners.md). Errors: a kept value that is not
/// a forward value of `training`; a schedule step before an op not in
/// `training`, or recomputing an op that is not a forward op with operands.
absl::StatusOr<RecomputeResult>
rematerialize(Graph &training, unsigned forwardOpIdBound,
              const RematPlan &plan, const RecomputeOptions &options = {});

/// The FLOPs of the copies `rematerialize` makes for `plan`, counted
/// without rewriting, on `training` with its ops in the order `scheduleIds`
/// gives (every op's id once; the order the rewrite will see, e.g. after
/// `scheduleForMemory`). Exact for a schedule and for kept values without
/// regions; a lower bound with regions (0 when they nest) and with forced
/// dependencies, whose arithmetic it leaves out. Linear in the graph.
int64_t recomputeFlopsLowerBound(const Graph &training,
                                 unsigned forwardOpIdBound,
                                 const RematPlan &plan,
                                 llvm::ArrayRef<unsigned> scheduleIds);

/// `differentiate` then `rematerialize`: the forward graph `graph` (verified,
/// loss = output 0) becomes its training graph.
absl::StatusOr<RecomputeResult>
recomputeGradients(Graph &graph, const RematPlan &plan,
                   const RecomputeOptions &options = {});

} // namespace remat

#endif // REMAT_PASS_RECOMPUTE_H

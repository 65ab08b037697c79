//===- RematProblem.h - The problem every planner shares --------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// An abstract training DAG with a memory budget, Checkmate's
/// rematerialization schedules over it (Jain et al., MLSys 2020), and a
/// checker that validates a schedule and measures its cost and peak: the
/// terms in which the ILP, the chain DP, the AP baselines, XLA's walk and the
/// min-cut plan and are compared (GraphProblem.h maps a graph onto them).
/// docs/planning-ilp.md gives the memory accounting.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_PROBLEM_REMATPROBLEM_H
#define REMAT_PASSES_PLANNING_PROBLEM_REMATPROBLEM_H

#include "absl/status/statusor.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace remat::problem {

/// One op of the training DAG; its index in `RematProblem::nodes` is both its
/// position in the topological order and the stage that first computes it.
struct RematNode {
  /// Cost of one (re)computation, in FLOPs.
  int64_t cost = 0;
  /// Bytes of its output; 0 for a view or for an output counted in
  /// `RematProblem::constantBytes`.
  int64_t bytes = 0;
  /// The nodes it reads, each earlier in the order; duplicates are allowed.
  /// Inline up to two: a million-node problem makes no allocation per node.
  llvm::SmallVector<int, 2> deps;
  /// A gradient op: computed exactly once, at its own stage.
  bool backward = false;
};

/// A training DAG in topological order, forward nodes first, then backward.
struct RematProblem {
  std::vector<RematNode> nodes;
  /// Bytes live throughout: params, inputs, parameter gradients.
  int64_t constantBytes = 0;
  /// The most bytes any step may hold, `constantBytes` included.
  int64_t budgetBytes = 0;
};

/// How many forward nodes `problem` has: they come first, so this is the
/// index of the first backward node.
int numForward(const RematProblem &problem);

/// An error when `problem` is malformed: a dependency not earlier than its
/// reader, a forward node after a backward one, a negative cost or size, or
/// byte totals that overflow int64.
absl::Status validateProblem(const RematProblem &problem);

/// Checkmate's R and S matrices: stage `t` runs the nodes of `compute[t]` in
/// index order, `t` itself included, and starts with the outputs of
/// `resident[t]` in memory (kept from stage t-1). Each row has N bits; only
/// `compute[t][i]` with i <= t and `resident[t][i]` with i < t may be set.
struct RematSchedule {
  std::vector<llvm::BitVector> compute;
  std::vector<llvm::BitVector> resident;

  /// N stages with no bit set.
  static RematSchedule empty(int numNodes);
};

/// The schedule without rematerialization: every node computed once, at its
/// own stage, and kept resident until its last reader's stage.
RematSchedule keepAllSchedule(const RematProblem &problem);

/// Sets `schedule`'s resident rows from its compute rows: a node read at a
/// stage that does not compute it is kept from its latest computation
/// before that stage. Every other resident bit is cleared. O(N^2 / 64 plus
/// the reads).
void keepUntilRead(const RematProblem &problem, RematSchedule &schedule);

/// What a valid schedule costs.
struct ScheduleCost {
  /// Sum of the costs of every computation, first ones included.
  int64_t cost = 0;
  /// `cost` less one computation of every node: the rematerialization.
  int64_t recomputeCost = 0;
  /// The most bytes live at any step, `constantBytes` included.
  int64_t peakBytes = 0;
  /// Where the peak is first reached: the stage and the node computed there.
  int peakStage = 0;
  int peakNode = 0;
};

/// Cost and peak of `schedule` under the memory accounting of
/// docs/planning-ilp.md, ignoring the budget. An error names the first stage
/// and node that break a rule: a bit out of the triangle, a stage that does
/// not compute its own node, a backward node computed at another stage, a
/// resident node recomputed, a node read or kept while not in memory.
absl::StatusOr<ScheduleCost> evaluateSchedule(const RematProblem &problem,
                                              const RematSchedule &schedule);

/// `evaluateSchedule`, and an error when the peak exceeds the budget.
absl::StatusOr<ScheduleCost> checkSchedule(const RematProblem &problem,
                                           const RematSchedule &schedule);

/// The edges of a validated problem, each list sorted and without duplicates.
struct RematDag {
  std::vector<std::vector<int>> deps;
  std::vector<std::vector<int>> readers;
  /// Whether a node of index at least `t` or any forward node reads `i`: the
  /// nodes worth keeping resident at stage `t`.
  bool readLaterThan(int i, int t, const RematProblem &problem) const;
};

RematDag buildDag(const RematProblem &problem);

} // namespace remat::problem

#endif // REMAT_PASSES_PLANNING_PROBLEM_REMATPROBLEM_H

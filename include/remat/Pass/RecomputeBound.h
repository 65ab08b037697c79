//===- RecomputeBound.h - A proven floor under recompute cost ---*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// How little any plan can recompute within a budget: the optimum (or a
/// bound on it) of the `ilp` planner's relaxation over the training graph,
/// for judging any planner's plan (`remat opt --bound=SECONDS`,
/// `recompute_lower_bound` and `gap_to_bound` in the report).
/// docs/planning-ilp.md#the-lower-bound says why it is a bound, and over
/// which plans.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_RECOMPUTEBOUND_H
#define REMAT_PASS_RECOMPUTEBOUND_H

#include "remat/Pass/Planner.h"

#include "absl/status/statusor.h"

#include <string>

namespace remat {

/// What the relaxation proves about the plans within `budgetBytes`.
struct RecomputeCostBound {
  /// No plan running the training graph's ops in plain autodiff's
  /// memory-aware order fits the budget.
  bool infeasible = false;
  /// No such plan recomputes less than this, in the graph's cost unit
  /// (FLOPs, or nanoseconds with measured costs).
  double bound = 0;
  /// The relaxation was solved to its optimum (or proved infeasible);
  /// otherwise it stopped at the time limit and `bound` is CBC's bound on
  /// it, lower still.
  bool solved = false;
  /// Nodes of the problem (Planning/Problem/GraphProblem.h).
  int64_t nodes = 0;
  double seconds = 0;
  /// Why the solve gave nothing back, or why the bound was not computed;
  /// `bound` is then 0.
  std::string failure;
};

/// Bounds the recompute cost of every plan of `problem`'s training graph
/// within `*problem.budgetBytes`, solving for at most `seconds`. Errors: no
/// budget.
absl::StatusOr<RecomputeCostBound>
boundRecomputeCost(const PlanningProblem &problem, double seconds);

} // namespace remat

#endif // REMAT_PASS_RECOMPUTEBOUND_H

//===- CheckmateIlp.h - Optimal rematerialization by MILP -------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The `ilp` planner's core: the MILP that finds the cheapest of Checkmate's
/// rematerialization schedules (Jain et al., MLSys 2020) within the budget on
/// COIN-OR CBC, over the problem every planner shares
/// (Planning/Problem/RematProblem.h).
/// docs/planning-ilp.md gives the formulation and the memory accounting.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_ILP_CHECKMATEILP_H
#define REMAT_PASSES_PLANNING_ILP_CHECKMATEILP_H

#include "Planning/Problem/RematProblem.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/BitVector.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace remat::ilp {

using problem::checkSchedule;
using problem::evaluateSchedule;
using problem::keepAllSchedule;
using problem::keepUntilRead;
using problem::numForward;
using problem::RematNode;
using problem::RematProblem;
using problem::RematSchedule;
using problem::ScheduleCost;
using problem::validateProblem;

/// A snapshot of the search, in cost units (FLOPs of rematerialization).
struct IlpProgress {
  double seconds = 0;
  /// Best schedule found so far; absent before the first one.
  std::optional<double> incumbent;
  /// Proven lower bound on the rematerialization cost.
  double bound = 0;
  /// (incumbent - bound) / incumbent; absent without an incumbent.
  std::optional<double> gap;
  int64_t nodes = 0;
  /// Neighbourhoods solved so far (`IlpOptions::neighborhoods`); 0 in the
  /// MILP's search.
  int64_t neighborhoods = 0;
};

/// How the MILP is solved.
struct IlpOptions {
  /// Wall-clock limit for CBC's search; the best schedule found by then is
  /// returned. CBC's preprocessing and root may overrun it; a solve still
  /// running a quarter of it (at least 5 s) later is killed, and what CBC
  /// found in it is lost (docs/planning-ilp.md#solving). Building the model
  /// is not counted.
  double timeLimitSeconds = 600;
  /// Branch-and-bound nodes CBC may explore. Unlike the time limit, it
  /// stops the search at the same point on any machine: the same problem
  /// and seed give the same schedule.
  std::optional<int64_t> maxNodes;
  /// Stop once the proven relative gap is at most this (0: prove optimality).
  double relativeGap = 0;
  /// Search the MILP where the relaxation does not settle the problem. Without
  /// it the result is the cheaper of the relaxation's rounded schedule and the
  /// warm start, with the relaxation's bound: seconds on graphs of hundreds of
  /// nodes, where the MILP's root alone may take minutes.
  bool searchMilp = true;
  /// Search windows of the start's forward nodes, each a restricted MILP
  /// (docs/planning-ilp.md#windows), instead of the whole MILP. Done
  /// anyway, with `searchMilp`, where the MILP is too large to build.
  bool neighborhoods = false;
  /// The most windows that search solves (unset: until the time limit or
  /// a sweep that improves nothing): with each window's node limit, a stop
  /// at the same point on any machine.
  std::optional<int64_t> maxNeighborhoods;
  /// A valid schedule within the budget to start from (see `checkSchedule`);
  /// returned as a `Feasible` result when CBC ends with nothing cheaper.
  std::optional<RematSchedule> warmStart;
  /// Called on each new incumbent and at most about once a second otherwise.
  std::function<void(const IlpProgress &)> onProgress;
  /// CBC's own log on stderr: 0 silent, 1 summary, higher more.
  int logLevel = 0;
  /// Seed for CBC's and CLP's randomisation; with the time limit not reached,
  /// the same problem and seed give the same schedule.
  int seed = 1;
  /// Runs in CBC's child process before each solve. Tests make it abort, as
  /// CBC's own assertions do, to show that the planner survives.
  std::function<void()> inSolverProcess;
};

enum class IlpStatusKind {
  /// The schedule is proven optimal (within `relativeGap`).
  Optimal,
  /// Stopped at the time limit with a schedule; `gap` says how far it may be.
  Feasible,
  /// No schedule fits in the budget.
  Infeasible,
  /// Stopped at the time limit before finding any schedule.
  NoSolution,
};

/// The outcome of `solveCheckmateIlp`.
struct IlpResult {
  IlpStatusKind status = IlpStatusKind::NoSolution;
  /// The schedule found, with its cost and peak as `checkSchedule` measures
  /// them; unset when `status` is Infeasible or NoSolution.
  RematSchedule schedule;
  ScheduleCost cost;
  /// Proven lower bound on `cost.recomputeCost`.
  double bestBound = 0;
  /// (recomputeCost - bestBound) / recomputeCost, 0 when both are 0.
  double gap = 0;
  /// Branch-and-bound nodes explored.
  int64_t nodes = 0;
  /// The relaxation's bound (docs/planning-ilp.md#the-lower-bound) alone
  /// settled the outcome: a schedule meets it (the warm start or the
  /// relaxation's own, rounded), or no step fits the budget. The MILP was
  /// not built.
  bool settledByBound = false;
  /// Why a CBC solve gave nothing back (it aborted, or was killed past its
  /// time limit); empty when every solve did. The result is then what the
  /// other solves and the warm start gave.
  std::string solverFailure;
  /// Why the MILP was not built though `searchMilp` asked for it: more
  /// columns than `kMaxMilpColumns` (docs/planning-ilp.md#limits). The result
  /// is then the relaxation's and the warm start's, as without `searchMilp`.
  std::string milpSkipped;
  /// Restricted MILPs solved by the neighbourhood search; 0 when it did not
  /// run.
  int64_t neighborhoods = 0;
};

/// What the relaxation of docs/planning-ilp.md#the-lower-bound proves about
/// every schedule within the budget.
struct RecomputeBound {
  /// No schedule fits the budget.
  bool infeasible = false;
  /// A lower bound on any fitting schedule's `recomputeCost`.
  double bound = 0;
  /// Wall-clock seconds spent.
  double seconds = 0;
  /// The forward nodes that the relaxation's best solution computes again
  /// in the backward pass; empty when it found none.
  llvm::BitVector recomputed;
  /// Why a CBC solve gave nothing back (`IlpResult::solverFailure`), or
  /// why the relaxation was not built.
  std::string solverFailure;
  /// `boundRecomputeCost` solved the relaxation to optimality (or proved
  /// that no schedule fits): `bound` is its optimum, not a bound on it.
  bool proven = false;
};

/// Solves the relaxation in which a forward node pays for one recomputation
/// in the backward pass however often it is needed again, within a quarter
/// of `options`' time limit (all of it without `searchMilp`) and its node
/// limit, which bounds each of its two CBC solves. Its 3F columns, F the
/// forward nodes, against the MILP's O(N^2), make it fast; it is tight when
/// the best schedule recomputes each value at most once. Problems of more
/// than 4,000 nodes get the bound 0 (its rows hold O(N^2) terms). Errors: a
/// malformed problem.
absl::StatusOr<RecomputeBound>
recomputeLowerBound(const RematProblem &problem,
                    const IlpOptions &options = {});

/// The relaxation's bound alone, for any planner's plan: its linear
/// relaxation on CLP within a quarter of `options`' time limit, then one
/// CBC solve within the rest and the node limit, started from the solution
/// that computes every forward node again, so that a solve stopped at the
/// limit still gives a bound (weaker than the optimum); the higher of the
/// two. `solverFailure` is set only where neither gives one. Built for up
/// to 20,000 nodes; above, the bound is 0 and `solverFailure` says why.
/// Errors: a malformed problem.
absl::StatusOr<RecomputeBound>
boundRecomputeCost(const RematProblem &problem, const IlpOptions &options);

/// Finds the schedule of least cost whose peak is within the budget: first
/// the relaxation (`recomputeLowerBound`) and its solution rounded to a
/// schedule, which settle the problem when that schedule fits and meets the
/// bound; otherwise the MILP on CBC (unless `searchMilp` is false), starting
/// from the cheaper of that schedule and the warm start; a problem whose
/// MILP is too large to build gets none (`IlpResult::milpSkipped`). Errors:
/// a malformed problem, a warm start that fails `checkSchedule`, or
/// (internal) a CBC solution that fails the exact check.
absl::StatusOr<IlpResult> solveCheckmateIlp(const RematProblem &problem,
                                            const IlpOptions &options = {});

} // namespace remat::ilp

#endif // REMAT_PASSES_PLANNING_ILP_CHECKMATEILP_H

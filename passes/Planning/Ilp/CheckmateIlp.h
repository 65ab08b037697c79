//===- CheckmateIlp.h - Optimal rematerialization by MILP -------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The `ilp` planner's core: an abstract training DAG with a memory budget,
/// Checkmate's rematerialization schedules over it (Jain et al., MLSys 2020),
/// a checker that validates a schedule and measures its cost and peak, and the
/// MILP that finds the cheapest schedule within the budget on COIN-OR CBC.
/// docs/planning-ilp.md gives the formulation and the memory accounting.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_ILP_CHECKMATEILP_H
#define REMAT_PASSES_PLANNING_ILP_CHECKMATEILP_H

#include "absl/status/statusor.h"
#include "llvm/ADT/BitVector.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace remat::ilp {

/// One op of the training DAG; its index in `RematProblem::nodes` is both its
/// position in the topological order and the stage that first computes it.
struct RematNode {
  /// Cost of one (re)computation, in FLOPs.
  int64_t cost = 0;
  /// Bytes of its output; 0 for a view or for an output counted in
  /// `RematProblem::constantBytes`.
  int64_t bytes = 0;
  /// The nodes it reads, each earlier in the order; duplicates are allowed.
  std::vector<int> deps;
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
  /// Why a CBC solve gave nothing back (`IlpResult::solverFailure`).
  std::string solverFailure;
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

//===- ChainDp.h - Optimal rematerialization on chains ----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The `chain` planner's core: a chain of heterogeneous stages with a memory
/// budget, the dynamic program over it (Rotor style, Beaumont et al. 2019),
/// its schedule as a sequence of operations, and the chain's training
/// DAG and R/S schedule in the terms of the ILP core, so that
/// `problem::checkSchedule` can validate and measure every DP schedule.
/// docs/planning-chain.md gives the model, the recurrence and the mapping.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_CHAIN_CHAINDP_H
#define REMAT_PASSES_PLANNING_CHAIN_CHAINDP_H

#include "Planning/Ilp/CheckmateIlp.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace remat::chain {

/// What a forward run of a stage keeps, holds while it runs and costs. A
/// run after backward i+1 (a late run) has one of its own: no op left reads
/// the stage's output, so it computes only what backward i reads and what
/// that depends on (docs/planning-chain.md#late-runs).
struct RunFootprint {
  /// What it keeps. Late: an earlier run of the stage holds this much, too,
  /// once backward i+1 has run.
  int64_t savedBytes = 0;
  /// How far it goes over its input and `savedBytes` while it runs.
  int64_t forwardBytes = 0;
  /// Its FLOPs.
  int64_t cost = 0;
};

/// A lean forward run of a stage: it keeps less than `savedBytes` for its
/// backward, which recomputes the rest of the stage's saved values itself.
struct StageRun {
  /// What the run keeps for the backward, the stage's output included.
  int64_t savedBytes = 0;
  /// The most bytes the backward's recomputations hold at once, on top of
  /// `savedBytes` (live during the backward step only).
  int64_t extraBytes = 0;
  /// Forward FLOPs the backward runs again.
  int64_t extraCost = 0;
  /// How far the run goes over its input and `savedBytes` while it runs:
  /// the values it drops and the stage's temporaries, each until its last
  /// forward reader.
  int64_t forwardBytes = 0;
  /// The run as a late run; none: the same as the run.
  std::optional<RunFootprint> late;
};

/// One stage of the chain: it reads the previous stage's output (the chain's
/// input, a constant, for stage 0) and its backward turns the gradient of its
/// output into the gradient of its input.
struct ChainStage {
  /// Cost of one forward run of the stage, in FLOPs.
  int64_t forwardCost = 0;
  /// Cost of its backward, run exactly once.
  int64_t backwardCost = 0;
  /// Bytes of its output, the value passed to the next stage (a_i). The last
  /// stage's output is the loss, which nothing reads; it is not modelled.
  int64_t outputBytes = 0;
  /// Bytes of what its backward reads besides its input and the incoming
  /// gradient: the activations a forward run keeps for it (x-bar_i).
  int64_t savedBytes = 0;
  /// Bytes of the gradient of its input, its backward's result.
  int64_t gradientBytes = 0;
  /// Bytes of the parameter gradients its backward makes: live from that
  /// backward to the end of the schedule.
  int64_t paramGradientBytes = 0;
  /// Alternatives to keeping `savedBytes`: run r > 0 of a `Forward` op is
  /// `leanRuns[r - 1]` (docs/planning-chain.md#lean-runs).
  std::vector<StageRun> leanRuns;
  /// How far a full forward run goes over its input and `savedBytes` while
  /// it runs: values that no later stage reads and no backward keeps (a
  /// matmul's output before its bias add), each until its last reader.
  int64_t forwardTempBytes = 0;
  /// How far its backward goes over what it reads and makes while it runs:
  /// gradients it makes and reads itself (of a layer's output, before the
  /// activation's backward turns it into the one it hands on).
  int64_t backwardTempBytes = 0;
  /// A full run as a late run; none: the same as the run. Ignored for the
  /// last stage, whose every run computes the loss.
  std::optional<RunFootprint> late;
};

/// A chain of stages and a budget, like `problem::RematProblem`.
struct ChainProblem {
  std::vector<ChainStage> stages;
  /// Bytes live throughout: params, the chain's input, and the parameter
  /// gradients that no stage's backward makes.
  int64_t constantBytes = 0;
  /// The most bytes any step may hold, `constantBytes` included.
  int64_t budgetBytes = 0;
};

/// An error when `problem` has no stage, a negative cost or size, or cost or
/// byte totals that could overflow int64.
absl::Status validateChain(const ChainProblem &problem);

enum class ChainOpKind {
  /// Runs stage i's forward from its input (the output of stage i-1) and
  /// holds its saved activations; costs `forwardCost`.
  Forward,
  /// Takes stage i's output from its saved activations; free.
  Output,
  /// Stage i's backward: reads the incoming gradient, the saved activations
  /// and the input; costs `backwardCost`.
  Backward,
};

/// One computation of a schedule.
struct ChainOp {
  ChainOpKind kind = ChainOpKind::Forward;
  int stage = 0;
  /// The index in `ChainSchedule::ops` of the last op that reads this result
  /// (its own index when none does): the result is freed right after it.
  int lastUse = 0;
  /// For Forward: 0 keeps `savedBytes`, r > 0 is `leanRuns[r - 1]`.
  int run = 0;

  friend bool operator==(const ChainOp &, const ChainOp &) = default;
};

/// A schedule: the ops in execution order. The first ops are one forward
/// pass; before each backward come the recomputations it needs, in stage
/// order. Its size is the number of computations, never L x L bits.
struct ChainSchedule {
  std::vector<ChainOp> ops;
};

/// Sets every op's `lastUse` to the last op that reads its result before the
/// next computation of the same value: each result freed as early as it can.
void setLastUses(int numStages, ChainSchedule &schedule);

/// What a valid schedule costs, as `problem::ScheduleCost`.
struct ChainCost {
  /// Sum of the costs of every op.
  int64_t cost = 0;
  /// `cost` less one forward and one backward run of every stage.
  int64_t recomputeCost = 0;
  /// The most bytes live at any op, `constantBytes` included.
  int64_t peakBytes = 0;
};

/// Cost and peak of `schedule` (results live from their op to `lastUse`),
/// ignoring the budget; an error names the first op that reads a value not
/// in memory or runs out of order.
absl::StatusOr<ChainCost> evaluateChainSchedule(const ChainProblem &problem,
                                                const ChainSchedule &schedule);

/// How the DP discretises memory and how much it may allocate.
struct DpOptions {
  /// Bytes per memory slot. Sizes are rounded up to slots and the budget
  /// down, so a schedule always fits; 0 picks the gcd of all sizes (exact),
  /// or coarser slots when that would need more than `maxSlots`.
  int64_t slotBytes = 0;
  /// With `slotBytes` 0: the most slots the budget left after the constants
  /// is cut into (time and memory grow linearly with it).
  int64_t maxSlots = 1000;
  /// With `slotBytes` 0 and coarser slots than the gcd: fit the slot to the
  /// chain's sizes (the bound, a multiple of the gcd or a divisor of a large
  /// size, whichever rounds away the fewest bytes) rather than taking
  /// `ceil(available / maxSlots)`.
  bool fitSlots = true;
  /// The most table cells (8 bytes each) the DP may allocate; above it the
  /// DP is refused with an error rather than running out of memory.
  int64_t maxCells = int64_t(1) << 26;
};

enum class ChainStatusKind {
  /// The schedule is the cheapest of those the DP searches, on slot-rounded
  /// sizes (the true ones when `exact`). docs/planning-chain.md says which
  /// schedules it does not search and how often that costs.
  Optimal,
  /// None of those schedules fits (with slot-rounded sizes).
  Infeasible,
};

/// The outcome of `solveChainDp`.
struct ChainResult {
  ChainStatusKind status = ChainStatusKind::Infeasible;
  /// The schedule and its exact cost and peak; empty when Infeasible.
  ChainSchedule schedule;
  ChainCost cost;
  /// The slot size used, and whether it divides every size, so that
  /// rounding sizes up and the budget down changed nothing.
  int64_t slotBytes = 1;
  bool exact = false;
};

/// The cheapest schedule within the budget that the DP searches, by dynamic
/// programming over (first stage, last stage, how the input is obtained,
/// pending and left backwards, free slots): O(L^2 * slots) cells and
/// O(L^3 * slots) time, times the few runs a stage offers. Among the
/// cheapest it returns one of least peak. Errors: a malformed problem, a
/// table over `maxCells`.
absl::StatusOr<ChainResult> solveChainDp(const ChainProblem &problem,
                                         const DpOptions &options = {});

/// The schedule of least peak among those the DP searches within
/// `problem.budgetBytes` (a budget that admits them all, such as every
/// size summed), the cheapest at that peak: for when the budget wanted
/// admits none. Infeasible only when nothing fits that budget either.
absl::StatusOr<ChainResult>
solveChainDpLowestPeak(const ChainProblem &problem,
                       const DpOptions &options = {});

/// The chain's training DAG (docs/planning-chain.md): per stage a Forward
/// node (its saved activations) and, but for the last stage, an Output
/// node; then the Backward nodes from the last stage to the first, each
/// stage with parameter gradients preceded by a node of their bytes that
/// the last Backward reads (so they live from there to the end).
problem::RematProblem toRematProblem(const ChainProblem &problem);

/// The DAG node that `op` computes.
int dagNode(int numStages, ChainOpKind kind, int stage);

/// `schedule` as Checkmate's R and S matrices over `toRematProblem`: each
/// recomputation in the stage of the backward that follows it (of its
/// parameter gradients' node, when it has one), each result resident from
/// its op's stage until its last reader's. An error for lean runs and for
/// stages whose backward does not read their output: the DAG has no node
/// for either.
absl::StatusOr<problem::RematSchedule>
toRematSchedule(const ChainProblem &problem, const ChainSchedule &schedule);

} // namespace remat::chain

#endif // REMAT_PASSES_PLANNING_CHAIN_CHAINDP_H

//===- ApBaselines.h - Checkmate's AP-sqrtn and AP-greedy -------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The baselines of Checkmate's evaluation over the ILP core's training DAG:
/// checkpoints among the forward DAG's cut nodes, every sqrt(k)-th of them
/// or greedily by accumulated bytes (Chen et al. 2016), and the segment
/// schedule that keeps the checkpoints and recomputes every other forward
/// value once, segment by segment, before the first backward that reads it.
/// docs/planning-chain.md describes them.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_APBASELINES_H
#define REMAT_PASSES_PLANNING_APBASELINES_H

#include "Planning/Ilp/CheckmateIlp.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <vector>

namespace remat::chain {

/// The most nodes the planners build baseline schedules for: R and S take
/// N^2 bits each (100 MB at this size) and every trial of the greedy sweep
/// O(N^2) time.
inline constexpr size_t kMaxBaselineNodes = 20000;

/// Forward nodes that no forward edge jumps over: every path from an earlier
/// forward node to a later one runs through them, so they bound segments in
/// index order. In index order; the last forward node is never one.
std::vector<int> cutNodes(const problem::RematProblem &problem);

/// Keeps `checkpoints` (forward nodes, increasing) resident until their last
/// reader; drops every other forward value after its last forward reader and
/// recomputes the segment of forward nodes after each checkpoint (up to the
/// next), all at once, at the first backward stage that reads one of them,
/// keeping each until its last backward reader. Valid when every forward
/// edge into a segment comes from the segment or its checkpoint: true when
/// the checkpoints are cut nodes.
problem::RematSchedule segmentSchedule(const problem::RematProblem &problem,
                                   llvm::ArrayRef<int> checkpoints);

/// AP-sqrtn: every ceil(sqrt(k))-th of the k cut nodes.
std::vector<int> sqrtnCheckpoints(const problem::RematProblem &problem);

/// AP-greedy: walks the forward nodes accumulating their bytes and makes a
/// checkpoint of the first cut node at which the total since the last one
/// exceeds `segmentBytes`.
std::vector<int> greedyCheckpoints(const problem::RematProblem &problem,
                                   int64_t segmentBytes);

/// A baseline's schedule, its cost and peak, and whether it fits the budget.
struct BaselineSchedule {
  problem::RematSchedule schedule;
  problem::ScheduleCost cost;
  bool fits = false;
};

/// AP-sqrtn's segment schedule. Errors (internal) when the schedule fails
/// the checker, which segments between cut nodes never do.
absl::StatusOr<BaselineSchedule>
sqrtnSchedule(const problem::RematProblem &problem);

/// One choice of AP-greedy's parameter: its checkpoints and what their
/// segment schedule costs and holds, whatever the budget.
struct GreedyTrial {
  std::vector<int> checkpoints;
  problem::ScheduleCost cost;
};

/// Checkmate's sweep of AP-greedy's parameter over the prefix totals of the
/// forward bytes: at most `maxTrials` of the distinct choices, evenly
/// spaced, as each trial costs O(N^2). Errors as `sqrtnSchedule`.
absl::StatusOr<std::vector<GreedyTrial>>
greedyTrials(const problem::RematProblem &problem, int maxTrials = 64);

/// Of `trials` (not empty), the cheapest within `budgetBytes`, or, when
/// none fits, the one of lowest peak; the first of equals. Its schedule is
/// built again: O(N^2), as one trial.
BaselineSchedule bestGreedyTrial(const problem::RematProblem &problem,
                                 llvm::ArrayRef<GreedyTrial> trials,
                                 int64_t budgetBytes);

/// `bestGreedyTrial` of `greedyTrials` at the problem's budget.
absl::StatusOr<BaselineSchedule>
greedySweep(const problem::RematProblem &problem, int maxTrials = 64);

/// `greedySweep`'s schedule with its cost when it fits; nullopt otherwise.
std::optional<std::pair<problem::RematSchedule, problem::ScheduleCost>>
bestGreedySchedule(const problem::RematProblem &problem);

/// The cheapest of `greedySweep` and `sqrtnSchedule` that fits, with the
/// baseline's name; nullopt when neither does. Errors as `sqrtnSchedule`.
absl::StatusOr<std::optional<std::pair<BaselineSchedule, const char *>>>
bestBaselineSchedule(const problem::RematProblem &problem);

} // namespace remat::chain

#endif // REMAT_PASSES_PLANNING_APBASELINES_H

//===- ApBaselines.cpp - Checkmate's AP-sqrtn and AP-greedy ---------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "ApBaselines.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>

namespace remat::chain {

/// Within the budget beats over it; then the cheaper, or over it the lower
/// peak.
static bool isBetter(bool fits, const problem::ScheduleCost &cost,
                     bool bestFits, const problem::ScheduleCost &best) {
  if (fits != bestFits)
    return fits;
  return fits ? cost.cost < best.cost : cost.peakBytes < best.peakBytes;
}

std::vector<int> cutNodes(const problem::RematProblem &problem) {
  int numFwd = problem::numForward(problem);
  // jumps[v]: forward edges u -> w with u < v < w, by a difference array.
  std::vector<int> jumps(numFwd + 1, 0);
  for (int w = 0; w < numFwd; ++w)
    for (int u : problem.nodes[w].deps)
      if (w - u >= 2) {
        ++jumps[u + 1];
        --jumps[w];
      }
  std::vector<int> cuts;
  for (int v = 0, open = 0; v + 1 < numFwd; ++v) {
    open += jumps[v];
    if (open == 0)
      cuts.push_back(v);
  }
  return cuts;
}

problem::RematSchedule segmentSchedule(const problem::RematProblem &problem,
                                   llvm::ArrayRef<int> checkpoints) {
  int n = int(problem.nodes.size());
  int numFwd = problem::numForward(problem);
  // Segment g: the forward nodes after checkpoint g-1 up to checkpoint g.
  std::vector<int> segment(numFwd, -1);
  for (int i = 0, g = 0; i < numFwd; ++i) {
    if (g < int(checkpoints.size()) && checkpoints[g] == i) {
      ++g;
      continue;
    }
    segment[i] = g;
  }
  int numSegments = int(checkpoints.size()) + 1;
  std::vector<int> firstBackwardReader(n, n);
  for (int k = numFwd; k < n; ++k)
    for (int dep : problem.nodes[k].deps)
      firstBackwardReader[dep] = std::min(firstBackwardReader[dep], k);
  // Each segment is run again at the first backward stage that reads it,
  // unless that is the first backward stage: then it is simply kept.
  std::vector<int> rerunAt(numSegments, n);
  for (int i = 0; i < numFwd; ++i)
    if (segment[i] >= 0)
      rerunAt[segment[i]] =
          std::min(rerunAt[segment[i]], firstBackwardReader[i]);

  problem::RematSchedule schedule = problem::RematSchedule::empty(n);
  for (int i = 0; i < n; ++i) {
    schedule.compute[i].set(i);
    if (i < numFwd && segment[i] >= 0 && rerunAt[segment[i]] < n &&
        rerunAt[segment[i]] > numFwd)
      schedule.compute[rerunAt[segment[i]]].set(i);
  }
  // Checkpoints stay until their segments run again, the rest until their
  // last forward reader and then from their copy to their last reader.
  problem::keepUntilRead(problem, schedule);
  return schedule;
}

std::vector<int> sqrtnCheckpoints(const problem::RematProblem &problem) {
  std::vector<int> cuts = cutNodes(problem);
  std::vector<int> checkpoints;
  if (cuts.empty())
    return checkpoints;
  int step = int(std::ceil(std::sqrt(double(cuts.size()))));
  for (int j = step - 1; j < int(cuts.size()); j += step)
    checkpoints.push_back(cuts[j]);
  return checkpoints;
}

std::vector<int> greedyCheckpoints(const problem::RematProblem &problem,
                                   int64_t segmentBytes) {
  std::vector<int> cuts = cutNodes(problem);
  std::vector<int> checkpoints;
  int64_t accumulated = 0;
  for (int cut = 0, i = 0; cut < int(cuts.size()); ++cut) {
    for (; i <= cuts[cut]; ++i)
      accumulated += problem.nodes[i].bytes;
    if (accumulated > segmentBytes) {
      checkpoints.push_back(cuts[cut]);
      accumulated = 0;
    }
  }
  return checkpoints;
}

/// `checkpoints`' segment schedule, measured against the budget.
static absl::StatusOr<BaselineSchedule>
measuredSegmentSchedule(const problem::RematProblem &problem,
                        llvm::ArrayRef<int> checkpoints) {
  BaselineSchedule result;
  result.schedule = segmentSchedule(problem, checkpoints);
  absl::StatusOr<problem::ScheduleCost> cost =
      problem::evaluateSchedule(problem, result.schedule);
  if (!cost.ok())
    return absl::InternalError(
        fmt::format("ap segment schedule: {}",
                    std::string(cost.status().message())));
  result.cost = *cost;
  result.fits = cost->peakBytes <= problem.budgetBytes;
  return result;
}

absl::StatusOr<BaselineSchedule>
sqrtnSchedule(const problem::RematProblem &problem) {
  return measuredSegmentSchedule(problem, sqrtnCheckpoints(problem));
}

absl::StatusOr<std::vector<GreedyTrial>>
greedyTrials(const problem::RematProblem &problem, int maxTrials) {
  // The checkpoints change only where the running total crosses the
  // parameter: the prefix totals of the forward bytes give every choice.
  // Each choice costs O(N) and each trial O(N^2): the distinct choices are
  // all found, and at most `maxTrials` of them tried.
  std::vector<std::vector<int>> choices;
  int64_t total = 0;
  for (int i = -1, e = problem::numForward(problem); i < e; ++i) {
    if (i >= 0)
      total += problem.nodes[i].bytes;
    std::vector<int> checkpoints = greedyCheckpoints(problem, total);
    if (choices.empty() || checkpoints != choices.back())
      choices.push_back(std::move(checkpoints));
  }
  size_t count = std::min(choices.size(), size_t(std::max(maxTrials, 1)));
  std::vector<GreedyTrial> trials;
  trials.reserve(count);
  for (size_t j = 0; j < count; ++j) {
    // Evenly spaced, both ends included.
    size_t index = count == 1 ? 0 : j * (choices.size() - 1) / (count - 1);
    REMAT_ASSIGN_OR_RETURN(BaselineSchedule measured,
                           measuredSegmentSchedule(problem, choices[index]));
    trials.push_back({std::move(choices[index]), measured.cost});
  }
  return trials;
}

BaselineSchedule bestGreedyTrial(const problem::RematProblem &problem,
                                 llvm::ArrayRef<GreedyTrial> trials,
                                 int64_t budgetBytes) {
  assert(!trials.empty() && "the sweep tries at least one choice");
  auto fits = [&](const GreedyTrial &trial) {
    return trial.cost.peakBytes <= budgetBytes;
  };
  const GreedyTrial *best = &trials.front();
  for (const GreedyTrial &trial : trials.drop_front())
    if (isBetter(fits(trial), trial.cost, fits(*best), best->cost))
      best = &trial;
  return {segmentSchedule(problem, best->checkpoints), best->cost,
          fits(*best)};
}

absl::StatusOr<BaselineSchedule> greedySweep(const problem::RematProblem &problem,
                                             int maxTrials) {
  REMAT_ASSIGN_OR_RETURN(std::vector<GreedyTrial> trials,
                         greedyTrials(problem, maxTrials));
  return bestGreedyTrial(problem, trials, problem.budgetBytes);
}

std::optional<std::pair<problem::RematSchedule, problem::ScheduleCost>>
bestGreedySchedule(const problem::RematProblem &problem) {
  absl::StatusOr<BaselineSchedule> best = greedySweep(problem);
  if (!best.ok() || !best->fits)
    return std::nullopt;
  return std::make_pair(std::move(best->schedule), best->cost);
}

absl::StatusOr<std::optional<std::pair<BaselineSchedule, const char *>>>
bestBaselineSchedule(const problem::RematProblem &problem) {
  REMAT_ASSIGN_OR_RETURN(BaselineSchedule greedy, greedySweep(problem));
  REMAT_ASSIGN_OR_RETURN(BaselineSchedule sqrtn, sqrtnSchedule(problem));
  std::optional<std::pair<BaselineSchedule, const char *>> best;
  if (greedy.fits)
    best.emplace(std::move(greedy), "ap-greedy");
  if (sqrtn.fits && (!best || sqrtn.cost.cost < best->first.cost.cost))
    best.emplace(std::move(sqrtn), "ap-sqrtn");
  return best;
}

} // namespace remat::chain

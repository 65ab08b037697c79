//===- Sweep.cpp - The memory/overhead curve of the plans -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `remat opt --sweep`: every plan of the budget search but those made for
/// one budget, plus the planners that plan for one budget (but the ILP) at a
/// few budgets across the range, built on copies and reduced to the plans no
/// other beats on both peak and recompute.
///
//===----------------------------------------------------------------------===//

#include "Training/BudgetSearch.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

namespace remat {
namespace {

/// The budgets, in percent of plain autodiff's peak, at which the sweep
/// plans with the planners that plan for one budget, and the calibration
/// builds of each.
constexpr int kSweepBudgetPercents[] = {20, 35, 50, 65, 80};
constexpr int kSweepCalibrationRounds = 3;

} // namespace

absl::StatusOr<SweepReport> sweepTrainingPlans(const Graph &graph,
                                               const TrainingOptions &options) {
  // The plans of the budget search but the ILP, which plans for one budget.
  // Plain autodiff's peak, a budget every plan may use, lets `memory` fall
  // back to plain autodiff where it finds no bottleneck. Ids renumbered as
  // the budget search has them, so that both plan alike.
  std::unique_ptr<Graph> differentiated = graph.clone();
  BudgetSearch search(options, {.trySummed = true, .keepPlainGraph = false});
  REMAT_RETURN_IF_ERROR(search.differentiate(*differentiated));
  int64_t plainPeak = search.plainPeakBytes();
  const PlannerRegistry &planners = options.plannerRegistry();
  std::vector<std::string> unbudgeted =
      BudgetSearch::autoCandidates(graph, planners, CandidateSet::Sweep);
  std::vector<std::string> budgeted =
      BudgetSearch::autoCandidates(graph, planners, CandidateSet::SweepBudgets);
  std::vector<Trial> trials;
  // Every plan of one base, labelled with its label: plain autodiff, the
  // planners that take no budget, then those that plan for one (the DP,
  // XLA's pass, the min-cut, the AP baselines) at a few budgets across the
  // range, the calibrated ones in fewer builds than a single budget gets.
  auto tryAll = [&](int base) -> absl::Status {
    trials.push_back(search.takePlain(base));
    for (const std::string &planner : unbudgeted) {
      if (planner == "none")
        continue;
      REMAT_ASSIGN_OR_RETURN(Trial trial,
                             search.tryPlanner(base, {.planner = planner,
                                                      .budget = plainPeak,
                                                      .keepGraph = false}));
      trials.push_back(std::move(trial));
    }
    for (int percent : kSweepBudgetPercents)
      for (const std::string &planner : budgeted) {
        REMAT_ASSIGN_OR_RETURN(
            Trial trial,
            search.tryForBudget(base,
                                {.planner = planner,
                                 .budget = plainPeak / 100 * percent,
                                 .rounds = kSweepCalibrationRounds,
                                 .keepGraph = false}));
        trials.push_back(std::move(trial));
      }
    return absl::OkStatus();
  };
  // The options' own graph first, then summed at once where that lowers
  // plain autodiff's peak, as the budget search has them.
  for (int base = search.numBases() - 1; base >= 0; --base) {
    size_t first = trials.size();
    REMAT_RETURN_IF_ERROR(tryAll(base));
    for (size_t i = first; i < trials.size(); ++i)
      trials[i].planner += search.label(base);
  }
  SweepReport sweep;
  sweep.graph = graph.name().str();
  sweep.measuredCosts =
      options.measuredCosts != nullptr || options.costAttributesAreNanoseconds;
  sweep.peakBytesPlain = trials.front().peakBytes;
  if (search.floor())
    sweep.peakFloorBytes = search.floor()->bytes;
  sweep.plansTried = int64_t(trials.size());
  // By rising peak, then falling cost, then the order tried; a plan stays
  // when it recomputes less than every plan of a lower peak.
  std::stable_sort(trials.begin(), trials.end(),
                   [](const Trial &a, const Trial &b) {
                     if (a.peakBytes != b.peakBytes)
                       return a.peakBytes < b.peakBytes;
                     return a.flopsRecompute < b.flopsRecompute;
                   });
  for (const Trial &trial : trials)
    if (sweep.points.empty() ||
        trial.flopsRecompute < sweep.points.back().flopsRecompute)
      sweep.points.push_back({trial.planner, trial.peakBytes,
                              trial.flopsRecompute, trial.overhead});
  return sweep;
}

} // namespace remat

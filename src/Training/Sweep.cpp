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

#include "Training/BudgetTrials.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

namespace remat {

using namespace budget;

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
  REMAT_ASSIGN_OR_RETURN(SearchBases bases,
                         makeSearchBases(*differentiated, options,
                                         /*trySummed=*/true,
                                         /*keepPlainGraph=*/false));
  int64_t plainPeak = bases.own().plain->peakBytes;
  std::vector<Trial> trials;
  SweepReport sweep;
  // Every plan of one base, labelled with its label, but plain autodiff.
  auto tryAll = [&](const SearchBase &from) -> absl::Status {
    for (const std::string &strategy :
         autoCandidates(graph, options.plannerRegistry(), CandidateSet::Sweep)) {
      if (strategy == "none")
        continue;
      REMAT_ASSIGN_OR_RETURN(Trial trial,
                             tryStrategy(from.graph, from.options,
                                         {.planner = strategy,
                                          .budget = plainPeak,
                                          .keepGraph = false}));
      trial.planner += from.label;
      trials.push_back(std::move(trial));
    }
    // The planners that plan for one budget (the DP, XLA's pass, the
    // min-cut, the AP baselines) at a few budgets across the range, the
    // calibrated ones in fewer builds than a single budget gets.
    for (int percent : kSweepBudgetPercents) {
      int64_t budget = plainPeak / 100 * percent;
      for (const std::string &strategy :
           autoCandidates(graph, options.plannerRegistry(),
                          CandidateSet::SweepBudgets)) {
        REMAT_ASSIGN_OR_RETURN(Trial trial,
                               tryForBudget(from.graph, from.options,
                                            {.planner = strategy,
                                             .budget = budget,
                                             .rounds = kSweepCalibrationRounds,
                                             .keepGraph = false}));
        trial.planner += from.label;
        trials.push_back(std::move(trial));
      }
    }
    return absl::OkStatus();
  };
  // The options' own graph first, then summed at once where that lowers
  // plain autodiff's peak, as the budget search has them.
  for (const std::unique_ptr<SearchBase> &from : llvm::reverse(bases.bases)) {
    trials.push_back(std::move(*from->plain));
    trials.back().planner += from->label;
    REMAT_RETURN_IF_ERROR(tryAll(*from));
  }
  sweep.graph = graph.name().str();
  sweep.measuredCosts =
      options.measuredCosts != nullptr || options.costAttributesAreNanoseconds;
  sweep.peakBytesPlain = trials.front().peakBytes;
  if (bases.floor)
    sweep.peakFloorBytes = bases.floor->bytes;
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

//===- TrainingSweep.cpp - The memory/overhead curve of the plans ---------===//
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

#include "Pass/BudgetTrials.h"

#include "remat/Analysis/PeakFloor.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

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
  std::unique_ptr<Graph> summedGraph;
  if (options.searchAggregation && options.finalPipeline.empty() &&
      aggregationMayMatter(*differentiated, options))
    summedGraph = differentiated->clone(Graph::CloneIds::Keep);
  REMAT_ASSIGN_OR_RETURN(DifferentiatedGraph base,
                         differentiateOnce(*differentiated, options));
  std::optional<Trial> plain = unbuiltPlainTrial(base, options);
  if (!plain) {
    REMAT_ASSIGN_OR_RETURN(plain,
                           tryStrategy(base, options, "none", std::nullopt,
                                       /*keepGraph=*/false));
  }
  int64_t plainPeak = plain->peakBytes;
  std::vector<Trial> trials;
  trials.push_back(std::move(*plain));
  SweepReport sweep;
  // Every plan of one base, labelled with `label`, but plain autodiff.
  auto tryAll = [&](const DifferentiatedGraph &from,
                    const TrainingOptions &fromOptions,
                    llvm::StringRef label) -> absl::Status {
    for (const std::string &strategy :
         autoCandidates(graph, CandidateSet::Sweep)) {
      if (strategy == "none")
        continue;
      REMAT_ASSIGN_OR_RETURN(Trial trial,
                             tryStrategy(from, fromOptions, strategy, plainPeak,
                                         /*keepGraph=*/false));
      trial.strategy += label;
      trials.push_back(std::move(trial));
    }
    // The planners that plan for one budget (the DP, XLA's pass, the
    // min-cut, the AP baselines) at a few budgets across the range, the
    // calibrated ones in fewer builds than a single budget gets. Not the
    // ILP: seconds a solve.
    for (int percent : kSweepBudgetPercents) {
      int64_t budget = plainPeak / 100 * percent;
      for (const std::string &strategy :
           autoCandidates(graph, CandidateSet::AtLowestPeak)) {
        if (llvm::StringRef(strategy).startswith("ilp"))
          continue;
        REMAT_ASSIGN_OR_RETURN(Trial trial,
                               tryForBudget(from, fromOptions, strategy, budget,
                                            kSweepCalibrationRounds,
                                            /*keepGraph=*/false));
        trial.strategy += label;
        trials.push_back(std::move(trial));
      }
    }
    return absl::OkStatus();
  };
  REMAT_RETURN_IF_ERROR(tryAll(base, options, ""));
  // The same plans with partial gradients summed at once, where that lowers
  // plain autodiff's peak, as the budget search has them.
  if (summedGraph) {
    TrainingOptions summedOptions = options;
    summedOptions.autodiff = summedAtOnce(options.autodiff);
    REMAT_ASSIGN_OR_RETURN(DifferentiatedGraph summed,
                           differentiateOnce(*summedGraph, summedOptions));
    std::optional<Trial> summedPlain = unbuiltPlainTrial(summed, summedOptions);
    if (summedPlain->peakBytes < plainPeak) {
      summedPlain->strategy += kSummedAtOnce;
      trials.push_back(std::move(*summedPlain));
      REMAT_RETURN_IF_ERROR(tryAll(summed, summedOptions, kSummedAtOnce));
      REMAT_ASSIGN_OR_RETURN(
          PeakFloor floor,
          computePeakFloor(*summedGraph, summed.forwardOpIdBound));
      sweep.peakFloorBytes = floor.bytes;
    }
  }
  sweep.graph = graph.name().str();
  sweep.measuredCosts = options.measuredCosts != nullptr;
  sweep.peakBytesPlain = trials.front().peakBytes;
  if (options.finalPipeline.empty()) {
    REMAT_ASSIGN_OR_RETURN(
        PeakFloor floor,
        computePeakFloor(*differentiated, base.forwardOpIdBound));
    sweep.peakFloorBytes =
        std::min(sweep.peakFloorBytes.value_or(floor.bytes), floor.bytes);
  }
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
      sweep.points.push_back({trial.strategy, trial.peakBytes,
                              trial.flopsRecompute, trial.overhead});
  return sweep;
}

} // namespace remat

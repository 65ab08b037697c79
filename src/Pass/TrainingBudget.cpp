//===- TrainingBudget.cpp - Plans searched within a memory budget ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A plan is judged by what matters: the simulated peak of its final,
/// scheduled training graph, built on a copy of the forward graph. The
/// search is exact about memory (the plan returned is never over the budget
/// when any plan tried reaches it) but not about cost: it tries plain
/// autodiff, the `chain` DP, memory-balanced segmentations `sqrtn=K` for K
/// in a geometric series, and `all`, and keeps the one with the least
/// recompute FLOPs. The chain planner plans against a model of memory; the
/// search shifts the budget it gives it by what the model missed.
///
//===----------------------------------------------------------------------===//

#include "Pass/TrainingInternal.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Stopwatch.h"
#include "remat/Support/Units.h"

#include <fmt/format.h>

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace remat {
namespace {

/// What one candidate plan costs once built.
struct Trial {
  std::string strategy;
  int64_t peakBytes = 0;
  int64_t flopsRecompute = 0;
  double overhead = 0;
  /// The budget the planner was told, when not the search's own.
  std::optional<int64_t> plannerBudget;
  /// How many graphs were built to get here.
  int builds = 1;
  /// The training graph built (not yet verified) and its report, kept
  /// while the trial may be the one returned.
  TrainingBuild build;
};

/// Graphs of at most this many ops also get the `ilp` planner, limited to
/// `kIlpSeconds`: CBC proves such optima in about a second
/// (docs/planners.md), and beats every kept-value plan where a budget needs
/// a value recomputed more than once.
constexpr int64_t kIlpOpLimit = 24;

/// Graphs of at most this many ops also get Checkmate's baselines, whose
/// R and S matrices cost O(nodes^2): a few seconds at this size.
constexpr int64_t kApOpLimit = 5000;
constexpr int kIlpSeconds = 10;

/// `auto` stops building candidates once they have built this many ops in
/// all: a planning-time limit that keeps the output deterministic. About 8
/// builds of a million-op graph; every candidate below about 100k ops.
constexpr int64_t kSearchOpBudget = 8'000'000;

/// The strategies `auto` tries, most promising first: plain autodiff, for
/// one budget the `chain` DP, `sqrtn` and `memory` as they choose, K = 1,
/// 2, 3, 4, 6, 9, 13, ... (ratio 3/2) memory-balanced segments up to the op
/// count, recomputing everything, and for one budget the DP with parameter
/// gradients counted late (`chain=late`), XLA's and PyTorch's passes
/// (`xla`, `mincut`), Checkmate's baselines and, on small graphs, the ILP.
/// O(log ops) plans.
std::vector<std::string> autoCandidates(const Graph &graph,
                                        bool forOneBudget) {
  // The rule-based planners' own choices early, so that `auto` is never
  // worse than them at the same budget. The DP and the ILP plan for one
  // budget.
  std::vector<std::string> strategies = {"none"};
  if (forOneBudget)
    strategies.push_back("chain");
  llvm::append_range(strategies, std::vector<std::string>{"sqrtn", "memory"});
  int64_t limit = int64_t(graph.numOps());
  for (int64_t k = 1; k <= limit; k = std::max(k + 1, k + k / 2))
    strategies.push_back(fmt::format("sqrtn={}", k));
  strategies.push_back("all");
  if (forOneBudget)
    llvm::append_range(strategies, std::vector<std::string>{"chain=late",
                                                            "xla", "mincut"});
  if (forOneBudget && limit <= kApOpLimit)
    llvm::append_range(strategies,
                       std::vector<std::string>{"ap-sqrtn", "ap-greedy"});
  if (forOneBudget && limit <= kIlpOpLimit)
    strategies.push_back(fmt::format("ilp={}", kIlpSeconds));
  return strategies;
}

/// At most this many builds calibrate a modelled planner's budget.
constexpr int kCalibrationRounds = 8;

/// The budgets, in percent of plain autodiff's peak, at which the sweep
/// plans with the chain DP, and its calibration builds for each.
constexpr int kSweepChainPercents[] = {20, 35, 50, 65, 80};
constexpr int kSweepCalibrationRounds = 3;

/// Whether `strategy` plans against its own model of memory (`chain`), so
/// that the budget it is told may be shifted to land the built graph's
/// simulated peak within the real one.
bool isModelledPlanner(llvm::StringRef strategy) {
  return strategy == "chain" || strategy.startswith("chain=");
}

/// Whether `candidate` is a better choice than `best` within `budget`:
/// within the budget beats over it; among plans within it the fewer
/// recompute FLOPs, then the lower peak; among plans over it the lower peak.
/// Earlier candidates win ties, so the choice is deterministic.
bool isBetter(const Trial &candidate, const Trial &best, int64_t budget) {
  bool fits = candidate.peakBytes <= budget, bestFits = best.peakBytes <= budget;
  if (fits != bestFits)
    return fits;
  if (fits && candidate.flopsRecompute != best.flopsRecompute)
    return candidate.flopsRecompute < best.flopsRecompute;
  return candidate.peakBytes < best.peakBytes;
}

/// Builds `strategy` on a copy of `base`; the trial keeps the graph when
/// `keepGraph`.
absl::StatusOr<Trial> tryStrategy(const DifferentiatedGraph &base,
                                  const TrainingOptions &options,
                                  const std::string &strategy,
                                  std::optional<int64_t> budget = {},
                                  bool keepGraph = true) {
  TrainingOptions trial = options;
  trial.strategy = strategy;
  REMAT_ASSIGN_OR_RETURN(
      TrainingBuild build,
      buildFromDifferentiated(base, trial, budget, /*verify=*/false));
  Trial result{strategy, build.report.planPeakBytes(),
               build.report.flopsRecompute, build.report.overhead};
  if (keepGraph)
    result.build = std::move(build);
  return result;
}

/// Builds the modelled planner `strategy` at budgets shifted by what its
/// model missed, bracketing the largest told budget whose graph fits, and
/// returns the best trial. A few builds, each O(graph).
absl::StatusOr<Trial> tryCalibrated(const DifferentiatedGraph &base,
                                    const TrainingOptions &options,
                                    const std::string &strategy,
                                    int64_t budget,
                                    int rounds = kCalibrationRounds,
                                    bool keepGraph = true) {
  std::optional<Trial> best;
  // Told budgets known to fit (lo) and known to overshoot (hi).
  int64_t lo = 0, hi = std::numeric_limits<int64_t>::max();
  int64_t told = budget;
  for (int round = 0; round < rounds; ++round) {
    REMAT_ASSIGN_OR_RETURN(
        Trial trial, tryStrategy(base, options, strategy, told, keepGraph));
    trial.plannerBudget = told;
    // The same plan again (a model that admits nothing cheaper or smaller)
    // will not move.
    bool same = best && trial.peakBytes == best->peakBytes &&
                trial.flopsRecompute == best->flopsRecompute;
    int64_t peak = trial.peakBytes, flops = trial.flopsRecompute;
    if (!best || isBetter(trial, *best, budget))
      best = std::move(trial);
    best->builds = round + 1;
    if (same)
      break;
    int64_t miss = 0;
    if (peak <= budget) {
      lo = std::max(lo, told);
      // A plan that recomputes nothing cannot get cheaper.
      if (flops == 0)
        break;
    } else {
      hi = std::min(hi, told);
    }
    if (llvm::SubOverflow(budget, peak, miss) ||
        llvm::AddOverflow(told, miss, told))
      break;
    // Stay strictly inside the bracket; stop once it is within 0.5%.
    if (told <= lo || told >= hi)
      told = hi == std::numeric_limits<int64_t>::max() ? lo + lo / 4
                                                       : lo + (hi - lo) / 2;
    if (hi != std::numeric_limits<int64_t>::max() && hi - lo <= budget / 200)
      break;
    if (told <= 0)
      break;
  }
  return std::move(*best);
}

} // namespace

absl::StatusOr<TrainingReport>
buildTrainingGraphInBudget(Graph &graph, const TrainingOptions &options) {
  bool searching = options.strategy == kAutoStrategy;
  // The candidates and the search's size are the forward graph's.
  std::vector<std::string> strategies = {options.strategy};
  if (searching)
    strategies = autoCandidates(graph, /*forOneBudget=*/true);
  int64_t forwardOps = int64_t(graph.numOps());
  std::vector<ReportSearchTime> searchTimings;
  Stopwatch stopwatch;
  // Every candidate starts from a copy of the graph differentiated once;
  // the one chosen is swapped in, not built again. Ids renumbered in
  // schedule order first, as every other copy of the forward graph has
  // them: the planners number ops by id.
  {
    std::unique_ptr<Graph> forward = graph.clone();
    graph.swap(*forward);
  }
  REMAT_ASSIGN_OR_RETURN(DifferentiatedGraph base,
                         differentiateOnce(graph, options));
  searchTimings.push_back({"autodiff", 0, stopwatch.seconds()});
  stopwatch.restart();
  // The baseline resolves a share of plain autodiff's peak to bytes.
  REMAT_ASSIGN_OR_RETURN(Trial plain,
                         tryStrategy(base, options, "none", std::nullopt,
                                     /*keepGraph=*/searching));
  double plainSeconds = stopwatch.seconds();
  if (!searching)
    searchTimings.push_back({"none", 1, plainSeconds});
  REMAT_ASSIGN_OR_RETURN(int64_t budget,
                         parseByteSize(*options.budget, plain.peakBytes));

  // A given strategy is built once.
  std::optional<Trial> best;
  if (searching) {
    int64_t opsBuilt = 0;
    size_t tried = 0;
    for (; tried < strategies.size() && opsBuilt < kSearchOpBudget; ++tried) {
      const std::string &strategy = strategies[tried];
      stopwatch.restart();
      Trial trial;
      if (strategy == "none") {
        trial = std::move(plain);
      } else if (isModelledPlanner(strategy)) {
        REMAT_ASSIGN_OR_RETURN(
            trial, tryCalibrated(base, options, strategy, budget));
      } else {
        REMAT_ASSIGN_OR_RETURN(trial,
                               tryStrategy(base, options, strategy, budget));
      }
      opsBuilt += forwardOps * trial.builds;
      searchTimings.push_back(
          {strategy, trial.builds,
           strategy == "none" ? plainSeconds : stopwatch.seconds()});
      if (!best || isBetter(trial, *best, budget))
        best = std::move(trial);
    }
    strategies.resize(tried);
  } else {
    stopwatch.restart();
    if (isModelledPlanner(options.strategy)) {
      REMAT_ASSIGN_OR_RETURN(
          best, tryCalibrated(base, options, options.strategy, budget));
    } else {
      REMAT_ASSIGN_OR_RETURN(
          best, tryStrategy(base, options, options.strategy, budget));
    }
    searchTimings.push_back(
        {options.strategy, best->builds, stopwatch.seconds()});
  }
  REMAT_RETURN_IF_ERROR(verifyBuild(best->build));
  graph.swap(*best->build.graph);
  TrainingReport report = std::move(best->build.report);
  report.searchTimings = std::move(searchTimings);
  report.budgetBytes = budget;
  report.budgetMet = report.planPeakBytes() <= budget;
  report.plansTried = int64_t(strategies.size());
  if (!*report.budgetMet)
    report.warnings.push_back(fmt::format(
        "no plan reaches the budget of {} ({} bytes); the lowest peak found "
        "is {} ({} bytes, strategy {})",
        formatBytes(budget), budget, formatBytes(report.planPeakBytes()),
        report.planPeakBytes(), report.strategy));
  return report;
}

absl::StatusOr<SweepReport> sweepTrainingPlans(const Graph &graph,
                                               const TrainingOptions &options) {
  // The plans of the budget search but the ILP, which plans for one budget.
  // Plain autodiff's peak, a budget every plan may use, lets `memory` fall
  // back to plain autodiff where it finds no bottleneck. Ids renumbered as
  // the budget search has them, so that both plan alike.
  std::unique_ptr<Graph> differentiated = graph.clone();
  REMAT_ASSIGN_OR_RETURN(DifferentiatedGraph base,
                         differentiateOnce(*differentiated, options));
  REMAT_ASSIGN_OR_RETURN(
      Trial plain, tryStrategy(base, options, "none", std::nullopt,
                               /*keepGraph=*/false));
  int64_t plainPeak = plain.peakBytes;
  std::vector<Trial> trials;
  trials.push_back(std::move(plain));
  for (const std::string &strategy :
       autoCandidates(graph, /*forOneBudget=*/false)) {
    if (strategy == "none")
      continue;
    REMAT_ASSIGN_OR_RETURN(Trial trial,
                           tryStrategy(base, options, strategy, plainPeak,
                                       /*keepGraph=*/false));
    trials.push_back(std::move(trial));
  }
  // The DP plans for one budget: a few across the range, each calibrated
  // in fewer builds than a single budget gets.
  for (int percent : kSweepChainPercents) {
    REMAT_ASSIGN_OR_RETURN(
        Trial trial, tryCalibrated(base, options, "chain",
                                   plainPeak / 100 * percent,
                                   kSweepCalibrationRounds,
                                   /*keepGraph=*/false));
    trials.push_back(std::move(trial));
  }
  SweepReport sweep;
  sweep.graph = graph.name().str();
  sweep.peakBytesPlain = trials.front().peakBytes;
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

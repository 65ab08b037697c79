//===- Budget.cpp - Plans searched within a memory budget -----------------===//
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
/// in a geometric series, `all` and the other planners, and keeps the one
/// with the least recompute FLOPs. Every candidate is planned first: once a
/// plan fits, a later one whose copies cost more (counted without building,
/// `recomputeFlopsLowerBound`) is dropped unbuilt. The chain planner plans
/// against a model of memory, XLA's pass and the min-cut against estimates;
/// the search shifts the budget it gives them by what they missed. Where
/// summing partial gradients as they come lowers plain autodiff's peak, every
/// candidate is tried on that graph too. Where no plan fits, the plan is the
/// one of lowest peak that a search told the proven peak floor finds (then,
/// told that peak, the cheapest there): the same plan for every budget out
/// of reach. A budget below the floor goes to that search at once, and a
/// plan that fits, recomputes nothing and peaks at the floor ends a search.
///
//===----------------------------------------------------------------------===//

#include "Training/BudgetTrials.h"

#include "remat/Analysis/PeakFloor.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Stopwatch.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/BuryPointer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <optional>
#include <string>
#include <vector>

namespace remat {

using namespace budget;

namespace {

/// What the searches of one `auto` run share: the work they may do in all
/// (`kSearchOpBudget`, `kUnmetSearchOpBudget` while no plan fits), the
/// plans they tried and their timings.
struct SearchState {
  int64_t forwardOps;
  std::vector<ReportSearchTime> &timings;
  /// The proven peak floor (`SearchBases::floor`); 0 where none is known.
  int64_t floorBytes = 0;
  int64_t work = 0;
  int64_t plansTried = 0;
};

/// How the timings name the candidates of the search at the lowest peak.
constexpr const char *kAtLowestPeak = ", at the lowest peak found";

/// Tries `strategies` on every base in order, within the work `search` has
/// left, and returns the best trial within `budget` (`isBetter`); none when
/// no work was left. Plain autodiff is tried where its base still has its
/// trial. A plan that recomputes more than `toBeat` FLOPs, or than a plan
/// found within the budget, is not built. A plan within the budget that
/// recomputes nothing at the proven peak floor ends the search: no plan can
/// beat it (`isBetter`).
absl::StatusOr<std::optional<Trial>>
searchCandidates(llvm::ArrayRef<std::unique_ptr<SearchBase>> bases,
                 llvm::ArrayRef<std::string> strategies, int64_t budget,
                 llvm::StringRef label, SearchState &search,
                 std::optional<int64_t> toBeat = std::nullopt) {
  std::optional<Trial> best;
  Stopwatch stopwatch;
  for (int b = 0, e = int(bases.size()); b < e; ++b) {
    SearchBase &from = *bases[b];
    for (const std::string &strategy : strategies) {
      bool met = best && best->peakBytes <= budget;
      if (search.work >= (met ? kSearchOpBudget : kUnmetSearchOpBudget))
        return best;
      if (met && best->flopsRecompute == 0 &&
          best->peakBytes <= search.floorBytes)
        return best;
      if (strategy == "none" && !from.plain)
        continue;
      ++search.plansTried;
      stopwatch.restart();
      if (met)
        toBeat = std::min(toBeat.value_or(best->flopsRecompute),
                          best->flopsRecompute);
      Trial trial;
      double seconds = 0;
      if (strategy == "none") {
        trial = std::move(*from.plain);
        from.plain.reset();
        seconds = from.plainSeconds;
      } else {
        absl::StatusOr<Trial> tried =
            tryForBudget(from.graph, from.options,
                         {.planner = strategy, .budget = budget,
                          .toBeat = toBeat});
        // A graph whose sizes the planner's arithmetic cannot hold (the
        // min-cut's capacities): the other candidates plan it.
        if (absl::IsOutOfRange(tried.status())) {
          search.timings.push_back(
              {strategy + from.label + label.str(), 0, stopwatch.seconds()});
          continue;
        }
        REMAT_RETURN_IF_ERROR(tried.status());
        trial = std::move(*tried);
      }
      if (strategy != "none")
        seconds = stopwatch.seconds();
      trial.base = b;
      search.work += search.forwardOps * trial.builds +
                     search.forwardOps / kPlansPerBuild * trial.unbuilt;
      search.timings.push_back({strategy + from.label + label.str(),
                                trial.builds, seconds, trial.unbuilt});
      if (!trial.dropped && (!best || isBetter(trial, *best, budget)))
        best = std::move(trial);
    }
  }
  return best;
}

/// How the timings name the candidates of the search from the peak floor.
constexpr const char *kFromFloor = ", from the peak floor";

/// How the timings name the candidates of the bisection's searches.
constexpr const char *kBisecting = ", bisecting the lowest peak";

/// Steps of `bisectLowestPeak`: each halves the interval between the floor
/// and the lowest peak found, from ResNet-50's 2 GB to under 2 MB.
constexpr int kLowestPeakBisections = 10;

/// Lowers `best` (a plan of lowest peak found, or none) by bisecting the
/// budget between `floorBytes` and its peak: a budget far under every
/// plan's reach makes planners give up high (ResNet-50's joint graph under
/// Inductor: told the floor, every planner peaked at 2.1 GiB or more, where
/// a budget of 1.4 GiB gave a plan of 1.3 GiB, docs/strategies.md). Each search that meets its budget
/// lowers the interval's top to its plan's peak, each that does not raises
/// the bottom; each has its own work limit.
absl::Status bisectLowestPeak(llvm::ArrayRef<std::unique_ptr<SearchBase>> bases,
                              llvm::ArrayRef<std::string> strategies,
                              int64_t floorBytes, std::optional<Trial> &best,
                              SearchState &search) {
  if (!best)
    return absl::OkStatus();
  int64_t low = floorBytes, high = best->peakBytes;
  for (int step = 0; step < kLowestPeakBisections && low + 1 < high; ++step) {
    int64_t budget = low + (high - low) / 2;
    SearchState stepSearch{search.forwardOps, search.timings,
                           search.floorBytes};
    REMAT_ASSIGN_OR_RETURN(
        std::optional<Trial> trial,
        searchCandidates(bases, strategies, budget, kBisecting, stepSearch));
    search.plansTried += stepSearch.plansTried;
    if (trial && trial->peakBytes <= budget)
      high = trial->peakBytes;
    else
      low = budget;
    if (trial && trial->peakBytes < best->peakBytes)
      best = std::move(trial);
  }
  return absl::OkStatus();
}

/// The plan of lowest peak, then least recompute at that peak, that the
/// search finds told `floorBytes` (the proven peak floor; 0 where none is
/// known): what `auto` builds for every budget no plan reaches, so that the
/// plan does not depend on how far out of reach the budget is. The search
/// has its own work limit, for the same reason. Every base must hold its
/// plain trial.
absl::StatusOr<std::optional<Trial>>
searchLowestPeak(llvm::ArrayRef<std::unique_ptr<SearchBase>> bases,
                 llvm::ArrayRef<std::string> strategies, int64_t floorBytes,
                 const Graph &forward, SearchState &search) {
  SearchState lowestSearch{search.forwardOps, search.timings,
                           search.floorBytes};
  REMAT_ASSIGN_OR_RETURN(std::optional<Trial> best,
                         searchCandidates(bases, strategies, floorBytes,
                                          kFromFloor, lowestSearch));
  REMAT_RETURN_IF_ERROR(
      bisectLowestPeak(bases, strategies, floorBytes, best, lowestSearch));
  // The plan of least modelled peak recomputes more than plans the model
  // wrongly believes over it (docs/strategies.md#budgets): the planners
  // that take a budget are told the lowest peak found, for the cheapest
  // plan there.
  if (best && best->peakBytes > floorBytes && best->flopsRecompute > 0) {
    REMAT_ASSIGN_OR_RETURN(
        std::optional<Trial> atLowest,
        searchCandidates(
            bases, autoCandidates(forward, bases.front()->options.plannerRegistry(),
                                      CandidateSet::AtLowestPeak),
            best->peakBytes, kAtLowestPeak, lowestSearch,
            best->flopsRecompute));
    if (atLowest && atLowest->peakBytes <= best->peakBytes &&
        atLowest->flopsRecompute < best->flopsRecompute)
      best = std::move(atLowest);
  }
  search.plansTried += lowestSearch.plansTried;
  return best;
}

} // namespace

absl::StatusOr<TrainingReport>
buildTrainingGraphInBudget(Graph &graph, const TrainingOptions &options) {
  bool searching = options.planner == kAutoPlanner;
  // The candidates and the search's size are the forward graph's.
  std::vector<std::string> strategies = {options.planner};
  if (searching)
    strategies = autoCandidates(graph, options.plannerRegistry(),
                                CandidateSet::OneBudget);
  int64_t forwardOps = int64_t(graph.numOps());
  // Every candidate starts from a copy of the graph differentiated once;
  // the one chosen is swapped in, not built again.
  REMAT_ASSIGN_OR_RETURN(SearchBases searchBases,
                         makeSearchBases(graph, options, searching,
                                         /*keepPlainGraph=*/searching));
  std::vector<std::unique_ptr<SearchBase>> &bases = searchBases.bases;
  const DifferentiatedGraph &base = searchBases.own().graph;
  const std::optional<PeakFloor> &floor = searchBases.floor;
  std::vector<ReportSearchTime> searchTimings = std::move(searchBases.timings);
  const Trial &plain = *searchBases.own().plain;
  if (!searching)
    searchTimings.push_back(
        {"none", plain.builds, searchBases.own().plainSeconds});
  // The baseline resolves a share of plain autodiff's peak to bytes.
  REMAT_ASSIGN_OR_RETURN(int64_t budget,
                         parseByteSize(*options.budget, plain.peakBytes));

  // A given strategy is built once.
  Stopwatch stopwatch;
  std::optional<Trial> best;
  int64_t plansTried = 1;
  if (searching) {
    SearchState search{forwardOps, searchTimings, floor ? floor->bytes : 0};
    // A budget below the proven floor is met by no plan: straight to the
    // plan of lowest peak.
    bool provenUnmet =
        options.searchAtLowestPeak && floor && budget < floor->bytes;
    if (!provenUnmet) {
      REMAT_ASSIGN_OR_RETURN(
          best, searchCandidates(bases, strategies, budget, "", search));
    }
    if (options.searchAtLowestPeak && (!best || best->peakBytes > budget)) {
      // Plain autodiff's trials, which the first search may have taken.
      for (std::unique_ptr<SearchBase> &from : bases)
        if (!from->plain) {
          REMAT_ASSIGN_OR_RETURN(
              from->plain,
              plainTrial(from->graph, from->options, /*keepGraph=*/true,
                         from->plainSeconds));
        }
      REMAT_ASSIGN_OR_RETURN(
          best, searchLowestPeak(bases, strategies, floor ? floor->bytes : 0,
                                 graph, search));
    }
    plansTried = search.plansTried;
  } else {
    stopwatch.restart();
    if (isModelledPlanner(options.plannerRegistry(), options.planner)) {
      REMAT_ASSIGN_OR_RETURN(
          best, tryCalibrated(base, options,
                              {.planner = options.planner, .budget = budget}));
    } else {
      REMAT_ASSIGN_OR_RETURN(
          best, tryStrategy(base, options,
                            {.planner = options.planner, .budget = budget}));
    }
    searchTimings.push_back(
        {options.planner, best->builds, stopwatch.seconds(), best->unbuilt});
  }
  // Plain autodiff chosen: built now, on the differentiated graph itself,
  // which nothing needs after it.
  if (!best->build.graph) {
    stopwatch.restart();
    int64_t planned = best->peakBytes;
    SearchBase &from = *bases[best->base];
    REMAT_ASSIGN_OR_RETURN(
        best, buildPlainOnBase(from, from.owned ? *from.owned : graph));
    assert(best->peakBytes == planned &&
           "plain autodiff's build differs from its schedule");
    (void)planned;
    searchTimings.push_back({"none", 1, stopwatch.seconds()});
  }
  REMAT_RETURN_IF_ERROR(verifyBuild(best->build));
  graph.swap(*best->build.graph);
  TrainingReport report = std::move(best->build.report);
  report.searchTimings = std::move(searchTimings);
  // Plain autodiff is the options' own, whatever the plan's aggregation (a
  // graph on devices is searched on that graph only).
  report.peakBytesBefore = base.plainSchedule.peakBytesAfter;
  report.budgetBytes = budget;
  report.budgetMet = report.planPeakBytes() <= budget;
  report.plansTried = plansTried;
  if (floor) {
    report.peakFloorBytes = floor->bytes;
    report.peakFloorOp = searchBases.floorOp;
  }
  if (!*report.budgetMet) {
    std::string warning = fmt::format(
        "no plan reaches the budget of {} ({} bytes); the lowest peak found "
        "is {} ({} bytes, planner {})",
        formatBytes(budget), budget, formatBytes(report.planPeakBytes()),
        report.planPeakBytes(), report.planner);
    if (floor && budget < floor->bytes)
      warning +=
          fmt::format("; no plan can fit: every plan peaks at {} ({} "
                      "bytes) or more, at {}",
                      formatBytes(floor->bytes), floor->bytes,
                      searchBases.floorText);
    else if (floor)
      warning +=
          fmt::format("; no plan can peak below {} ({} bytes), at {}",
                      formatBytes(floor->bytes), floor->bytes,
                      searchBases.floorText);
    // One line says it all: the plan's own notes (its planner's, one that
    // recomputes for nothing) follow the verdict.
    for (const std::string &note : report.budgetNotes)
      warning += "; " + note;
    for (const std::string &note : report.warnings)
      warning += "; " + note;
    report.warnings = {std::move(warning)};
  }
  // The built graph fits: what the planner's model said of the budget does
  // not matter.
  report.budgetNotes.clear();
  // The differentiated graph, swapped out above, and the bases' own.
  if (!options.freeScratchGraphs) {
    // LLVM's graveyard has a few slots: only graphs take one.
    auto bury = [](std::unique_ptr<Graph> &scratch) {
      if (scratch)
        llvm::BuryPointer(std::move(scratch));
    };
    bury(best->build.graph);
    for (std::unique_ptr<SearchBase> &from : bases)
      bury(from->owned);
  }
  return report;
}

} // namespace remat

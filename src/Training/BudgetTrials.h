//===- BudgetTrials.h - Candidate plans of the budget search ----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the budget search and the sweep share: the candidates `auto` tries,
/// and how one candidate is planned, built and judged on a graph
/// differentiated once (TrainingInternal.h).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_TRAINING_BUDGETTRIALS_H
#define REMAT_SRC_TRAINING_BUDGETTRIALS_H

#include "Training/TrainingInternal.h"

#include "remat/Analysis/PeakFloor.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat::budget {

/// What one candidate plan costs once built.
struct Trial {
  std::string planner;
  int64_t peakBytes = 0;
  int64_t flopsRecompute = 0;
  double overhead = 0;
  /// The budget the planner was told, when not the search's own.
  std::optional<int64_t> plannerBudget;
  /// How many graphs were built to get here, and how many plans were made
  /// but not built: they could not beat the best plan, or repeated one.
  int builds = 1;
  int unbuilt = 0;
  /// Not built because it could not beat the best plan: no figures.
  bool dropped = false;
  /// The index of the search's base it plans (`SearchBase`).
  int base = 0;
  /// The training graph built (not yet verified) and its report, kept
  /// while the trial may be the one returned.
  TrainingBuild build;
};

/// `auto` stops trying candidates once they have built this many ops in all
/// (a plan not built counting `1 / kPlansPerBuild` of its graph): a
/// planning-time limit that keeps the output deterministic. On a million-op
/// graph, the `chain` DP's build alone; every candidate below about 30k ops.
constexpr int64_t kSearchOpBudget = 1'250'000;

/// While no plan tried fits its budget, the search may build this many ops:
/// a budget not met is where another planner's lower peak matters most (at
/// a million ops, `sqrtn` after the `chain` DP).
constexpr int64_t kUnmetSearchOpBudget = 2 * kSearchOpBudget;

/// A plan made but not built costs the search this share of a build: about
/// what planning costs beside copying, rewriting, scheduling and simulating
/// a million-op graph.
constexpr int64_t kPlansPerBuild = 4;

/// At most this many builds calibrate a modelled planner's budget.
constexpr int kCalibrationRounds = 8;

/// How plans of the graph with partial gradients summed at once are named
/// in timings and sweeps (after the planner).
inline constexpr const char *kSummedAtOnce = ", gradients summed at once";

/// Which of `auto`'s candidates a search tries.
enum class CandidateSet {
  /// For a sweep over budgets: the planners that take no budget.
  Sweep,
  /// For one budget: every candidate.
  OneBudget,
  /// For one budget again, at the lowest peak a search over the user's
  /// budget found: the planners whose plans depend on the budget (one that
  /// takes none gives the plan already tried).
  AtLowestPeak,
  /// For a sweep at each of its budgets: the planners that take one and
  /// are swept at budgets (`PlannerSearchInfo::sweptAtBudgets`).
  SweepBudgets,
};

/// The planners `auto` tries on the forward graph `graph`: the
/// `PlannerSearchInfo::autoCandidates` of `planners` in rank order
/// (docs/planners.md#adding-a-planner), those of planners that take a budget
/// left out of a sweep and those of the others out of a search at the
/// lowest peak. O(log ops) plans.
std::vector<std::string> autoCandidates(const Graph &graph,
                                        const PlannerRegistry &planners,
                                        CandidateSet set);

/// Whether `planner` plans against its own model of memory
/// (`PlannerSearchInfo::modelsMemory`), so that the budget it is told may be
/// shifted to land the built graph's simulated peak within the real one.
bool isModelledPlanner(const PlannerRegistry &planners,
                       llvm::StringRef strategy);

/// Whether `auto` calibrates `planner` as it does a modelled planner
/// (`PlannerSearchInfo::calibratedInSearch`). Told a budget by the user,
/// such planners plan for it as their originals do.
bool isCalibratedInSearch(const PlannerRegistry &planners,
                          llvm::StringRef strategy);

/// Whether `candidate` is a better choice than `best` within `budget`:
/// within the budget beats over it; among plans within it the fewer
/// recompute FLOPs, then the lower peak; among plans over it the lower peak,
/// then the fewer FLOPs.
/// Earlier candidates win ties, so the choice is deterministic.
bool isBetter(const Trial &candidate, const Trial &best, int64_t budget);

/// Plain autodiff's trial, from the schedule `base` made for it: built only
/// if chosen. A graph on devices is judged by its largest device, which
/// only a build knows.
std::optional<Trial> unbuiltPlainTrial(const DifferentiatedGraph &base,
                                       const TrainingOptions &options);

/// Plain autodiff's trial of `base`: `unbuiltPlainTrial` where it has one,
/// else built (kept when `keepGraph`), its build's time in `seconds`.
absl::StatusOr<Trial> plainTrial(const DifferentiatedGraph &base,
                                 const TrainingOptions &options, bool keepGraph,
                                 double &seconds);

/// One candidate to try.
struct TrialRequest {
  std::string planner;
  /// The budget the planner is told; none: it plans without one.
  std::optional<int64_t> budget;
  /// At most this many plans a calibration search (`tryCalibrated`).
  int rounds = kCalibrationRounds;
  /// Whether the trial keeps its graph, to be returned.
  bool keepGraph = true;
  /// A plan that recomputes more FLOPs (the best fitting plan's) could not
  /// win: it is not built.
  std::optional<int64_t> toBeat;
};

/// Plans `request.planner` and builds it on a copy of `base`, unless its
/// plan recomputes more than `request.toBeat`: then the trial, not built,
/// has no figures.
absl::StatusOr<Trial> tryStrategy(const DifferentiatedGraph &base,
                                  const TrainingOptions &options,
                                  const TrialRequest &request);

/// Builds `request.planner` (a calibrated planner) at budgets shifted by
/// what its model missed, bracketing the largest told budget whose graph
/// fits `request.budget` (required), and returns the best trial: at most
/// `request.rounds` plans a search, and a second search where a plan past
/// its own model fits (docs/planners.md#chain). A few builds, each
/// O(graph).
absl::StatusOr<Trial> tryCalibrated(const DifferentiatedGraph &base,
                                    const TrainingOptions &options,
                                    const TrialRequest &request);

/// The trial as the search makes it: `tryCalibrated` where the search
/// calibrates the planner (`isCalibratedInSearch`), else `tryStrategy`.
absl::StatusOr<Trial> tryForBudget(const DifferentiatedGraph &base,
                                   const TrainingOptions &options,
                                   const TrialRequest &request);

/// A forward graph differentiated with one aggregation of partial
/// gradients, the options its plans are built with, and plain autodiff's
/// trial of it.
struct SearchBase {
  DifferentiatedGraph graph;
  TrainingOptions options;
  /// Added to its candidates' names in timings and sweeps.
  const char *label = "";
  /// Plain autodiff's trial; a search that tries it moves it out.
  std::optional<Trial> plain;
  double plainSeconds = 0;
  /// The differentiated graph, where the base owns it (summed at once).
  std::unique_ptr<Graph> owned;
};

/// What the budget search and the sweep plan from (`makeSearchBases`).
struct SearchBases {
  /// In the order searched: summed at once first, where that lowers plain
  /// autodiff's peak (its plans start lower), then the options' own.
  std::vector<std::unique_ptr<SearchBase>> bases;
  /// The least peak any plan of the bases reaches, its op described before
  /// the graph changes (`Op::describe`) and in words
  /// (`describePeakFloorOp`); none for a graph on devices, whose peak is its
  /// largest device's.
  std::optional<PeakFloor> floor;
  std::string floorOp, floorText;
  /// `autodiff` and, where summing at once was tried, its own.
  std::vector<ReportSearchTime> timings;

  SearchBase &own() { return *bases.back(); }
};

/// Differentiates the forward graph `graph` in place, its ids renumbered in
/// schedule order first as every copy of it has them (the planners number
/// ops by id); and, when `trySummed` and the options leave the aggregation
/// to the search, a copy with partial gradients summed at once, kept where
/// that lowers plain autodiff's peak. Plain autodiff's trial of each is
/// unbuilt where its schedule tells its peak, else built (kept when
/// `keepPlainGraph`).
absl::StatusOr<SearchBases> makeSearchBases(Graph &graph,
                                            const TrainingOptions &options,
                                            bool trySummed,
                                            bool keepPlainGraph);

/// Plain autodiff's trial of `from`, built on its differentiated graph
/// `differentiated` itself, which is left empty: no copy, for the last
/// build of a search.
absl::StatusOr<Trial> buildPlainOnBase(const SearchBase &from,
                                       Graph &differentiated);

/// Autodiff's options that sum each partial gradient into the value's
/// gradient as soon as it exists: the fewest partials alive at once.
AutodiffOptions summedAtOnce(AutodiffOptions autodiff);

/// Whether summing at once may give another graph than `options`' own
/// aggregation: it may not for a value with at most two partial gradients
/// (one per use), which are summed once either way.
bool aggregationMayMatter(const Graph &graph, const TrainingOptions &options);

} // namespace remat::budget

#endif // REMAT_SRC_TRAINING_BUDGETTRIALS_H

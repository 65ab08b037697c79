//===- BudgetSearch.h - The search of plans within a budget -----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The budget search as one object: the graphs it plans from (its bases, one
/// `PlanBuilder` each), the proven peak floor, the work it may still do, its
/// timings and the plans it tried, the candidates and how a modelled
/// planner's budget is calibrated. `buildTrainingGraphInBudget` (Budget.cpp)
/// and the sweep (Sweep.cpp) drive it.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_TRAINING_BUDGETSEARCH_H
#define REMAT_SRC_TRAINING_BUDGETSEARCH_H

#include "Training/PlanBuilder.h"

#include "remat/Analysis/PeakFloor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat {

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

/// Builds the training graph of the plan chosen for `*options.budget`
/// (`buildTrainingGraph`); with `jointForwardOps`, of the joint graph
/// `graph` (`buildJointTrainingGraph`). In Budget.cpp, a driver of
/// `BudgetSearch`.
absl::StatusOr<TrainingReport>
buildTrainingGraphInBudget(Graph &graph, const TrainingOptions &options,
                           std::optional<unsigned> jointForwardOps);

/// The search of the plans of one forward graph within a budget.
class BudgetSearch {
public:
  struct Setup {
    /// Also differentiates a copy with every partial gradient summed at
    /// once, kept as a base where that lowers plain autodiff's peak and the
    /// options leave the aggregation to the search (`searchAggregation`).
    bool trySummed = false;
    /// Keeps plain autodiff's graph where its trial must be built (a graph
    /// on devices), to be returned.
    bool keepPlainGraph = false;
    /// The graph is a joint graph (`buildJointTrainingGraph`).
    std::optional<unsigned> jointForwardOps;
  };

  BudgetSearch(const TrainingOptions &options, const Setup &setup)
      : options_(options), setup_(setup) {}

  /// The plan `options.planner` chooses for `*options.budget`: `auto`
  /// searches its candidates (`searchAuto`), another planner is tried alone
  /// (`tryGiven`). Differentiates `graph` in place first (`differentiate`);
  /// the trial returned is built, on a copy, and verified.
  absl::StatusOr<Trial> run(Graph &graph);

  /// Differentiates the forward graph `graph` in place as the options' own
  /// base and, with `Setup::trySummed`, a copy summed at once before it;
  /// finds the proven peak floor and plain autodiff's trial of each base
  /// (unbuilt where its schedule tells its peak).
  absl::Status differentiate(Graph &graph);

  /// The planners `auto` tries on `graph`: the
  /// `PlannerSearchInfo::autoCandidates` of `planners` in rank order
  /// (docs/planners.md#adding-a-planner), those of planners that take a
  /// budget left out of a sweep and those of the others out of a search at
  /// the lowest peak, and on a joint graph those not meant for one
  /// (`AutoCandidate::onJointGraphs`). O(log ops) plans.
  static std::vector<std::string> autoCandidates(const Graph &graph,
                                                 const PlannerRegistry &planners,
                                                 CandidateSet set,
                                                 bool jointGraph = false);

  /// Plain autodiff's peak on the options' own base: what a budget's share
  /// is of.
  int64_t plainPeakBytes() const { return own().plain->peakBytes; }
  /// Plain autodiff's schedule on the options' own base.
  const ScheduleResult &plainSchedule() const {
    return own().builder->plainSchedule();
  }
  /// `*options.budget` in bytes, once `run` resolved it.
  int64_t budgetBytes() const { return budget_; }

  /// The bases, summed at once first where kept: each `base` below is an
  /// index into them.
  int numBases() const { return int(bases_.size()); }
  /// Added to the names of a base's trials in timings and sweeps.
  const char *label(int base) const { return bases_[base]->label; }
  /// Plain autodiff's trial of `base`, moved out.
  Trial takePlain(int base);
  /// Plans `request.planner` and builds it on a copy of `base`, unless its
  /// plan recomputes more than `request.toBeat`: then the trial, not built,
  /// has no figures.
  absl::StatusOr<Trial> tryPlanner(int base, const TrialRequest &request) {
    return tryPlanner(*bases_[base], request);
  }
  /// The trial as the search makes it: `tryCalibrated` where the search
  /// calibrates the planner (`PlannerSearchInfo::calibratedInSearch`), else
  /// `tryPlanner`.
  absl::StatusOr<Trial> tryForBudget(int base, const TrialRequest &request) {
    return tryForBudget(*bases_[base], request);
  }

  /// The least peak any plan of the bases reaches; none for a graph on
  /// devices, whose peak is its largest device's.
  const std::optional<PeakFloor> &floor() const { return floor_; }
  /// The floor's op, described before the graph changed (`Op::describe`),
  /// and in words (`describePeakFloorOp`).
  const std::string &floorOp() const { return floorOp_; }
  const std::string &floorText() const { return floorText_; }
  int64_t plansTried() const { return plansTried_; }
  /// With `TrainingOptions::boundSeconds`: the least recompute cost any
  /// plan of the bases within the budget can have.
  const std::optional<RecomputeCostBound> &recomputeBound() const {
    return recomputeBound_;
  }
  std::vector<ReportSearchTime> takeTimings() { return std::move(timings_); }
  /// Leaves the bases' own graphs to the operating system
  /// (`TrainingOptions::freeScratchGraphs`).
  void buryScratchGraphs();

private:
  /// A forward graph differentiated with one aggregation of partial
  /// gradients, and plain autodiff's trial of it.
  struct Base {
    std::unique_ptr<PlanBuilder> builder;
    /// Added to its candidates' names in timings and sweeps.
    const char *label = "";
    /// Plain autodiff's trial; a search that tries it moves it out.
    std::optional<Trial> plain;
    double plainSeconds = 0;
    /// The differentiated graph, where the base owns it (summed at once).
    std::unique_ptr<Graph> owned;
    /// The planners that planned this base, by spelling (`plannerFor`).
    llvm::StringMap<std::unique_ptr<Planner>> planners;
    /// By spelling, once asked: the planner it repeats
    /// (`Planner::repeats`).
    llvm::StringMap<std::optional<std::string>> repeating;
  };

  const Base &own() const { return *bases_.back(); }

  /// `auto`'s search of `candidates` (in order) for the least recompute
  /// within the budget; where no plan fits, and the options search at the
  /// lowest peak, the plan of lowest peak that a search told the proven
  /// peak floor finds (then, told that peak, the cheapest there).
  absl::StatusOr<Trial> searchAuto(llvm::ArrayRef<std::string> candidates);
  /// `options.planner` alone: calibrated where it models memory.
  absl::StatusOr<Trial> tryGiven();
  /// The trial chosen, built where it is plain autodiff's (on its base's
  /// graph itself, which nothing needs after it) and verified.
  absl::StatusOr<Trial> finish(Trial best);

  /// The planner `name` of `from`: one instance for every budget of the
  /// search, so that what a planner keeps of a graph (its nodes, chain's
  /// block chain) is made once per search, not once per budget.
  absl::StatusOr<Planner *> plannerFor(Base &from, const std::string &name);
  /// Whether planner `name` repeats, on `from`'s graph, another of
  /// `candidates`: the search leaves it out.
  absl::StatusOr<bool> repeatsACandidate(Base &from, const std::string &name,
                                         llvm::ArrayRef<std::string> candidates);
  absl::StatusOr<Trial> tryPlanner(Base &from, const TrialRequest &request);
  absl::StatusOr<Trial> tryForBudget(Base &from, const TrialRequest &request);
  /// Builds `request.planner` (a calibrated planner) at budgets shifted by
  /// what its model missed, bracketing the largest told budget whose graph
  /// fits `request.budget` (required), and returns the best trial: at most
  /// `request.rounds` plans a search, a second search where a plan past
  /// its own model fits (docs/planners.md#chain), and where none fitted as
  /// many told budgets over the user's (docs/strategies.md#budgets). A few
  /// builds, each O(graph).
  absl::StatusOr<Trial> tryCalibrated(Base &from, const TrialRequest &request);
  /// Plain autodiff's trial of `from`: unbuilt where it can be, else built
  /// (kept when `keepGraph`) and timed in `from.plainSeconds`.
  absl::StatusOr<Trial> plainTrial(Base &from, bool keepGraph);

  /// Tries `candidates` on every base in order, within the work left, and
  /// returns the best trial within `budget` (`isBetter`); none when no work
  /// was left. Plain autodiff is tried where its base still has its trial.
  /// A plan that recomputes more than `toBeat` FLOPs, or than a plan found
  /// within the budget, is not built. A plan within the budget that
  /// recomputes nothing at the proven peak floor ends the search: no plan
  /// can beat it.
  absl::StatusOr<std::optional<Trial>>
  searchCandidates(llvm::ArrayRef<std::string> candidates, int64_t budget,
                   llvm::StringRef label,
                   std::optional<int64_t> toBeat = std::nullopt);
  /// The plan of lowest peak, then least recompute at that peak, that the
  /// search finds told the proven floor (0 where none is known), with its
  /// own work limit: what `auto` builds for every budget no plan reaches.
  absl::StatusOr<std::optional<Trial>>
  searchLowestPeak(llvm::ArrayRef<std::string> candidates);
  /// Bounds every base's plans within the budget, each base solved for a
  /// share of `seconds`, and keeps the least bound.
  absl::Status boundRecompute(double seconds);
  /// Lowers `best` by bisecting the budget between the floor and its peak.
  absl::Status bisectLowestPeak(llvm::ArrayRef<std::string> candidates,
                                std::optional<Trial> &best);

  int64_t floorBytes() const { return floor_ ? floor_->bytes : 0; }

  const TrainingOptions &options_;
  Setup setup_;
  std::vector<std::unique_ptr<Base>> bases_;
  std::optional<PeakFloor> floor_;
  std::string floorOp_, floorText_;
  std::optional<RecomputeCostBound> recomputeBound_;
  int64_t budget_ = 0;
  /// The forward graph's ops: what one build costs the search.
  int64_t forwardOps_ = 0;
  /// The ops built so far by the current search (`kSearchOpBudget`).
  int64_t work_ = 0;
  int64_t plansTried_ = 0;
  std::vector<ReportSearchTime> timings_;
};

} // namespace remat

#endif // REMAT_SRC_TRAINING_BUDGETSEARCH_H

//===- BudgetSearch.cpp - The search of plans within a budget -------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A plan is judged by what matters: the simulated peak of its final,
/// scheduled training graph, built on a copy of the differentiated graph.
/// The search is exact about memory (the plan returned is never over the
/// budget when any plan tried reaches it) but not about cost: it tries plain
/// autodiff, the `chain` DP, memory-balanced segmentations `sqrtn=K` for K
/// in a geometric series, `all` and the other planners, and keeps the one
/// with the least recompute FLOPs. Every candidate is planned first: once a
/// plan fits, a later one whose copies cost more (counted without building,
/// `recomputeFlopsLowerBound`) is dropped unbuilt. The chain planner plans
/// against a model of memory, XLA's pass and the min-cut against estimates;
/// the search shifts the budget it gives them by what they missed
/// (`tryCalibrated`). Where summing partial gradients as they come lowers
/// plain autodiff's peak, every candidate is tried on that graph too. Where
/// no plan fits, the plan is the one of lowest peak that a search told the
/// proven peak floor finds (then, told that peak, the cheapest there): the
/// same plan for every budget out of reach. A budget below the floor goes
/// to that search at once, and a plan that fits, recomputes nothing and
/// peaks at the floor ends a search.
///
//===----------------------------------------------------------------------===//

#include "Training/BudgetSearch.h"

#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Support/Status.h"
#include "remat/Support/Stopwatch.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/BuryPointer.h"
#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <future>
#include <limits>
#include <utility>

namespace remat {
namespace {

/// How plans of the graph with partial gradients summed at once are named
/// in timings and sweeps (after the planner).
constexpr const char *kSummedAtOnce = ", gradients summed at once";

/// How the timings name the candidates of the search at the lowest peak.
constexpr const char *kAtLowestPeak = ", at the lowest peak found";

/// How the timings name the candidates of the search from the peak floor.
constexpr const char *kFromFloor = ", from the peak floor";

/// How the timings name the candidates of the bisection's searches.
constexpr const char *kBisecting = ", bisecting the lowest peak";

/// Steps of `bisectLowestPeak`: each halves the interval between the floor
/// and the lowest peak found, from ResNet-50's 2 GB to under 2 MB.
constexpr int kLowestPeakBisections = 10;

/// Autodiff's options that sum each partial gradient into the value's
/// gradient as soon as it exists: the fewest partials alive at once.
AutodiffOptions summedAtOnce(AutodiffOptions autodiff) {
  autodiff.aggregateCount = 2;
  autodiff.aggregateBytes = 0;
  return autodiff;
}

/// Whether summing at once may give another graph than `options`' own
/// aggregation: it may not for a value with at most two partial gradients
/// (one per use), which are summed once either way.
bool aggregationMayMatter(const Graph &graph, const TrainingOptions &options) {
  const AutodiffOptions &autodiff = options.autodiff;
  if (autodiff.aggregateCount == 2 && autodiff.aggregateBytes == 0)
    return false;
  for (const Op &op : graph.ops())
    for (const Value *result : op.results())
      if (result->uses().size() > 2)
        return true;
  return false;
}

/// Whether `candidate` is a better choice than `best` within `budget`:
/// within the budget beats over it; among plans within it the fewer
/// recompute FLOPs, then the lower peak; among plans over it the lower peak,
/// then the fewer FLOPs. Earlier candidates win ties, so the choice is
/// deterministic.
bool isBetter(const Trial &candidate, const Trial &best, int64_t budget) {
  bool fits = candidate.peakBytes <= budget,
       bestFits = best.peakBytes <= budget;
  if (fits != bestFits)
    return fits;
  if (fits && candidate.flopsRecompute != best.flopsRecompute)
    return candidate.flopsRecompute < best.flopsRecompute;
  if (candidate.peakBytes != best.peakBytes)
    return candidate.peakBytes < best.peakBytes;
  return candidate.flopsRecompute < best.flopsRecompute;
}

/// Whether `planner` plans against its own model of memory
/// (`PlannerSearchInfo::modelsMemory`), so that the budget it is told may be
/// shifted to land the built graph's simulated peak within the real one.
bool isModelledPlanner(const PlannerRegistry &planners,
                       llvm::StringRef planner) {
  const PlannerInfo *info = planners.lookupSpelling(planner);
  return info && info->search.modelsMemory;
}

/// Whether `auto` calibrates `planner` as it does a modelled planner
/// (`PlannerSearchInfo::calibratedInSearch`). Told a budget by the user,
/// such planners plan for it as their originals do.
bool isCalibratedInSearch(const PlannerRegistry &planners,
                          llvm::StringRef planner) {
  const PlannerInfo *info = planners.lookupSpelling(planner);
  return info && info->search.calibratedInSearch;
}

/// Whether two plans of one graph are the same plan.
bool samePlan(const RematPlan &a, const RematPlan &b) {
  auto sameRegions = [](const RematPlan &a, const RematPlan &b) {
    return std::equal(a.regions.begin(), a.regions.end(), b.regions.begin(),
                      b.regions.end(),
                      [](const RegionSpan &x, const RegionSpan &y) {
                        return x.path == y.path && x.depth == y.depth;
                      });
  };
  auto sameSteps = [](const std::vector<RecomputeStep> &a,
                      const std::vector<RecomputeStep> &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const RecomputeStep &x, const RecomputeStep &y) {
                        return x.before == y.before && x.ops == y.ops;
                      });
  };
  if (a.plain != b.plain || a.kept != b.kept || !sameRegions(a, b) ||
      a.schedule.has_value() != b.schedule.has_value())
    return false;
  return !a.schedule || sameSteps(*a.schedule, *b.schedule);
}

/// A calibrated planner's plans so far, each built once: a plan made again
/// at another told budget is not built again.
class CalibrationRounds {
public:
  CalibrationRounds(PlanBuilder &builder, const std::string &plannerName,
                    Planner &planner, bool keepGraph)
      : builder_(builder), plannerName_(plannerName), planner_(planner),
        keepGraph_(keepGraph) {}

  /// What one round told `told` gives: the plan's figures, its own
  /// model's peak, and the trial when it was built now.
  struct Outcome {
    int64_t peakBytes, flopsRecompute;
    std::optional<int64_t> modelledPeakBytes;
    std::optional<Trial> built;
  };

  absl::StatusOr<Outcome> run(int64_t told) {
    // The first plan is always built: its copy of the graph is made on a
    // second thread while the planner reads the same graph.
    std::future<std::unique_ptr<Graph>> copy;
    if (done_.empty())
      copy = std::async(std::launch::async | std::launch::deferred,
                        [graph = &builder_.graph()] {
                          return graph->clone(Graph::CloneIds::Keep);
                        });
    REMAT_ASSIGN_OR_RETURN(BasePlan plan, builder_.plan(planner_, told));
    std::optional<int64_t> modelled = plan.plan.modelledPeakBytes;
    for (const Round &earlier : done_)
      if (samePlan(earlier.plan, plan.plan))
        return Outcome{earlier.peakBytes, earlier.flopsRecompute, modelled,
                       std::nullopt};
    REMAT_ASSIGN_OR_RETURN(
        Trial built,
        builder_.build(plannerName_, plan,
                       {.budgetBytes = told,
                        .keepGraph = keepGraph_,
                        .copy = copy.valid() ? copy.get() : nullptr}));
    built.plannerBudget = told;
    done_.push_back(
        {std::move(plan.plan), built.peakBytes, built.flopsRecompute});
    return Outcome{built.peakBytes, built.flopsRecompute, modelled,
                   std::move(built)};
  }

  int builds() const { return int(done_.size()); }

private:
  struct Round {
    RematPlan plan;
    int64_t peakBytes, flopsRecompute;
  };
  PlanBuilder &builder_;
  const std::string &plannerName_;
  Planner &planner_;
  bool keepGraph_;
  std::vector<Round> done_;
};

} // namespace

std::vector<std::string>
BudgetSearch::autoCandidates(const Graph &graph,
                             const PlannerRegistry &planners,
                             CandidateSet set, bool jointGraph) {
  std::vector<AutoCandidate> candidates;
  for (const PlannerInfo *info : planners.all()) {
    const PlannerSearchInfo &search = info->search;
    // A sweep tells no budget; at the lowest peak, a planner that takes
    // none would give the plan already tried.
    bool wanted = search.takesBudget
                      ? set == CandidateSet::OneBudget ||
                            set == CandidateSet::AtLowestPeak ||
                            (set == CandidateSet::SweepBudgets &&
                             search.sweptAtBudgets)
                      : set == CandidateSet::Sweep ||
                            set == CandidateSet::OneBudget;
    if (!wanted || !search.autoCandidates)
      continue;
    for (AutoCandidate &candidate : search.autoCandidates(graph))
      if (!jointGraph || candidate.onJointGraphs)
        candidates.push_back(std::move(candidate));
  }
  llvm::stable_sort(candidates, [](const AutoCandidate &a,
                                   const AutoCandidate &b) {
    return a.rank < b.rank;
  });
  std::vector<std::string> spellings;
  spellings.reserve(candidates.size());
  for (AutoCandidate &candidate : candidates)
    spellings.push_back(std::move(candidate.spelling));
  return spellings;
}

absl::StatusOr<Trial> BudgetSearch::run(Graph &graph) {
  bool searching = options_.planner == kAutoPlanner;
  // The candidates are the forward graph's.
  std::vector<std::string> candidates;
  if (searching)
    candidates = autoCandidates(graph, options_.plannerRegistry(),
                                CandidateSet::OneBudget,
                                setup_.jointForwardOps.has_value());
  REMAT_RETURN_IF_ERROR(differentiate(graph));
  // The baseline resolves a share of plain autodiff's peak to bytes.
  REMAT_ASSIGN_OR_RETURN(budget_,
                         parseByteSize(*options_.budget, plainPeakBytes()));
  if (options_.boundSeconds)
    REMAT_RETURN_IF_ERROR(boundRecompute(*options_.boundSeconds));
  absl::StatusOr<Trial> chosen =
      searching ? searchAuto(candidates) : tryGiven();
  REMAT_RETURN_IF_ERROR(chosen.status());
  return finish(std::move(*chosen));
}

/// What the bound's solve ended with, for a progress line.
static std::string describeBound(const RecomputeCostBound &bound) {
  if (bound.infeasible)
    return "no plan fits";
  if (!bound.failure.empty())
    return "no bound: " + bound.failure;
  return fmt::format("{} {:.0f}",
                     bound.solved ? "solved:" : "stopped at the limit:",
                     bound.bound);
}

absl::Status BudgetSearch::boundRecompute(double seconds) {
  Stopwatch stopwatch;
  for (const std::unique_ptr<Base> &base : bases_) {
    REMAT_ASSIGN_OR_RETURN(
        RecomputeCostBound bound,
        base->builder->boundRecompute(budget_, seconds / numBases()));
    if (options_.onProgress)
      options_.onProgress(fmt::format("bound{}: {} nodes, {}, {:.1f} s",
                                      base->label, bound.nodes,
                                      describeBound(bound), bound.seconds));
    // Every plan is some base's: the least bound holds for all; a base
    // where no plan fits bounds nothing.
    if (!recomputeBound_ || recomputeBound_->infeasible ||
        (!bound.infeasible && bound.bound < recomputeBound_->bound))
      recomputeBound_ = std::move(bound);
  }
  timings_.push_back({"recompute lower bound", 0, stopwatch.seconds()});
  return absl::OkStatus();
}

absl::Status BudgetSearch::differentiate(Graph &graph) {
  const TrainingOptions &options = options_;
  forwardOps_ = int64_t(graph.numOps());
  Stopwatch stopwatch;
  // A graph on devices is left to the options given: its plain peak is
  // known only once built.
  bool trySummed = setup_.trySummed && options.searchAggregation &&
                   !setup_.jointForwardOps && options.finalPipeline.empty() &&
                   aggregationMayMatter(graph, options);
  auto own = std::make_unique<Base>();
  REMAT_ASSIGN_OR_RETURN(
      own->builder,
      PlanBuilder::differentiate(
          graph, options,
          {.jointForwardOps = setup_.jointForwardOps,
           .findFloor = options.finalPipeline.empty(),
           .copyForward = trySummed}));
  timings_.push_back({"autodiff", 0, stopwatch.seconds()});
  if (const std::optional<PeakFloor> &floor = own->builder->floor()) {
    floor_ = *floor;
    floorOp_ = floor->op ? floor->op->describe() : "";
    floorText_ = describePeakFloorOp(*floor);
  }
  REMAT_ASSIGN_OR_RETURN(own->plain, plainTrial(*own, setup_.keepPlainGraph));

  if (trySummed) {
    stopwatch.restart();
    TrainingOptions summedOptions = options;
    summedOptions.autodiff = summedAtOnce(options.autodiff);
    auto summed = std::make_unique<Base>();
    summed->label = kSummedAtOnce;
    summed->owned = own->builder->takeForwardCopy();
    REMAT_ASSIGN_OR_RETURN(
        summed->builder,
        PlanBuilder::differentiate(*summed->owned, summedOptions, {}));
    summed->plain = summed->builder->unbuiltPlainTrial();
    timings_.push_back(
        {"autodiff, gradients summed at once", 0, stopwatch.seconds()});
    if (summed->plain->peakBytes < own->plain->peakBytes) {
      // The floor bounds the plans of both graphs: the lower of theirs.
      REMAT_ASSIGN_OR_RETURN(PeakFloor summedFloor,
                             summed->builder->findFloor());
      if (summedFloor.bytes < floor_->bytes) {
        floor_ = summedFloor;
        floorOp_ = summedFloor.op ? summedFloor.op->describe() : "";
        floorText_ = describePeakFloorOp(summedFloor) +
                     " in the graph with gradients summed at once";
      }
      bases_.push_back(std::move(summed));
    }
  }
  bases_.push_back(std::move(own));
  return absl::OkStatus();
}

absl::StatusOr<Trial>
BudgetSearch::searchAuto(llvm::ArrayRef<std::string> candidates) {
  int64_t budget = budget_;
  std::optional<Trial> best;
  // A budget below the proven floor is met by no plan: straight to the
  // plan of lowest peak.
  bool atLowestPeak = options_.searchAtLowestPeak;
  bool provenUnmet = atLowestPeak && floor_ && budget < floor_->bytes;
  if (!provenUnmet) {
    REMAT_ASSIGN_OR_RETURN(best, searchCandidates(candidates, budget, ""));
  }
  if (atLowestPeak && (!best || best->peakBytes > budget)) {
    // Plain autodiff's trials, which the first search may have taken.
    for (std::unique_ptr<Base> &from : bases_)
      if (!from->plain) {
        REMAT_ASSIGN_OR_RETURN(from->plain,
                               plainTrial(*from, /*keepGraph=*/true));
      }
    REMAT_ASSIGN_OR_RETURN(best, searchLowestPeak(candidates));
  }
  if (!best)
    return absl::InternalError("the budget search tried no plan");
  return std::move(*best);
}

absl::StatusOr<Trial> BudgetSearch::tryGiven() {
  const std::string &planner = options_.planner;
  Base &from = *bases_.back();
  timings_.push_back({"none", from.plain->builds, from.plainSeconds});
  plansTried_ = 1;
  Stopwatch stopwatch;
  TrialRequest request{.planner = planner, .budget = budget_};
  absl::StatusOr<Trial> best =
      isModelledPlanner(options_.plannerRegistry(), planner)
          ? tryCalibrated(from, request)
          : tryPlanner(from, request);
  REMAT_RETURN_IF_ERROR(best.status());
  best->base = numBases() - 1;
  timings_.push_back(
      {planner, best->builds, stopwatch.seconds(), best->unbuilt});
  return best;
}

absl::StatusOr<Trial> BudgetSearch::finish(Trial best) {
  // Plain autodiff chosen: built now, on the differentiated graph itself,
  // which nothing needs after it.
  if (!best.build.graph) {
    Stopwatch stopwatch;
    int64_t planned = best.peakBytes;
    REMAT_ASSIGN_OR_RETURN(best,
                           bases_[best.base]->builder->buildPlainInPlace());
    assert(best.peakBytes == planned &&
           "plain autodiff's build differs from its schedule");
    (void)planned;
    timings_.push_back({"none", 1, stopwatch.seconds()});
  }
  // The verifier the builds left out, timed as the report's `verify` step.
  TrainingBuild &build = best.build;
  if (!build.verified) {
    Stopwatch stopwatch;
    REMAT_RETURN_IF_ERROR(verify(*build.graph));
    double seconds = stopwatch.seconds();
    for (ReportPassTime &timing : build.report.timings)
      if (timing.pass == "verify") {
        timing.seconds = seconds;
        break;
      }
    build.report.passSeconds += seconds;
    build.verified = true;
  }
  return best;
}

Trial BudgetSearch::takePlain(int base) {
  Trial plain = std::move(*bases_[base]->plain);
  bases_[base]->plain.reset();
  return plain;
}

void BudgetSearch::buryScratchGraphs() {
  // LLVM's graveyard has a few slots: only graphs take one.
  for (std::unique_ptr<Base> &from : bases_)
    if (from->owned)
      llvm::BuryPointer(std::move(from->owned));
}

absl::StatusOr<Planner *> BudgetSearch::plannerFor(Base &from,
                                                  const std::string &name) {
  std::unique_ptr<Planner> &planner = from.planners[name];
  if (!planner) {
    REMAT_ASSIGN_OR_RETURN(planner, options_.plannerRegistry().create(name));
  }
  return planner.get();
}

absl::StatusOr<bool>
BudgetSearch::repeatsACandidate(Base &from, const std::string &name,
                                llvm::ArrayRef<std::string> candidates) {
  if (name == "none")
    return false;
  auto [known, asked] = from.repeating.try_emplace(name);
  if (asked) {
    REMAT_ASSIGN_OR_RETURN(Planner * planner, plannerFor(from, name));
    // A planner that cannot tell reports its error when it plans.
    absl::StatusOr<std::optional<std::string>> repeated =
        from.builder->repeats(*planner);
    if (repeated.ok())
      known->second = std::move(*repeated);
  }
  return known->second && llvm::is_contained(candidates, *known->second);
}

absl::StatusOr<Trial> BudgetSearch::tryPlanner(Base &from,
                                               const TrialRequest &request) {
  PlanBuilder &builder = *from.builder;
  REMAT_ASSIGN_OR_RETURN(Planner * planner, plannerFor(from, request.planner));
  REMAT_ASSIGN_OR_RETURN(BasePlan plan,
                         builder.plan(*planner, request.budget));
  if (request.toBeat &&
      builder.recomputeLowerBound(plan.plan) > *request.toBeat) {
    Trial dropped{request.planner};
    dropped.builds = 0;
    dropped.unbuilt = 1;
    dropped.dropped = true;
    return dropped;
  }
  REMAT_ASSIGN_OR_RETURN(Trial trial,
                         builder.build(request.planner, plan,
                                       {.budgetBytes = request.budget,
                                        .keepGraph = request.keepGraph}));
  // A plan within its planner's own model of memory that the built graph
  // exceeds (the ILP's windows fill the model's budget, and the built graph
  // is scheduled again) is planned once more, told the budget less the
  // overshoot; the better of the two stays.
  std::optional<int64_t> modelled = plan.plan.modelledPeakBytes;
  if (!request.budget || trial.peakBytes <= *request.budget || !modelled ||
      *modelled > *request.budget)
    return trial;
  int64_t told = 2 * *request.budget - trial.peakBytes;
  if (told <= 0)
    return trial;
  REMAT_ASSIGN_OR_RETURN(BasePlan again, builder.plan(*planner, told));
  if (samePlan(again.plan, plan.plan)) {
    ++trial.unbuilt;
    return trial;
  }
  REMAT_ASSIGN_OR_RETURN(Trial retried,
                         builder.build(request.planner, again,
                                       {.budgetBytes = request.budget,
                                        .keepGraph = request.keepGraph}));
  retried.plannerBudget = told;
  Trial &kept = isBetter(retried, trial, *request.budget) ? retried : trial;
  kept.builds = 2;
  return std::move(kept);
}

absl::StatusOr<Trial> BudgetSearch::tryForBudget(Base &from,
                                                 const TrialRequest &request) {
  if (isCalibratedInSearch(options_.plannerRegistry(), request.planner))
    return tryCalibrated(from, request);
  return tryPlanner(from, request);
}

absl::StatusOr<Trial> BudgetSearch::plainTrial(Base &from, bool keepGraph) {
  if (std::optional<Trial> plain = from.builder->unbuiltPlainTrial())
    return std::move(*plain);
  Stopwatch stopwatch;
  REMAT_ASSIGN_OR_RETURN(
      Trial plain,
      tryPlanner(from, {.planner = "none", .keepGraph = keepGraph}));
  from.plainSeconds = stopwatch.seconds();
  return plain;
}

absl::StatusOr<std::optional<Trial>>
BudgetSearch::searchCandidates(llvm::ArrayRef<std::string> candidates,
                               int64_t budget, llvm::StringRef label,
                               std::optional<int64_t> toBeat) {
  std::optional<Trial> best;
  Stopwatch stopwatch;
  for (int b = 0, e = numBases(); b < e; ++b) {
    Base &from = *bases_[b];
    for (const std::string &planner : candidates) {
      bool met = best && best->peakBytes <= budget;
      if (work_ >= (met ? kSearchOpBudget : kUnmetSearchOpBudget))
        return best;
      if (met && best->flopsRecompute == 0 && best->peakBytes <= floorBytes())
        return best;
      if (planner == "none" && !from.plain)
        continue;
      REMAT_ASSIGN_OR_RETURN(bool repeats,
                             repeatsACandidate(from, planner, candidates));
      if (repeats)
        continue;
      ++plansTried_;
      stopwatch.restart();
      if (met)
        toBeat = std::min(toBeat.value_or(best->flopsRecompute),
                          best->flopsRecompute);
      Trial trial;
      double seconds = 0;
      if (planner == "none") {
        trial = takePlain(b);
        seconds = from.plainSeconds;
      } else {
        absl::StatusOr<Trial> tried = tryForBudget(
            from, {.planner = planner, .budget = budget, .toBeat = toBeat});
        // A graph whose sizes the planner's arithmetic cannot hold (the
        // min-cut's capacities): the other candidates plan it.
        if (absl::IsOutOfRange(tried.status())) {
          timings_.push_back(
              {planner + from.label + label.str(), 0, stopwatch.seconds()});
          continue;
        }
        REMAT_RETURN_IF_ERROR(tried.status());
        trial = std::move(*tried);
        seconds = stopwatch.seconds();
      }
      trial.base = b;
      work_ += forwardOps_ * trial.builds +
               forwardOps_ / kPlansPerBuild * trial.unbuilt;
      timings_.push_back({planner + from.label + label.str(), trial.builds,
                          seconds, trial.unbuilt});
      if (!trial.dropped && (!best || isBetter(trial, *best, budget)))
        best = std::move(trial);
    }
  }
  return best;
}

absl::Status
BudgetSearch::bisectLowestPeak(llvm::ArrayRef<std::string> candidates,
                               std::optional<Trial> &best) {
  // A budget far under every plan's reach makes planners give up high
  // (ResNet-50's joint graph under Inductor: told the floor, every planner
  // peaked at 2.1 GiB or more, where a budget of 1.4 GiB gave a plan of
  // 1.3 GiB, docs/strategies.md). Each search that meets its budget lowers
  // the interval's top to its plan's peak, each that does not raises the
  // bottom; each has its own work limit.
  if (!best)
    return absl::OkStatus();
  int64_t low = floorBytes(), high = best->peakBytes;
  for (int step = 0; step < kLowestPeakBisections && low + 1 < high; ++step) {
    int64_t budget = low + (high - low) / 2;
    int64_t outerWork = std::exchange(work_, 0);
    absl::StatusOr<std::optional<Trial>> trial =
        searchCandidates(candidates, budget, kBisecting);
    work_ = outerWork;
    REMAT_RETURN_IF_ERROR(trial.status());
    if (*trial && (*trial)->peakBytes <= budget)
      high = (*trial)->peakBytes;
    else
      low = budget;
    if (*trial && (*trial)->peakBytes < best->peakBytes)
      best = std::move(*trial);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Trial>>
BudgetSearch::searchLowestPeak(llvm::ArrayRef<std::string> candidates) {
  // Its own work limit, so that the plan does not depend on how far out of
  // reach the budget is.
  work_ = 0;
  REMAT_ASSIGN_OR_RETURN(
      std::optional<Trial> best,
      searchCandidates(candidates, floorBytes(), kFromFloor));
  REMAT_RETURN_IF_ERROR(bisectLowestPeak(candidates, best));
  // The plan of least modelled peak recomputes more than plans the model
  // wrongly believes over it (docs/strategies.md#budgets): the planners
  // that take a budget are told the lowest peak found, for the cheapest
  // plan there. (Their candidates are those of the differentiated graph.)
  if (best && best->peakBytes > floorBytes() && best->flopsRecompute > 0) {
    REMAT_ASSIGN_OR_RETURN(
        std::optional<Trial> atLowest,
        searchCandidates(autoCandidates(own().builder->graph(),
                                        options_.plannerRegistry(),
                                        CandidateSet::AtLowestPeak,
                                        setup_.jointForwardOps.has_value()),
                         best->peakBytes, kAtLowestPeak,
                         best->flopsRecompute));
    if (atLowest && atLowest->peakBytes <= best->peakBytes &&
        atLowest->flopsRecompute < best->flopsRecompute)
      best = std::move(atLowest);
  }
  return best;
}

absl::StatusOr<Trial> BudgetSearch::tryCalibrated(Base &from,
                                                  const TrialRequest &request) {
  assert(request.budget && "a calibration needs a budget");
  int64_t budget = *request.budget;
  std::optional<Trial> best;
  REMAT_ASSIGN_OR_RETURN(Planner * planner,
                         plannerFor(from, request.planner));
  CalibrationRounds calibration(*from.builder, request.planner, *planner,
                                request.keepGraph);
  int tried = 0;
  // One plan told `told`, kept where it is the best so far.
  auto tell = [&](int64_t told) -> absl::StatusOr<CalibrationRounds::Outcome> {
    REMAT_ASSIGN_OR_RETURN(CalibrationRounds::Outcome outcome,
                           calibration.run(told));
    std::optional<Trial> &built = outcome.built;
    if (built && (!best || isBetter(*built, *best, budget)))
      best = std::move(built);
    best->builds = calibration.builds();
    best->unbuilt = ++tried - calibration.builds();
    return outcome;
  };
  // Where each search starts: the budget and, once, where a plan that fits
  // though it is past its planner's own model puts that model, off by what
  // it missed, on the budget (it halves VGG-16's recomputation at 80%; from
  // the told budget ResNet-50's at 30% is a fifth less: both are searched).
  std::vector<int64_t> starts = {budget};
  for (size_t start = 0; start < starts.size(); ++start) {
    // Told budgets known to fit (lo) and known to overshoot (hi).
    int64_t lo = 0, hi = std::numeric_limits<int64_t>::max();
    int64_t told = starts[start];
    for (int round = 0; round < request.rounds; ++round) {
      // The same plan again (a model that admits nothing cheaper or
      // smaller) will not move.
      std::optional<std::pair<int64_t, int64_t>> bestFigures;
      if (best)
        bestFigures = {best->peakBytes, best->flopsRecompute};
      REMAT_ASSIGN_OR_RETURN(CalibrationRounds::Outcome outcome, tell(told));
      int64_t peak = outcome.peakBytes, flops = outcome.flopsRecompute;
      std::optional<int64_t> modelled = outcome.modelledPeakBytes;
      bool same = bestFigures && *bestFigures == std::pair(peak, flops);
      // A plan over the told budget by its planner's own model (nothing
      // fitted there) says nothing of what told budgets overshoot: over the
      // budget, the next is the one at which that model, off by what it
      // missed, would land on the budget.
      bool pastModel = modelled && *modelled > told;
      int64_t miss = 0;
      if (pastModel && peak <= budget && starts.size() == 1 &&
          !llvm::SubOverflow(budget, peak, miss) &&
          !llvm::AddOverflow(*modelled, miss, miss))
        starts.push_back(miss);
      pastModel &= peak > budget;
      // Unless a lower told budget fitted: the planner's plans then do
      // change below this one, and the two bracket the search. A planner
      // whose model is over every told budget (XLA's pass on Inductor's
      // ResNet-50) was otherwise never told one between them
      // (docs/planners.md, "chain").
      pastModel &= lo == 0;
      if (same)
        break;
      if (peak <= budget) {
        lo = std::max(lo, told);
        // A plan that recomputes nothing cannot get cheaper.
        if (flops == 0)
          break;
      } else if (!pastModel) {
        hi = std::min(hi, told);
      }
      if (llvm::SubOverflow(budget, peak, miss) ||
          llvm::AddOverflow(pastModel ? *modelled : told, miss, told))
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
  }
  // Where every told budget tried overshot, told budgets over the user's
  // may still fit: the min-cut's knapsack recomputes less told more, and
  // the cut it then makes can peak lower (the small U-Net at 80% of its
  // peak: told the budget, 5.6% over; told 8 to 21% more, it fits). They
  // are sampled up to plain autodiff's peak until one fits, then on while
  // they fit, each for no more recompute.
  int64_t ceiling = from.builder->plainSchedule().peakBytesBefore;
  bool fitted = false;
  for (int step = 1; best->peakBytes > budget || fitted; ++step) {
    if (step > request.rounds || ceiling <= budget)
      break;
    int64_t told = budget + (ceiling - budget) / (request.rounds + 1) * step;
    REMAT_ASSIGN_OR_RETURN(CalibrationRounds::Outcome outcome, tell(told));
    if (outcome.peakBytes > budget && fitted)
      break;
    fitted = outcome.peakBytes <= budget;
    if (fitted && outcome.flopsRecompute == 0)
      break;
  }
  return std::move(*best);
}

} // namespace remat

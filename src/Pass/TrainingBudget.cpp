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
/// in a geometric series, `all` and the other planners, and keeps the one
/// with the least recompute FLOPs. Every candidate is planned first: once a
/// plan fits, a later one whose copies cost more (counted without building,
/// `recomputeFlopsLowerBound`) is dropped unbuilt. The chain planner plans
/// against a model of memory; the search shifts the budget it gives it by
/// what the model missed. Where summing partial gradients as they come
/// lowers plain autodiff's peak, every candidate is tried on that graph too.
///
//===----------------------------------------------------------------------===//

#include "Pass/TrainingInternal.h"

#include "remat/Analysis/PeakFloor.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Recompute.h"
#include "remat/Support/Status.h"
#include "remat/Support/Stopwatch.h"
#include "remat/Support/Units.h"

#include <fmt/format.h>

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>
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

/// Graphs of at most this many compute ops (parameters and inputs, which
/// the MILP holds as constants, not counted) also get the `ilp` planner,
/// limited to `kIlpNodes` branch-and-bound nodes, a limit that gives the
/// same plan on any machine (`kIlpSeconds` only guards against a root that
/// never ends). CBC proves some such optima within it and finds plans where
/// no other planner fits (the 4-layer MLP of docs/benchmarks.md at 70%),
/// and beats every kept-value plan where a budget needs a value recomputed
/// more than once.
constexpr int64_t kIlpOpLimit = 24;
constexpr int kIlpNodes = 1000;
constexpr int kIlpSeconds = 60;

/// Graphs of at most this many ops also get Checkmate's baselines, whose
/// R and S matrices cost O(nodes^2): a few seconds at this size.
constexpr int64_t kApOpLimit = 5000;

/// `auto` stops trying candidates once they have built this many ops in all
/// (a plan not built counting `1 / kPlansPerBuild` of its graph): a
/// planning-time limit that keeps the output deterministic. On a million-op
/// graph, the `chain` DP's build alone; every candidate below about 30k ops.
constexpr int64_t kSearchOpBudget = 1'250'000;

/// A second grouping of the block chain for the DP, finer than its default
/// 32 stages: boundaries elsewhere, and within a few slots of a budget more
/// of them fit (the 1000-layer MLP at half its peak recomputes 512 layers
/// instead of 513, the fewest any schedule can: docs/benchmarks.md). The
/// DP's time grows as stages cubed: about twice the default's.
constexpr int kFinerChainStages = 40;

/// The strategies `auto` tries, most promising first: plain autodiff, for
/// one budget the `chain` DP, `sqrtn` and `memory` as they choose, K = 1,
/// 2, 3, 4, 6, 9, 13, ... (ratio 3/2) memory-balanced segments up to the op
/// count, recomputing everything, the cheap ops (`speed`), the zoo's blocks
/// (`regions`), and for one budget the DP with parameter
/// gradients counted late (`chain=late`) and on finer stages, XLA's and
/// PyTorch's passes (`xla`, `mincut`), Checkmate's baselines and, on small
/// graphs, the ILP.
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
  llvm::append_range(strategies,
                     std::vector<std::string>{"all", "speed", "regions"});
  if (forOneBudget)
    llvm::append_range(
        strategies,
        std::vector<std::string>{"chain=late",
                                 fmt::format("chain={}", kFinerChainStages),
                                 "xla", "mincut"});
  if (forOneBudget && limit <= kApOpLimit)
    llvm::append_range(strategies,
                       std::vector<std::string>{"ap-sqrtn", "ap-greedy"});
  int64_t computeOps =
      limit - int64_t(graph.inputs().size() + graph.params().size());
  if (forOneBudget && computeOps <= kIlpOpLimit)
    strategies.push_back(
        fmt::format("ilp={},nodes={}", kIlpSeconds, kIlpNodes));
  return strategies;
}

/// A plan made but not built costs the search this share of a build: about
/// what planning costs beside copying, rewriting, scheduling and simulating
/// a million-op graph.
constexpr int64_t kPlansPerBuild = 4;

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

/// Plain autodiff's trial, from the schedule `base` made for it: built only
/// if chosen. A graph on devices is judged by its largest device, which
/// only a build knows.
std::optional<Trial> unbuiltPlainTrial(const DifferentiatedGraph &base,
                                       const TrainingOptions &options) {
  if (!options.finalPipeline.empty())
    return std::nullopt;
  Trial plain{"none", base.plainSchedule.peakBytesAfter, 0, 0.0};
  plain.builds = 0;
  return plain;
}

/// `strategy`'s plan of `base` with its options, told `budget`.
absl::StatusOr<BasePlan> planStrategy(const DifferentiatedGraph &base,
                                      const TrainingOptions &options,
                                      const std::string &strategy,
                                      std::optional<int64_t> budget) {
  TrainingOptions trial = options;
  trial.strategy = strategy;
  return planDifferentiated(base, trial, budget);
}

/// Builds `plan`, `strategy`'s, on a copy of `base`; the trial keeps the
/// graph when `keepGraph`.
absl::StatusOr<Trial> buildPlan(const DifferentiatedGraph &base,
                                const TrainingOptions &options,
                                const std::string &strategy,
                                std::optional<int64_t> budget,
                                const BasePlan &plan, bool keepGraph) {
  TrainingOptions trial = options;
  trial.strategy = strategy;
  REMAT_ASSIGN_OR_RETURN(
      TrainingBuild build,
      buildFromDifferentiated(base, trial, budget, /*verify=*/false, &plan));
  Trial result{strategy, build.report.planPeakBytes(),
               build.report.flopsRecompute, build.report.overhead};
  if (keepGraph)
    result.build = std::move(build);
  return result;
}

/// Plans `strategy` and builds it on a copy of `base`, unless its plan
/// recomputes more than `toBeat` FLOPs (the best fitting plan's): then it
/// could not win, and the trial, not built, has no figures. The trial keeps
/// the graph when `keepGraph`.
absl::StatusOr<Trial> tryStrategy(const DifferentiatedGraph &base,
                                  const TrainingOptions &options,
                                  const std::string &strategy,
                                  std::optional<int64_t> budget = {},
                                  bool keepGraph = true,
                                  std::optional<int64_t> toBeat = {}) {
  REMAT_ASSIGN_OR_RETURN(BasePlan plan,
                         planStrategy(base, options, strategy, budget));
  if (toBeat &&
      recomputeFlopsLowerBound(*base.graph, base.forwardOpIdBound, plan.plan,
                               base.plainOrder) > *toBeat) {
    Trial dropped{strategy};
    dropped.builds = 0;
    dropped.unbuilt = 1;
    dropped.dropped = true;
    return dropped;
  }
  return buildPlan(base, options, strategy, budget, plan, keepGraph);
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
  // Every round's plan and figures: a plan made again is not built again.
  struct Round {
    RematPlan plan;
    int64_t peakBytes, flopsRecompute;
  };
  std::vector<Round> done;
  int builds = 0;
  // Told budgets known to fit (lo) and known to overshoot (hi).
  int64_t lo = 0, hi = std::numeric_limits<int64_t>::max();
  int64_t told = budget;
  for (int round = 0; round < rounds; ++round) {
    REMAT_ASSIGN_OR_RETURN(BasePlan plan,
                           planStrategy(base, options, strategy, told));
    const Round *again = nullptr;
    for (const Round &earlier : done)
      if (samePlan(earlier.plan, plan.plan))
        again = &earlier;
    std::optional<Trial> built;
    int64_t peak, flops;
    if (again) {
      peak = again->peakBytes;
      flops = again->flopsRecompute;
    } else {
      REMAT_ASSIGN_OR_RETURN(built, buildPlan(base, options, strategy, told,
                                              plan, keepGraph));
      ++builds;
      built->plannerBudget = told;
      peak = built->peakBytes;
      flops = built->flopsRecompute;
      done.push_back({std::move(plan.plan), peak, flops});
    }
    // The same plan again (a model that admits nothing cheaper or smaller)
    // will not move.
    bool same =
        best && peak == best->peakBytes && flops == best->flopsRecompute;
    if (built && (!best || isBetter(*built, *best, budget)))
      best = std::move(built);
    best->builds = builds;
    best->unbuilt = round + 1 - builds;
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

/// A forward graph differentiated with one aggregation of partial
/// gradients, and the options its plans are built with.
struct SearchBase {
  const DifferentiatedGraph *graph;
  const TrainingOptions *options;
  /// Added to its candidates' names in the search's timings.
  const char *label;
};

/// How plans of the graph with partial gradients summed at once are named
/// in timings and sweeps (after the strategy).
constexpr const char *kSummedAtOnce = ", gradients summed at once";

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
  // Partial gradients summed at once (a graph on devices is left to the
  // options given: its plain peak is known only once built).
  std::unique_ptr<Graph> summedGraph;
  if (searching && options.searchAggregation && options.finalPipeline.empty() &&
      aggregationMayMatter(graph, options))
    summedGraph = graph.clone(Graph::CloneIds::Keep);
  REMAT_ASSIGN_OR_RETURN(DifferentiatedGraph base,
                         differentiateOnce(graph, options));
  searchTimings.push_back({"autodiff", 0, stopwatch.seconds()});
  // The least peak any plan could reach, named before the graph changes. A
  // graph on devices is judged by its largest device, which it does not
  // bound.
  std::optional<PeakFloor> floor;
  std::string floorOp, floorOpText;
  if (options.finalPipeline.empty()) {
    REMAT_ASSIGN_OR_RETURN(floor,
                           computePeakFloor(graph, base.forwardOpIdBound));
    floorOp = floor->op ? floor->op->describe() : "";
    floorOpText = describePeakFloorOp(*floor);
  }
  stopwatch.restart();
  // The baseline resolves a share of plain autodiff's peak to bytes.
  std::optional<Trial> plain = unbuiltPlainTrial(base, options);
  if (!plain) {
    REMAT_ASSIGN_OR_RETURN(plain,
                           tryStrategy(base, options, "none", std::nullopt,
                                       /*keepGraph=*/searching));
  }
  double plainSeconds = stopwatch.seconds();
  if (!searching)
    searchTimings.push_back({"none", plain->builds, plainSeconds});
  int64_t plainPeak = plain->peakBytes;
  REMAT_ASSIGN_OR_RETURN(int64_t budget,
                         parseByteSize(*options.budget, plainPeak));

  // The bases searched, in order: summed at once first where that lowers
  // plain autodiff's peak (its plans start lower), then the options' own.
  std::vector<SearchBase> bases = {{&base, &options, ""}};
  TrainingOptions summedOptions = options;
  std::optional<DifferentiatedGraph> summed;
  std::optional<Trial> summedPlain;
  if (summedGraph) {
    stopwatch.restart();
    summedOptions.autodiff = summedAtOnce(options.autodiff);
    REMAT_ASSIGN_OR_RETURN(summed,
                           differentiateOnce(*summedGraph, summedOptions));
    summedPlain = unbuiltPlainTrial(*summed, summedOptions);
    searchTimings.push_back(
        {"autodiff, gradients summed at once", 0, stopwatch.seconds()});
    if (summedPlain->peakBytes < plainPeak) {
      bases.insert(bases.begin(), {&*summed, &summedOptions, kSummedAtOnce});
      // The floor bounds the plans of both graphs: the lower of theirs.
      REMAT_ASSIGN_OR_RETURN(
          PeakFloor summedFloor,
          computePeakFloor(*summedGraph, summed->forwardOpIdBound));
      if (summedFloor.bytes < floor->bytes) {
        floor = summedFloor;
        floorOp = floor->op ? floor->op->describe() : "";
        floorOpText = describePeakFloorOp(*floor) +
                      " in the graph with gradients summed at once";
      }
    }
  }

  // A given strategy is built once.
  std::optional<Trial> best;
  int64_t plansTried = 1;
  if (searching) {
    int64_t work = 0;
    plansTried = 0;
    for (int b = 0, e = int(bases.size()); b < e; ++b) {
      const SearchBase &from = bases[b];
      for (size_t i = 0; i < strategies.size() && work < kSearchOpBudget;
           ++i, ++plansTried) {
        const std::string &strategy = strategies[i];
        stopwatch.restart();
        std::optional<int64_t> toBeat;
        if (best && best->peakBytes <= budget)
          toBeat = best->flopsRecompute;
        Trial trial;
        double seconds = 0;
        if (strategy == "none") {
          trial = std::move(from.graph == &base ? *plain : *summedPlain);
          seconds = from.graph == &base ? plainSeconds : 0;
        } else if (isModelledPlanner(strategy)) {
          REMAT_ASSIGN_OR_RETURN(
              trial,
              tryCalibrated(*from.graph, *from.options, strategy, budget));
        } else {
          REMAT_ASSIGN_OR_RETURN(
              trial, tryStrategy(*from.graph, *from.options, strategy, budget,
                                 /*keepGraph=*/true, toBeat));
        }
        if (strategy != "none")
          seconds = stopwatch.seconds();
        trial.base = b;
        work += forwardOps * trial.builds +
                forwardOps / kPlansPerBuild * trial.unbuilt;
        searchTimings.push_back(
            {strategy + from.label, trial.builds, seconds, trial.unbuilt});
        if (!trial.dropped && (!best || isBetter(trial, *best, budget)))
          best = std::move(trial);
      }
    }
  } else {
    stopwatch.restart();
    if (isModelledPlanner(options.strategy)) {
      REMAT_ASSIGN_OR_RETURN(
          best, tryCalibrated(base, options, options.strategy, budget));
    } else {
      REMAT_ASSIGN_OR_RETURN(
          best, tryStrategy(base, options, options.strategy, budget));
    }
    searchTimings.push_back({options.strategy, best->builds,
                             stopwatch.seconds(), best->unbuilt});
  }
  // Plain autodiff chosen: built now.
  if (!best->build.graph) {
    stopwatch.restart();
    int64_t planned = best->peakBytes;
    const SearchBase &from = bases[best->base];
    REMAT_ASSIGN_OR_RETURN(best,
                           tryStrategy(*from.graph, *from.options, "none"));
    assert(best->peakBytes == planned &&
           "plain autodiff's build differs from its schedule");
    (void)planned;
    searchTimings.push_back({"none", 1, stopwatch.seconds()});
  }
  REMAT_RETURN_IF_ERROR(verifyBuild(best->build));
  graph.swap(*best->build.graph);
  TrainingReport report = std::move(best->build.report);
  report.searchTimings = std::move(searchTimings);
  // Plain autodiff is the options' own, whatever the plan's aggregation.
  report.peakBytesBefore = plainPeak;
  report.budgetBytes = budget;
  report.budgetMet = report.planPeakBytes() <= budget;
  report.plansTried = plansTried;
  if (floor) {
    report.peakFloorBytes = floor->bytes;
    report.peakFloorOp = floorOp;
  }
  if (!*report.budgetMet) {
    std::string warning = fmt::format(
        "no plan reaches the budget of {} ({} bytes); the lowest peak found "
        "is {} ({} bytes, strategy {})",
        formatBytes(budget), budget, formatBytes(report.planPeakBytes()),
        report.planPeakBytes(), report.strategy);
    if (floor && budget < floor->bytes)
      warning +=
          fmt::format("; no plan can fit: every plan peaks at {} ({} "
                      "bytes) or more, at {}",
                      formatBytes(floor->bytes), floor->bytes, floorOpText);
    else if (floor)
      warning +=
          fmt::format("; no plan can peak below {} ({} bytes), at {}",
                      formatBytes(floor->bytes), floor->bytes, floorOpText);
    report.warnings.push_back(std::move(warning));
  }
  return report;
}

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
         autoCandidates(graph, /*forOneBudget=*/false)) {
      if (strategy == "none")
        continue;
      REMAT_ASSIGN_OR_RETURN(Trial trial,
                             tryStrategy(from, fromOptions, strategy, plainPeak,
                                         /*keepGraph=*/false));
      trial.strategy += label;
      trials.push_back(std::move(trial));
    }
    // The DP plans for one budget: a few across the range, each calibrated
    // in fewer builds than a single budget gets.
    for (int percent : kSweepChainPercents) {
      REMAT_ASSIGN_OR_RETURN(Trial trial,
                             tryCalibrated(from, fromOptions, "chain",
                                           plainPeak / 100 * percent,
                                           kSweepCalibrationRounds,
                                           /*keepGraph=*/false));
      trial.strategy += label;
      trials.push_back(std::move(trial));
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

//===- BudgetTrials.cpp - Candidate plans of the budget search ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The candidates of the budget search, and one candidate planned, built
/// (or left unbuilt when it cannot win) and calibrated.
///
//===----------------------------------------------------------------------===//

#include "Pass/BudgetTrials.h"

#include "remat/IR/Graph.h"
#include "remat/Pass/Recompute.h"
#include "remat/Support/Status.h"

#include <fmt/format.h>

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <future>
#include <limits>
#include <memory>

namespace remat::budget {
namespace {

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

/// Larger graphs, up to this many compute ops, get `ilp` without the MILP
/// (`relaxed`): the relaxation's solution rounded to a schedule, which is
/// often the proven optimum (docs/planning-ilp.md#the-lower-bound) where the
/// kept-value and chain planners recompute several times as much (the
/// pre-activation ResNet-8 of basic blocks at 80%: 3.1x; DenseNet-121 at
/// 70%: 12.6x). Each CBC solve stops after `kRelaxedIlpNodes` nodes, within
/// the time guard (half of `kIlpSeconds` each) on the zoo: up to 11 s on
/// the 428 ops of DenseNet-121 (42 s on the 708 of DenseNet-201, beyond the
/// limit), 2 s on the transformer, with the plans of 1,000 nodes.
constexpr int64_t kRelaxedIlpOpLimit = 500;
constexpr int kRelaxedIlpNodes = 200;

/// Graphs of at most this many ops also get Checkmate's baselines, whose
/// R and S matrices cost O(nodes^2): a few seconds at this size.
constexpr int64_t kApOpLimit = 5000;

/// A second grouping of the block chain for the DP, finer than its default
/// 32 stages: boundaries elsewhere, and within a few slots of a budget more
/// of them fit (the 1000-layer MLP at half its peak recomputes 512 layers
/// instead of 513, the fewest any schedule can: docs/benchmarks.md). The
/// DP's time grows as stages cubed: about twice the default's.
constexpr int kFinerChainStages = 40;

/// `strategy`'s plan of `base` with its options, told `budget`; by
/// `planner` (made for `strategy`) when given, else by a new one.
absl::StatusOr<BasePlan> planStrategy(const DifferentiatedGraph &base,
                                      const TrainingOptions &options,
                                      const std::string &strategy,
                                      std::optional<int64_t> budget,
                                      Planner *planner = nullptr) {
  TrainingOptions trial = options;
  trial.strategy = strategy;
  if (planner)
    return planDifferentiated(base, trial, budget, *planner);
  return planDifferentiated(base, trial, budget);
}

/// Builds `plan`, `strategy`'s, on a copy of `base` (`copy` when made
/// beforehand); the trial keeps the graph when `keepGraph`.
absl::StatusOr<Trial> buildPlan(const DifferentiatedGraph &base,
                                const TrainingOptions &options,
                                const std::string &strategy,
                                std::optional<int64_t> budget,
                                const BasePlan &plan, bool keepGraph,
                                std::unique_ptr<Graph> copy = nullptr) {
  TrainingOptions trial = options;
  trial.strategy = strategy;
  REMAT_ASSIGN_OR_RETURN(TrainingBuild build,
                         buildFromDifferentiated(base, trial, budget,
                                                 /*verify=*/false, &plan,
                                                 std::move(copy)));
  Trial result{strategy, build.report.planPeakBytes(),
               build.report.flopsRecompute, build.report.overhead};
  if (keepGraph)
    result.build = std::move(build);
  return result;
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

} // namespace

std::vector<std::string> autoCandidates(const Graph &graph, CandidateSet set) {
  bool forOneBudget = set != CandidateSet::Sweep;
  // Plain autodiff and the planners that take no budget.
  bool budgetFree = set != CandidateSet::AtLowestPeak;
  // The rule-based planners' own choices early, so that `auto` is never
  // worse than them at the same budget. The DP and the ILP plan for one
  // budget.
  std::vector<std::string> strategies;
  if (budgetFree)
    strategies.push_back("none");
  if (forOneBudget)
    strategies.push_back("chain");
  int64_t limit = int64_t(graph.numOps());
  if (budgetFree) {
    llvm::append_range(strategies, std::vector<std::string>{"sqrtn", "memory"});
    for (int64_t k = 1; k <= limit; k = std::max(k + 1, k + k / 2))
      strategies.push_back(fmt::format("sqrtn={}", k));
    llvm::append_range(strategies,
                       std::vector<std::string>{"all", "speed", "regions"});
  }
  if (forOneBudget)
    llvm::append_range(
        strategies,
        std::vector<std::string>{"chain=late",
                                 fmt::format("chain={}", kFinerChainStages),
                                 "xla", "xla=scheduled", "mincut"});
  if (forOneBudget && limit <= kApOpLimit)
    llvm::append_range(strategies,
                       std::vector<std::string>{"ap-sqrtn", "ap-greedy"});
  int64_t computeOps =
      limit - int64_t(graph.inputs().size() + graph.params().size());
  if (forOneBudget && computeOps <= kIlpOpLimit)
    strategies.push_back(
        fmt::format("ilp={},nodes={}", kIlpSeconds, kIlpNodes));
  else if (forOneBudget && computeOps <= kRelaxedIlpOpLimit)
    strategies.push_back(
        fmt::format("ilp={},nodes={},relaxed", kIlpSeconds, kRelaxedIlpNodes));
  return strategies;
}

bool isModelledPlanner(llvm::StringRef strategy) {
  return strategy == "chain" || strategy.startswith("chain=");
}

bool isCalibratedInSearch(llvm::StringRef strategy) {
  return isModelledPlanner(strategy) || strategy == "xla" ||
         strategy.startswith("xla=") || strategy == "mincut";
}

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

std::optional<Trial> unbuiltPlainTrial(const DifferentiatedGraph &base,
                                       const TrainingOptions &options) {
  if (!options.finalPipeline.empty())
    return std::nullopt;
  Trial plain{"none", base.plainSchedule.peakBytesAfter, 0, 0.0};
  plain.builds = 0;
  return plain;
}

absl::StatusOr<Trial> tryStrategy(const DifferentiatedGraph &base,
                                  const TrainingOptions &options,
                                  const std::string &strategy,
                                  std::optional<int64_t> budget, bool keepGraph,
                                  std::optional<int64_t> toBeat) {
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

namespace {

/// A calibrated planner's plans so far, each built once: a plan made again
/// at another told budget is not built again.
class CalibrationRounds {
public:
  CalibrationRounds(const DifferentiatedGraph &base,
                    const TrainingOptions &options, const std::string &strategy,
                    bool keepGraph)
      : base_(base), options_(options), strategy_(strategy),
        keepGraph_(keepGraph) {}

  /// What one round told `told` gives: the plan's figures, its own
  /// model's peak, and the trial when it was built now.
  struct Outcome {
    int64_t peakBytes, flopsRecompute;
    std::optional<int64_t> modelledPeakBytes;
    std::optional<Trial> built;
  };

  absl::StatusOr<Outcome> run(int64_t told) {
    // One planner plans every round: it may keep what the budget does not
    // change.
    if (!planner_) {
      REMAT_ASSIGN_OR_RETURN(planner_,
                             PlannerRegistry::global().create(strategy_));
    }
    // The first plan is always built: its copy of the graph is made on a
    // second thread while the planner reads the same graph.
    std::future<std::unique_ptr<Graph>> copy;
    if (done_.empty())
      copy = std::async(std::launch::async | std::launch::deferred,
                        [graph = base_.graph] {
                          return graph->clone(Graph::CloneIds::Keep);
                        });
    REMAT_ASSIGN_OR_RETURN(
        BasePlan plan,
        planStrategy(base_, options_, strategy_, told, planner_.get()));
    std::optional<int64_t> modelled = plan.plan.modelledPeakBytes;
    for (const Round &earlier : done_)
      if (samePlan(earlier.plan, plan.plan))
        return Outcome{earlier.peakBytes, earlier.flopsRecompute, modelled,
                       std::nullopt};
    REMAT_ASSIGN_OR_RETURN(Trial built,
                           buildPlan(base_, options_, strategy_, told, plan,
                                     keepGraph_,
                                     copy.valid() ? copy.get() : nullptr));
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
  const DifferentiatedGraph &base_;
  const TrainingOptions &options_;
  const std::string &strategy_;
  bool keepGraph_;
  std::unique_ptr<Planner> planner_;
  std::vector<Round> done_;
};

} // namespace

absl::StatusOr<Trial> tryCalibrated(const DifferentiatedGraph &base,
                                    const TrainingOptions &options,
                                    const std::string &strategy, int64_t budget,
                                    int rounds, bool keepGraph) {
  std::optional<Trial> best;
  CalibrationRounds calibration(base, options, strategy, keepGraph);
  int tried = 0;
  // Where each search starts: the budget and, once, where a plan that fits
  // though it is past its planner's own model puts that model, off by what
  // it missed, on the budget (it halves VGG-16's recomputation at 80%; from
  // the told budget ResNet-50's at 30% is a fifth less: both are searched).
  std::vector<int64_t> starts = {budget};
  for (size_t start = 0; start < starts.size(); ++start) {
    // Told budgets known to fit (lo) and known to overshoot (hi).
    int64_t lo = 0, hi = std::numeric_limits<int64_t>::max();
    int64_t told = starts[start];
    for (int round = 0; round < rounds; ++round) {
      REMAT_ASSIGN_OR_RETURN(CalibrationRounds::Outcome outcome,
                             calibration.run(told));
      int64_t peak = outcome.peakBytes, flops = outcome.flopsRecompute;
      std::optional<int64_t> modelled = outcome.modelledPeakBytes;
      std::optional<Trial> &built = outcome.built;
      // The same plan again (a model that admits nothing cheaper or
      // smaller) will not move.
      bool same =
          best && peak == best->peakBytes && flops == best->flopsRecompute;
      if (built && (!best || isBetter(*built, *best, budget)))
        best = std::move(built);
      best->builds = calibration.builds();
      best->unbuilt = ++tried - calibration.builds();
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
  return std::move(*best);
}

absl::StatusOr<Trial> tryForBudget(const DifferentiatedGraph &base,
                                   const TrainingOptions &options,
                                   const std::string &strategy, int64_t budget,
                                   int rounds, bool keepGraph,
                                   std::optional<int64_t> toBeat) {
  if (isCalibratedInSearch(strategy))
    return tryCalibrated(base, options, strategy, budget, rounds, keepGraph);
  return tryStrategy(base, options, strategy, budget, keepGraph, toBeat);
}

AutodiffOptions summedAtOnce(AutodiffOptions autodiff) {
  autodiff.aggregateCount = 2;
  autodiff.aggregateBytes = 0;
  return autodiff;
}

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

} // namespace remat::budget

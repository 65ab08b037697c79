//===- IlpPlanner.cpp - The `ilp` planner ---------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--planner=ilp[=SECONDS][,nodes=N][,cold][,relaxed][,windows[=K]]` with a
/// budget:
/// Checkmate's MILP over the training graph (Problem/GraphProblem.h), solved by
/// CBC within the time limit, its schedule realised as recompute steps. CBC
/// starts from the cheapest plan within the budget among the AP baselines
/// and the planners of recompute steps (`ilp=cold` does not); `relaxed`
/// stops after the relaxation and its rounded schedule; `windows` improves
/// the start in windows of the MILP (at most K), as it does where the MILP
/// is too large to build. The report carries
/// the proven gap. When CBC proves that no schedule fits, or finds none in
/// time, the plan falls back to recomputing everything and says so.
///
//===----------------------------------------------------------------------===//

#include "Planning/ApBaselines.h"
#include "Planning/Problem/GraphProblem.h"
#include "Planning/Planners.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include <fmt/format.h>

#include <cmath>

namespace remat::planners {
namespace {

/// How `ilp[=SECONDS][,cold]` is spelled.
struct IlpPlannerOptions {
  std::optional<double> timeLimit;
  /// Branch-and-bound nodes (`nodes=N`): a limit that gives the same plan on
  /// any machine.
  std::optional<int64_t> maxNodes;
  /// Solve without the baselines' warm start.
  bool cold = false;
  /// Stop after the relaxation (`relaxed`): its rounded schedule or the warm
  /// start, with the relaxation's bound.
  bool relaxed = false;
  /// Search windows of the start (`windows`) instead of the whole MILP, as
  /// it does where the MILP is too large.
  bool windows = false;
  /// At most this many windows (`windows=K`).
  std::optional<int64_t> maxWindows;
};

/// A schedule of the start planners, who planned it and what it costs.
struct WarmStart {
  std::string planner;
  problem::RematSchedule schedule;
  problem::ScheduleCost cost;
};

/// The schedules the MILP may start from, and fall back on.
struct Starts {
  /// The cheapest within the budget: CBC's start.
  std::optional<WarmStart> fitting;
  /// The one of least modelled peak (then least cost), within the budget or
  /// not: the plan where CBC finds none.
  std::optional<WarmStart> lowestPeak;
};

/// The AP baselines and the plans of the registry's warm-start planners
/// (`PlannerSearchInfo::ilpWarmStarts`) mapped onto `graph`'s nodes; a plan
/// that fails or does not map is passed over.
absl::StatusOr<Starts> findStarts(const PlanningProblem &problem,
                                  const problem::GraphProblem &graph) {
  Starts starts;
  auto consider = [&](std::string planner, problem::RematSchedule schedule) {
    absl::StatusOr<problem::ScheduleCost> cost =
        problem::evaluateSchedule(graph.problem, schedule);
    if (!cost.ok())
      return;
    bool fits = cost->peakBytes <= graph.problem.budgetBytes;
    bool cheaper =
        fits && (!starts.fitting ||
                 cost->recomputeCost < starts.fitting->cost.recomputeCost);
    const std::optional<WarmStart> &low = starts.lowestPeak;
    bool lower = !low || cost->peakBytes < low->cost.peakBytes ||
                 (cost->peakBytes == low->cost.peakBytes &&
                  cost->recomputeCost < low->cost.recomputeCost);
    WarmStart start{std::move(planner), std::move(schedule), *cost};
    if (lower)
      starts.lowestPeak = start;
    if (cheaper)
      starts.fitting = std::move(start);
  };
  REMAT_ASSIGN_OR_RETURN(auto baseline,
                         chain::bestBaselineSchedule(graph.problem));
  if (baseline)
    consider(baseline->second, std::move(baseline->first.schedule));
  PlanningProblem quiet = problem;
  quiet.onProgress = nullptr;
  for (std::string &planner : problem.plannerRegistry().ilpWarmStarts()) {
    absl::StatusOr<RematPlan> plan = planRematerialization(quiet, planner);
    if (!plan.ok() || !plan->schedule)
      continue;
    if (std::optional<problem::RematSchedule> schedule =
            problem::scheduleOfSteps(graph, *plan->schedule))
      consider(std::move(planner), std::move(*schedule));
  }
  return starts;
}

/// "1 window", "3 windows".
std::string windowCount(int64_t windows) {
  return fmt::format("{} window{}", windows, windows == 1 ? "" : "s");
}

class IlpPlanner : public Planner {
public:
  explicit IlpPlanner(IlpPlannerOptions options) : options_(options) {}

  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    if (!problem.budgetBytes)
      return invalidArgument("planner 'ilp' needs a budget (--budget=SIZE)");
    problem::GraphProblem graph =
        problem::buildGraphProblem(problem, problem::GraphModel::Scheduled);
    graph.problem.budgetBytes = *problem.budgetBytes;
    REMAT_RETURN_IF_ERROR(problem::validateProblem(graph.problem));

    ilp::IlpOptions options;
    options.timeLimitSeconds =
        options_.timeLimit.value_or(problem.timeLimitSeconds);
    options.maxNodes = options_.maxNodes;
    options.searchMilp = !options_.relaxed;
    options.neighborhoods = options_.windows;
    options.maxNeighborhoods = options_.maxWindows;
    if (problem.onProgress)
      options.onProgress = [&](const ilp::IlpProgress &progress) {
        problem.onProgress(fmt::format(
            "ilp: {:.1f} s, incumbent {}, bound {:.0f}, gap {}, {}",
            progress.seconds,
            progress.incumbent ? fmt::format("{:.0f}", *progress.incumbent)
                               : std::string("none"),
            progress.bound,
            progress.gap ? fmt::format("{:.2f}%", 100 * *progress.gap)
                         : std::string("-"),
            progress.neighborhoods ? windowCount(progress.neighborhoods)
                                   : fmt::format("{} nodes", progress.nodes)));
      };
    if (problem.onProgress)
      problem.onProgress(fmt::format("ilp: {} nodes, budget {}",
                                     graph.problem.nodes.size(),
                                     formatBytes(*problem.budgetBytes)));
    Starts starts;
    if (!options_.cold &&
        graph.problem.nodes.size() <= chain::kMaxBaselineNodes) {
      REMAT_ASSIGN_OR_RETURN(starts, findStarts(problem, graph));
      if (std::optional<WarmStart> &start = starts.fitting) {
        options.warmStart = std::move(start->schedule);
        if (problem.onProgress)
          problem.onProgress(
              fmt::format("ilp: warm start from {}, recompute cost {}",
                          start->planner, start->cost.recomputeCost));
      }
    }
    REMAT_ASSIGN_OR_RETURN(ilp::IlpResult result,
                           ilp::solveCheckmateIlp(graph.problem, options));
    RematPlan plan;
    if (!result.solverFailure.empty())
      plan.warnings.push_back(fmt::format(
          "ilp: a CBC solve gave nothing back ({}); planned from the others",
          result.solverFailure));
    // Windows asked for need no MILP: its size is no news then.
    if (!result.milpSkipped.empty() && !options_.windows)
      plan.warnings.push_back(fmt::format(
          "ilp: {}; planned from the relaxation and the warm start{}",
          result.milpSkipped,
          result.neighborhoods ? ", improved in windows of the MILP" : ""));
    bool noMilp = options_.relaxed || options_.windows ||
                  !result.milpSkipped.empty();
    if (result.status == ilp::IlpStatusKind::Infeasible ||
        result.status == ilp::IlpStatusKind::NoSolution) {
      std::string why = fmt::format(
          "ilp: {} within the budget of {} ({} nodes)",
          result.status == ilp::IlpStatusKind::Infeasible
              ? "no schedule with the gradient ops in their scheduled order "
                "fits"
          : noMilp ? "no schedule found without the MILP"
                   : "no schedule found in the time limit",
          formatBytes(*problem.budgetBytes), graph.problem.nodes.size());
      // The start of least modelled peak, where it is below keeping
      // everything; else every forward value recomputed, as Checkmate's
      // fallback does.
      const std::optional<WarmStart> &low = starts.lowestPeak;
      std::optional<problem::ScheduleCost> keepAll;
      if (low) {
        REMAT_ASSIGN_OR_RETURN(
            keepAll, problem::evaluateSchedule(
                         graph.problem, problem::keepAllSchedule(graph.problem)));
      }
      if (low && low->cost.peakBytes < keepAll->peakBytes) {
        plan.budgetNotes.push_back(fmt::format(
            "{}; planned the lowest modelled peak of its starts, {} ({})", why,
            formatBytes(low->cost.peakBytes), low->planner));
        plan.schedule = problem::stepsOf(graph, low->schedule);
        plan.modelledPeakBytes = low->cost.peakBytes;
        return plan;
      }
      plan.budgetNotes.push_back(
          fmt::format("{}; recomputing every forward value instead", why));
      return plan;
    }
    if (problem.onProgress && result.settledByBound)
      problem.onProgress("ilp: a schedule meets the relaxation's lower "
                         "bound: optimal without the MILP");
    if (problem.onProgress)
      problem.onProgress(fmt::format(
          "ilp: plan recomputes {} FLOPs, modelled peak {} at node {}",
          result.cost.recomputeCost, formatBytes(result.cost.peakBytes),
          result.cost.peakNode));
    plan.schedule = problem::stepsOf(graph, result.schedule);
    plan.modelledPeakBytes = result.cost.peakBytes;
    plan.optimalityGap = result.gap;
    // Windows asked for are a search without proof: their gap is in the
    // report and on --progress, not a warning.
    bool askedWindows = options_.windows;
    if (result.status == ilp::IlpStatusKind::Feasible && askedWindows &&
        problem.onProgress)
      problem.onProgress(fmt::format(
          "ilp: {} of the MILP; the plan is within {:.2f}% of the optimal "
          "recompute cost",
          windowCount(result.neighborhoods), 100 * result.gap));
    if (result.status == ilp::IlpStatusKind::Feasible && !askedWindows)
      plan.warnings.push_back(fmt::format(
          "ilp: {}; the plan is within {:.2f}% of the optimal recompute cost",
          options_.relaxed        ? "relaxed, no MILP"
          : result.neighborhoods  ? windowCount(result.neighborhoods) +
                                        " of the MILP"
          : noMilp                ? "no MILP"
                                  : "stopped at its limit",
          100 * result.gap));
    return plan;
  }

private:
  IlpPlannerOptions options_;
};

/// Parses the text after `ilp=`: a positive, finite time limit in seconds
/// (no limit is the planner without one),
/// `nodes=N`, `cold`, `relaxed` and `windows[=K]`, each at most once,
/// comma-separated.
absl::StatusOr<IlpPlannerOptions> parseIlpOptions(llvm::StringRef argument) {
  REMAT_ASSIGN_OR_RETURN(std::vector<std::string> items,
                         splitPlannerList("ilp", argument));
  IlpPlannerOptions options;
  for (llvm::StringRef item : items) {
    // `nodes=N` and `windows=K` take a positive count.
    auto [key, count] = item.split('=');
    bool counted = key == "nodes" || (key == "windows" && !count.empty());
    bool repeated = item == "cold"      ? options.cold
                    : item == "relaxed" ? options.relaxed
                    : key == "windows"  ? options.windows
                    : key == "nodes"    ? options.maxNodes.has_value()
                                        : options.timeLimit.has_value();
    if (repeated)
      return invalidArgument("planner 'ilp' takes one time limit, one node "
                             "limit, 'cold', 'relaxed' and 'windows' at most "
                             "once, got 'ilp={}'",
                             argument.str());
    if (item == "cold" || item == "relaxed" || item == "windows") {
      (item == "cold"      ? options.cold
       : item == "relaxed" ? options.relaxed
                           : options.windows) = true;
      continue;
    }
    if (counted) {
      int64_t value = 0;
      if (count.getAsInteger(10, value) || value < 1)
        return invalidArgument("planner 'ilp' takes a positive {} limit, "
                               "got 'ilp={}'",
                               key == "nodes" ? "node" : "window",
                               argument.str());
      if (key == "nodes") {
        options.maxNodes = value;
      } else {
        options.windows = true;
        options.maxWindows = value;
      }
      continue;
    }
    double value = 0;
    if (item.getAsDouble(value) || !(value > 0) || !std::isfinite(value))
      return invalidArgument("planner 'ilp' takes a positive, finite time "
                             "limit in "
                             "seconds, got 'ilp={}'",
                             argument.str());
    options.timeLimit = value;
  }
  if (options.relaxed && options.windows)
    return invalidArgument("planner 'ilp' stops after the relaxation with "
                           "'relaxed' and searches on with 'windows': not "
                           "both, got 'ilp={}'",
                           argument.str());
  return options;
}

} // namespace

namespace {

/// Graphs of at most this many compute ops (parameters and inputs, which
/// the MILP holds as constants, not counted) are also planned by the ILP in
/// `auto`, limited to `kAutoNodes` branch-and-bound nodes, a limit that gives
/// the same plan on any machine (`kAutoSeconds` only guards against a root
/// that never ends). CBC proves some such optima within it and finds plans
/// where no other planner fits (docs/benchmarks.md), and beats every
/// kept-value plan where a budget needs a value recomputed more than once.
constexpr int64_t kAutoOpLimit = 24;
constexpr int kAutoNodes = 1000;
constexpr int kAutoSeconds = 60;

/// Larger graphs, up to this many compute ops, get `ilp` without the MILP
/// (`relaxed`): the relaxation's solution rounded to a schedule, which is
/// often the proven optimum (docs/planning-ilp.md#the-lower-bound) where the
/// kept-value and chain planners recompute several times as much. Each CBC
/// solve stops after `kRelaxedAutoNodes` nodes, within the time guard (half
/// of `kAutoSeconds` each) on the zoo; the limit bounds the search's time
/// (docs/planners.md#auto has both figures). 600 takes in the
/// pre-activation ResNet-164 (550 ops) and ResNet-152 (516), whose plans it
/// halves at 50%; DenseNet-201 (708) would take 42 s.
constexpr int64_t kRelaxedAutoOpLimit = 600;
constexpr int kRelaxedAutoNodes = 200;
/// The same graphs get a second candidate: that start improved in at most
/// this many windows of the MILP, each limited to 200 nodes, so that the
/// plan does not depend on the machine either. A separate candidate, for
/// the windows pack values up to the budget in the MILP's model, which the
/// built graph can exceed (docs/planners.md#ilp): the relaxed plan remains
/// where it does.
constexpr int kAutoWindows = 64;
/// ... on graphs of at least this many compute ops, where the relaxation's
/// rounding is beaten most, and not on joint graphs partitioned for PyTorch:
/// the windows' plans are not yet held to what Inductor measures (the small
/// CNN of tools/python/tests/test_memory.py got one at 80% that PyTorch
/// measured at 109.7 MB against 92.4 predicted; its relaxed plan, 88.9
/// against 84.1).
constexpr int64_t kWindowsAutoMinOps = 100;

/// `auto`'s ILP candidates for `graph`, last of all: the MILP on small
/// graphs, its relaxation and windows on larger ones, none beyond.
std::vector<AutoCandidate> autoCandidates(const Graph &graph) {
  int64_t computeOps = int64_t(graph.numOps()) -
                       int64_t(graph.inputs().size() + graph.params().size());
  if (computeOps <= kAutoOpLimit)
    return {{fmt::format("ilp={},nodes={}", kAutoSeconds, kAutoNodes),
             autorank::Ilp}};
  if (computeOps > kRelaxedAutoOpLimit)
    return {};
  std::vector<AutoCandidate> candidates = {
      {fmt::format("ilp={},nodes={},relaxed", kAutoSeconds, kRelaxedAutoNodes),
       autorank::Ilp}};
  if (computeOps >= kWindowsAutoMinOps)
    candidates.push_back({fmt::format("ilp={},nodes={},windows={}",
                                      kAutoSeconds, kRelaxedAutoNodes,
                                      kAutoWindows),
                          autorank::Ilp, /*onJointGraphs=*/false});
  return candidates;
}

} // namespace

void registerIlpPlanner(PlannerRegistry &registry) {
  PlannerInfo info{
       .name = "ilp",
       .summary =
           "Checkmate's optimal schedule within the budget (CBC, warm-started "
           "from the AP baselines and the step planners unless 'cold'; "
           "SECONDS and nodes=N limit the search; 'relaxed' keeps the "
           "relaxation's rounded schedule; 'windows' searches windows of the "
           "MILP, as it does where the MILP is too large)",
       .argument = "SECONDS",
       .factory = [](std::optional<llvm::StringRef> argument)
           -> absl::StatusOr<std::unique_ptr<Planner>> {
         IlpPlannerOptions options;
         if (argument) {
           REMAT_ASSIGN_OR_RETURN(options, parseIlpOptions(*argument));
         }
         return std::make_unique<IlpPlanner>(options);
       }};
  info.search.takesBudget = true;
  info.search.sweptAtBudgets = false;
  info.search.autoCandidates = autoCandidates;
  registry.add(std::move(info));
}

} // namespace remat::planners

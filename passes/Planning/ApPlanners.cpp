//===- ApPlanners.cpp - The `ap-sqrtn` and `ap-greedy` planners -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Checkmate's baselines as planners, for comparing the others against:
/// `ap-sqrtn` (every sqrt(k)-th cut node of the forward graph kept) and
/// `ap-greedy` (the cheapest greedy segmentation within the budget), both
/// segment schedules over the ILP's node graph (Problem/GraphProblem.h) realised
/// as recompute steps.
///
//===----------------------------------------------------------------------===//

#include "Planning/ApBaselines.h"
#include "Planning/Problem/GraphProblem.h"
#include "Planning/Planners.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include <fmt/format.h>

namespace remat::planners {
namespace {

/// Whether the baselines plan `graph`: refused above
/// `chain::kMaxBaselineNodes`.
absl::Status checkBaselineProblem(const problem::GraphProblem &graph,
                                  llvm::StringRef planner) {
  size_t nodes = graph.problem.nodes.size();
  if (nodes > chain::kMaxBaselineNodes)
    return invalidArgument(
        "planner '{}': the graph has {} nodes, over the limit of {} (its "
        "schedule takes nodes^2 bits)",
        planner.str(), nodes, chain::kMaxBaselineNodes);
  return problem::validateProblem(graph.problem);
}

/// `ap-greedy` when `greedy`, else `ap-sqrtn`. Both keep the node graph,
/// and `ap-greedy` its sweep's trials, for the next budget.
class ApPlanner : public Planner {
public:
  explicit ApPlanner(bool greedy) : greedy_(greedy) {}

  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    llvm::StringRef name = greedy_ ? "ap-greedy" : "ap-sqrtn";
    if (greedy_ && !problem.budgetBytes)
      return invalidArgument("planner '{}' needs a budget (--budget=SIZE)",
                             name.str());
    bool fresh = false;
    const problem::GraphProblem &graph = nodes_.get(problem, &fresh);
    if (fresh) {
      checked_ = checkBaselineProblem(graph, name);
      trials_.reset();
    }
    REMAT_RETURN_IF_ERROR(checked_);
    chain::BaselineSchedule baseline;
    if (greedy_) {
      if (!trials_) {
        REMAT_ASSIGN_OR_RETURN(trials_, chain::greedyTrials(graph.problem));
      }
      baseline = chain::bestGreedyTrial(graph.problem, *trials_,
                                        *problem.budgetBytes);
    } else {
      REMAT_ASSIGN_OR_RETURN(baseline, chain::sqrtnSchedule(graph.problem));
    }
    RematPlan plan;
    plan.schedule = problem::stepsOf(graph, baseline.schedule);
    if (greedy_ && !baseline.fits)
      plan.budgetNotes.push_back(fmt::format(
          "ap-greedy: no segment schedule fits the budget of {} ({} nodes); "
          "planned the lowest peak found, {}",
          formatBytes(*problem.budgetBytes), graph.problem.nodes.size(),
          formatBytes(baseline.cost.peakBytes)));
    return plan;
  }

private:
  bool greedy_;
  problem::GraphProblemCache nodes_;
  absl::Status checked_;
  std::optional<std::vector<chain::GreedyTrial>> trials_;
};

/// A baseline planner's registry entry; baselines take no argument.
/// Graphs of at most this many ops are also planned by the baselines in
/// `auto`: their R and S matrices cost O(nodes^2), a few seconds at this size.
constexpr int64_t kAutoOpLimit = 5000;

/// A baseline that `auto` tries at `autoRank` on graphs up to
/// `kAutoOpLimit` ops.
PlannerInfo baselineInfo(std::string name, std::string summary, bool greedy,
                         int autoRank) {
  PlannerInfo info{.name = name,
                   .summary = std::move(summary),
                   .factory = [greedy](std::optional<llvm::StringRef>)
                       -> absl::StatusOr<std::unique_ptr<Planner>> {
                     return std::make_unique<ApPlanner>(greedy);
                   }};
  info.search.takesBudget = true;
  info.search.autoCandidates = [name, autoRank](const Graph &graph) {
    if (int64_t(graph.numOps()) > kAutoOpLimit)
      return std::vector<AutoCandidate>{};
    return std::vector<AutoCandidate>{{name, autoRank}};
  };
  return info;
}

} // namespace

void registerApPlanners(PlannerRegistry &registry) {
  registry.add(baselineInfo(
      "ap-sqrtn",
      "Checkmate's AP-sqrtn: every sqrt(k)-th of the forward graph's k cut "
      "nodes kept, segments recomputed once",
      /*greedy=*/false, autorank::ApSqrtN));
  registry.add(baselineInfo(
      "ap-greedy",
      "Checkmate's AP-greedy: the cheapest greedy segmentation of the cut "
      "nodes within the budget",
      /*greedy=*/true, autorank::ApGreedy));
}

} // namespace remat::planners

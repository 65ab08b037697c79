//===- IlpPlanner.cpp - The `ilp` planner ---------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--planner=ilp[=SECONDS]` with a budget: Checkmate's MILP over the
/// training graph (Ilp/GraphProblem.h), solved by CBC within the time limit,
/// its schedule realised as recompute steps. The report carries the proven
/// gap. When CBC proves that no schedule fits, or finds none in time, the
/// plan falls back to recomputing everything and says so.
///
//===----------------------------------------------------------------------===//

#include "Planning/Ilp/GraphProblem.h"
#include "Planning/Strategies.h"

#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include <fmt/format.h>

namespace remat::strategies {
namespace {

class IlpPlanner : public Planner {
public:
  explicit IlpPlanner(std::optional<double> timeLimit) : timeLimit_(timeLimit) {}

  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    if (!problem.budgetBytes)
      return invalidArgument("strategy 'ilp' needs a budget (--budget=SIZE)");
    ilp::GraphProblem graph = ilp::buildGraphProblem(problem);
    graph.problem.budgetBytes = *problem.budgetBytes;

    ilp::IlpOptions options;
    options.timeLimitSeconds = timeLimit_.value_or(problem.timeLimitSeconds);
    if (problem.onProgress)
      options.onProgress = [&](const ilp::IlpProgress &progress) {
        problem.onProgress(fmt::format(
            "ilp: {:.1f} s, incumbent {}, bound {:.0f}, gap {}, {} nodes",
            progress.seconds,
            progress.incumbent ? fmt::format("{:.0f}", *progress.incumbent)
                               : std::string("none"),
            progress.bound,
            progress.gap ? fmt::format("{:.2f}%", 100 * *progress.gap)
                         : std::string("-"),
            progress.nodes));
      };
    REMAT_ASSIGN_OR_RETURN(ilp::IlpResult result,
                           ilp::solveCheckmateIlp(graph.problem, options));

    RematPlan plan;
    if (result.status == ilp::IlpStatusKind::Infeasible ||
        result.status == ilp::IlpStatusKind::NoSolution) {
      plan.warnings.push_back(fmt::format(
          "ilp: {} within the budget of {} ({} nodes); recomputing every "
          "forward value instead",
          result.status == ilp::IlpStatusKind::Infeasible
              ? "no schedule fits"
              : "no schedule found in the time limit",
          formatBytes(*problem.budgetBytes), graph.problem.nodes.size()));
      return plan;
    }
    plan.schedule = ilp::stepsOf(graph, result.schedule);
    plan.optimalityGap = result.gap;
    if (result.status == ilp::IlpStatusKind::Feasible)
      plan.warnings.push_back(fmt::format(
          "ilp: stopped at the time limit; the plan is within {:.2f}% of the "
          "optimal recompute cost",
          100 * result.gap));
    return plan;
  }

private:
  std::optional<double> timeLimit_;
};

} // namespace

void registerIlpPlanner(PlannerRegistry &registry) {
  registry.add(
      {"ilp",
       "Checkmate's optimal schedule within the budget (CBC; SECONDS limits "
       "the search)",
       "SECONDS", false,
       [](std::optional<llvm::StringRef> argument)
           -> absl::StatusOr<std::unique_ptr<Planner>> {
         std::optional<double> seconds;
         if (argument) {
           double value = 0;
           if (argument->getAsDouble(value) || !(value > 0))
             return invalidArgument("strategy 'ilp' takes a positive time "
                                    "limit in seconds, got 'ilp={}'",
                                    argument->str());
           seconds = value;
         }
         return std::make_unique<IlpPlanner>(seconds);
       }});
}

} // namespace remat::strategies

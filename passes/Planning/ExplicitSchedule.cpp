//===- ExplicitSchedule.cpp - A schedule written by hand ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--planner=schedule=B:V+W,C:V`: before the op that produces `%B`,
/// recompute the ops producing `%V` and `%W`; before `%C`'s producer,
/// recompute `%V`'s again. Names are value names without `%`; an op is named
/// by any of its results. For experiments, golden tests, and plans computed
/// elsewhere (docs/planners.md).
///
//===----------------------------------------------------------------------===//

#include "Planning/Planners.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/SmallVector.h"

namespace remat::planners {
namespace {

/// One `B:V+W` item, unresolved.
struct StepText {
  std::string before;
  std::vector<std::string> ops;
};

class ExplicitSchedulePlanner : public Planner {
public:
  explicit ExplicitSchedulePlanner(std::vector<StepText> steps)
      : steps_(std::move(steps)) {}

  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    RematPlan plan;
    plan.schedule.emplace();
    for (const StepText &text : steps_) {
      RecomputeStep step;
      REMAT_ASSIGN_OR_RETURN(step.before, producerOf(problem, text.before));
      for (const std::string &name : text.ops) {
        REMAT_ASSIGN_OR_RETURN(Op * op, producerOf(problem, name));
        step.ops.push_back(op);
      }
      plan.schedule->push_back(std::move(step));
    }
    return plan;
  }

private:
  static absl::StatusOr<Op *> producerOf(const PlanningProblem &problem,
                                         const std::string &name) {
    Value *value = problem.graph->lookupValue(name);
    if (!value)
      return invalidArgument("planner 'schedule': no value %{} in graph @{}",
                             name, problem.graph->name().str());
    return value->producer();
  }

  std::vector<StepText> steps_;
};

absl::StatusOr<std::vector<StepText>> parseSteps(llvm::StringRef argument) {
  REMAT_ASSIGN_OR_RETURN(std::vector<std::string> items,
                         splitPlannerList("schedule", argument));
  std::vector<StepText> steps;
  for (llvm::StringRef item : items) {
    auto [before, ops] = item.split(':');
    if (before.empty() || ops.empty() || before.size() == item.size())
      return invalidArgument("planner 'schedule': '{}' is not BEFORE:OP+OP",
                             item.str());
    StepText step{before.str(), {}};
    llvm::SmallVector<llvm::StringRef, 4> names;
    ops.split(names, '+');
    for (llvm::StringRef name : names) {
      if (name.empty())
        return invalidArgument("planner 'schedule': '{}' has an empty op name",
                               item.str());
      step.ops.push_back(name.str());
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

} // namespace

void registerExplicitSchedulePlanner(PlannerRegistry &registry) {
  registry.add(
      {.name = "schedule",
       .summary = "Recomputes, before each op B, the ops that produce V, W, "
                  "... (value names)",
       .argument = "B:V+W,...",
       .needsArgument = true,
       .factory = [](std::optional<llvm::StringRef> argument)
           -> absl::StatusOr<std::unique_ptr<Planner>> {
         REMAT_ASSIGN_OR_RETURN(std::vector<StepText> steps,
                                parseSteps(*argument));
         return std::make_unique<ExplicitSchedulePlanner>(std::move(steps));
       }});
}

} // namespace remat::planners

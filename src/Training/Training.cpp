//===- Training.cpp - Forward graph to training graph -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The entry points of remat/Training/Training.h: a planner's build as
/// given (PlanBuilder.cpp), or the plan chosen for a budget (Budget.cpp).
///
//===----------------------------------------------------------------------===//

#include "remat/Training/Training.h"

#include "Training/BudgetSearch.h"
#include "Training/JointForwardOrder.h"
#include "Training/PlanBuilder.h"

namespace remat {

absl::StatusOr<TrainingReport>
buildTrainingGraph(Graph &graph, const TrainingOptions &options) {
  if (options.budget)
    return buildTrainingGraphInBudget(graph, options, std::nullopt);
  return buildTrainingGraphAsGiven(graph, options, std::nullopt);
}

absl::StatusOr<TrainingReport>
buildJointTrainingGraph(Graph &joint, unsigned forwardOps,
                        const TrainingOptions &options) {
  orderJointForward(joint, forwardOps);
  if (options.budget)
    return buildTrainingGraphInBudget(joint, options, forwardOps);
  return buildTrainingGraphAsGiven(joint, options, forwardOps);
}

} // namespace remat

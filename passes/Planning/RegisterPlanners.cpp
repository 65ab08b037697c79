//===- RegisterPlanners.cpp - Every built-in planner, in order ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The registry's order is the order `remat opt --help` lists the planners
/// in: adding a planner is its own file and one line here.
///
//===----------------------------------------------------------------------===//

#include "Planning/Planners.h"

#include "remat/Pass/Planner.h"

namespace remat {

void registerAllPlanners(PlannerRegistry &registry) {
  planners::registerRulePlanners(registry);
  planners::registerMemoryPlanner(registry);
  planners::registerSqrtNPlanner(registry);
  planners::registerRegionsPlanner(registry);
  planners::registerExplicitSchedulePlanner(registry);
  planners::registerIlpPlanner(registry);
  planners::registerChainPlanner(registry);
  planners::registerApPlanners(registry);
  planners::registerXlaPlanner(registry);
  planners::registerMinCutPlanner(registry);
}

} // namespace remat

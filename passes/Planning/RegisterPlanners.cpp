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

#include "Planning/Strategies.h"

#include "remat/Pass/Planner.h"

namespace remat {

void registerAllPlanners(PlannerRegistry &registry) {
  strategies::registerRulePlanners(registry);
  strategies::registerMemoryPlanner(registry);
  strategies::registerSqrtNPlanner(registry);
  strategies::registerRegionsPlanner(registry);
  strategies::registerExplicitSchedulePlanner(registry);
  strategies::registerIlpPlanner(registry);
  strategies::registerChainPlanner(registry);
  strategies::registerApPlanners(registry);
  strategies::registerXlaPlanner(registry);
  strategies::registerMinCutPlanner(registry);
}

} // namespace remat

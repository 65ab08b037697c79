//===- RegisterPlanners.cpp - Every built-in planner, in order ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every planner of Planners.def, in its order: the order `remat opt --help`
/// lists the planners in.
///
//===----------------------------------------------------------------------===//

#include "Planning/Planners.h"

#include "remat/Pass/Planner.h"

namespace remat {

void registerAllPlanners(PlannerRegistry &registry) {
#define REMAT_PLANNER(REGISTER) planners::REGISTER(registry);
#include "Planning/Planners.def"
}

} // namespace remat

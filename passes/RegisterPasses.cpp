//===- RegisterPasses.cpp - Every built-in pass, in order -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The registry's order is the order `remat opt --help` lists the passes in:
/// adding a pass is its own file and one line here. It lives with the passes,
/// not with the registry in src/Pass/, which knows no pass.
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/DataParallel.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"

namespace remat {

void registerAllPasses(PassRegistry &registry) {
  registerVerifyPass(registry);
  registerDCEPass(registry);
  registerCSEPass(registry);
  registerTopoSortPass(registry);
  registerAutodiffPass(registry);
  registerRecomputePass(registry);
  registerSchedulePass(registry);
  registerDataParallelPass(registry);
  registerTestPrintAnalysisPasses(registry);
}

} // namespace remat

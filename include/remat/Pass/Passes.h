//===- Passes.h - Factories of the built-in passes ---------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One factory per pass; the pass classes live in their files under passes/.
/// Each pass file also has a `register...` function that `registerAllPasses`
/// calls to make the pass available by name in pipelines. docs/passes.md
/// states every pass's options and contract.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_PASSES_H
#define REMAT_PASS_PASSES_H

#include "remat/Pass/Autodiff.h"
#include "remat/Pass/Planner.h"
#include "remat/Pass/Recompute.h"
#include "remat/Pass/Pass.h"

#include <memory>

namespace remat {

class PassRegistry;

/// `verify`: runs the verifier; never changes the graph.
std::unique_ptr<Pass> createVerifyPass();

/// Options of `dce`.
struct DCEPassOptions {
  /// Keeps `input` and `param` ops whose results nothing reads, so that the
  /// graph's signature does not change.
  bool keepUnusedLeaves = true;
};
/// `dce`: removes ops that no output or collection member depends on.
std::unique_ptr<Pass> createDCEPass(DCEPassOptions options = {});

/// `cse`: merges provably identical ops.
std::unique_ptr<Pass> createCSEPass();

/// `toposort`: reorders the schedule into the deterministic topological order
/// of Analysis/TopoSort.h.
std::unique_ptr<Pass> createTopoSortPass();

/// `autodiff`: appends the backward pass and the `<x>.grad` outputs (see
/// remat/Pass/Autodiff.h).
std::unique_ptr<Pass> createAutodiffPass(AutodiffOptions options = {});

/// `recompute`: differentiates, keeping what the planner `planner` (a
/// `--strategy` spelling, remat/Pass/Planner.h) selects and recomputing the
/// rest (see remat/Pass/Recompute.h). Errors of the spelling surface when
/// the pass runs; the registry's factory checks them when the pipeline is
/// parsed.
std::unique_ptr<Pass> createRecomputePass(std::string planner,
                                          RecomputeOptions options = {});

/// `schedule`: reorders the schedule to lower the simulated peak (see
/// remat/Pass/Schedule.h).
std::unique_ptr<Pass> createSchedulePass();

// Registration, one function per pass file.
void registerVerifyPass(PassRegistry &registry);
void registerDCEPass(PassRegistry &registry);
void registerCSEPass(PassRegistry &registry);
void registerTopoSortPass(PassRegistry &registry);
void registerAutodiffPass(PassRegistry &registry);
void registerRecomputePass(PassRegistry &registry);
void registerSchedulePass(PassRegistry &registry);
/// The `test-print-*` passes that print analyses for FileCheck tests.
void registerTestPrintAnalysisPasses(PassRegistry &registry);

} // namespace remat

#endif // REMAT_PASS_PASSES_H

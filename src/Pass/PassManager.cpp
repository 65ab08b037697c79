//===- PassManager.cpp - Running a pipeline of passes -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Pass/PassManager.h"

#include "remat/IR/Verifier.h"
#include "remat/Support/Stopwatch.h"

#include <fmt/format.h>

namespace remat {

absl::StatusOr<PipelineResult> PassManager::run(Graph &graph) {
  // A broken input would otherwise be blamed on the first pass.
  if (verifyEach_) {
    absl::Status status = verify(graph);
    if (!status.ok())
      return absl::Status(status.code(),
                          fmt::format("before the pipeline: {}",
                                      std::string(status.message())));
  }

  PipelineResult result;
  result.timings.reserve(passes_.size());
  for (const std::unique_ptr<Pass> &pass : passes_) {
    Stopwatch stopwatch;
    absl::StatusOr<bool> changed = pass->run(graph);
    double seconds = stopwatch.seconds();
    if (!changed.ok())
      return changed.status();

    result.timings.push_back({pass->argument().str(), seconds, *changed});
    result.changed |= *changed;

    if (verifyEach_) {
      absl::Status status = verify(graph);
      if (!status.ok())
        return absl::Status(status.code(),
                            fmt::format("after pass '{}': {}",
                                        pass->argument().str(),
                                        std::string(status.message())));
    }
  }
  return result;
}

} // namespace remat

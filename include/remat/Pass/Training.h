//===- Training.h - Forward graph to training graph ---------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pipeline behind `remat opt --strategy=S`: autodiff, the strategy's
/// rematerialization, scheduling and verification of a forward graph, and the
/// report of what that cost and saved (docs/report.md).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_TRAINING_H
#define REMAT_PASS_TRAINING_H

#include "remat/IO/Report.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Pass/PassManager.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat {

class Graph;

struct TrainingOptions {
  /// Which values to keep, as `Strategy::parse` reads it; `none` is plain
  /// autodiff (docs/strategies.md).
  std::string strategy = "none";
  /// Orders recomputation with data rather than control dependencies.
  bool forceDataDependency = false;
  /// A memory budget for planners that take one; none by default.
  std::optional<int64_t> budgetBytes;
  AutodiffOptions autodiff;
  /// Verifies after every pass, not only at the end.
  bool verifyEach = false;
};

/// The timings of a pipeline run, as reports list them.
std::vector<ReportPassTime> reportPassTimes(const PipelineResult &result);

/// Turns the forward graph `graph` (verified; loss = output 0) into its
/// training graph in place and reports the cost: checkpoint selection,
/// autodiff, the memory-aware schedule (whose peak is `peakBytesBefore`), the
/// recompute rewrite, the schedule again and the verifier. Errors: an unknown
/// strategy or bad strategy arguments, autodiff errors, verifier failures.
absl::StatusOr<TrainingReport> buildTrainingGraph(Graph &graph,
                                                  const TrainingOptions &options);

} // namespace remat

#endif // REMAT_PASS_TRAINING_H

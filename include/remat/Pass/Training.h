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
  /// Which values to keep; `none` is plain autodiff (docs/strategies.md).
  std::string strategy = "none";
  /// A memory budget for planners that take one; none by default.
  std::optional<int64_t> budgetBytes;
  AutodiffOptions autodiff;
  /// Verifies after every pass, not only at the end.
  bool verifyEach = false;
};

/// The timings of a pipeline run, as reports list them.
std::vector<ReportPassTime> reportPassTimes(const PipelineResult &result);

/// The strategies `buildTrainingGraph` accepts, for help and errors.
std::vector<std::string> knownStrategies();
/// OK if `name` is a known strategy, else an error listing the known ones.
absl::Status checkStrategyName(llvm::StringRef name);

/// Turns the forward graph `graph` (verified; loss = output 0) into its
/// training graph in place and reports the cost. Errors: an unknown strategy,
/// autodiff errors, verifier failures.
absl::StatusOr<TrainingReport> buildTrainingGraph(Graph &graph,
                                                  const TrainingOptions &options);

} // namespace remat

#endif // REMAT_PASS_TRAINING_H

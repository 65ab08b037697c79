//===- Fit.cpp - The largest batch whose training graph fits --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Galloping then bisection over the batch. Every batch is built and planned
/// from scratch, so a verdict is always about a graph that was actually built:
/// the search keeps the largest batch seen to fit below the smallest seen to
/// fail and stops when they are adjacent. O(log maxBatch) builds.
///
//===----------------------------------------------------------------------===//

#include "remat/Training/Fit.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace remat {
namespace {

class BatchSearch {
public:
  BatchSearch(const BatchedGraphFn &build, const FitOptions &options,
              FitReport &report)
      : build_(build), options_(options), report_(report) {}

  absl::Status run() {
    REMAT_ASSIGN_OR_RETURN(bool fits, tryBatch(1));
    if (!fits)
      return noBatchFits();
    int64_t fitting = 1;
    std::optional<int64_t> failing;
    // Doubling until a batch fails or the limit is reached...
    while (!failing && fitting < options_.maxBatch) {
      int64_t next = std::min(fitting * 2, options_.maxBatch);
      REMAT_ASSIGN_OR_RETURN(fits, tryBatch(next));
      if (fits)
        fitting = next;
      else
        failing = next;
    }
    // ...then bisecting between the last fit and the first failure.
    while (failing && *failing - fitting > 1) {
      int64_t middle = fitting + (*failing - fitting) / 2;
      REMAT_ASSIGN_OR_RETURN(fits, tryBatch(middle));
      if (fits)
        fitting = middle;
      else
        failing = middle;
    }
    report_.batch = fitting;
    report_.atMaxBatch = fitting == options_.maxBatch;
    report_.plan = std::move(fittingPlan_);
    return absl::OkStatus();
  }

private:
  /// Builds and plans `batch`; keeps its report when it fits (each batch
  /// that fits is larger than those before it).
  absl::StatusOr<bool> tryBatch(int64_t batch) {
    absl::StatusOr<std::unique_ptr<Graph>> graph = build_(batch);
    if (absl::IsOutOfRange(graph.status()))
      return tooLargeToCount(batch);
    REMAT_RETURN_IF_ERROR(graph.status());
    if (report_.graph.empty())
      report_.graph = (*graph)->name().str();
    TrainingOptions training = options_.training;
    training.budget = std::to_string(options_.memoryBytes);
    // A batch is judged by whether it fits; the cheapest plan at the lowest
    // peak of one that does not is of no use.
    training.searchAtLowestPeak = false;
    absl::StatusOr<TrainingReport> built = buildTrainingGraph(**graph, training);
    if (absl::IsOutOfRange(built.status()))
      return tooLargeToCount(batch);
    REMAT_RETURN_IF_ERROR(built.status());
    TrainingReport &plan = *built;
    FitTrial trial{batch, plan.planPeakBytes(), plan.overhead, plan.planner};
    trial.fits =
        trial.peakBytes <= options_.memoryBytes &&
        (!options_.maxOverhead || plan.overhead <= *options_.maxOverhead);
    report_.trials.push_back(trial);
    if (trial.fits)
      fittingPlan_ = std::move(plan);
    return trial.fits;
  }

  /// A batch too large to count or plan: its forward or training graph
  /// needs more than 2^63-1 bytes (the verifier's OutOfRange), or more than
  /// the chosen planner's arithmetic holds. It fits no memory.
  bool tooLargeToCount(int64_t batch) {
    report_.trials.push_back({batch, std::numeric_limits<int64_t>::max(), 0,
                              "none: too large to count"});
    return false;
  }

  absl::Status noBatchFits() const {
    const FitTrial &one = report_.trials.front();
    std::string limit =
        options_.maxOverhead
            ? fmt::format(" with overhead at most {}", *options_.maxOverhead)
            : "";
    return invalidArgument(
        "no batch of @{} fits {} ({} bytes){}: batch 1 needs {} ({} bytes) "
        "at overhead {:.3f} (planner {})",
        report_.graph, formatBytes(options_.memoryBytes), options_.memoryBytes,
        limit, formatBytes(one.peakBytes), one.peakBytes, one.overhead,
        one.planner);
  }

  const BatchedGraphFn &build_;
  const FitOptions &options_;
  FitReport &report_;
  TrainingReport fittingPlan_;
};

} // namespace

absl::StatusOr<FitReport> fitBatch(const BatchedGraphFn &build,
                                   const FitOptions &options) {
  if (options.memoryBytes <= 0)
    return invalidArgument("fit: the memory must be positive, got {} bytes",
                           options.memoryBytes);
  if (options.maxOverhead && !(*options.maxOverhead >= 0))
    return invalidArgument("fit: the overhead limit must be at least 0, got {}",
                           *options.maxOverhead);
  if (options.maxBatch < 1)
    return invalidArgument("fit: the largest batch must be at least 1, got {}",
                           options.maxBatch);
  FitReport report;
  report.memoryBytes = options.memoryBytes;
  report.maxOverhead = options.maxOverhead;
  REMAT_RETURN_IF_ERROR(BatchSearch(build, options, report).run());
  return report;
}

} // namespace remat

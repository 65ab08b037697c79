//===- Fit.h - The largest batch whose training graph fits ------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `remat fit`: the largest batch whose planned training graph fits a memory
/// size, with recompute overhead at most a limit (Checkmate's max-batch
/// experiment as a function). See docs/fit.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRAINING_FIT_H
#define REMAT_TRAINING_FIT_H

#include "remat/IO/Report.h"
#include "remat/Training/Training.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat {

class Graph;

/// Builds the forward graph (verified; loss = output 0) at a batch size.
using BatchedGraphFn =
    std::function<absl::StatusOr<std::unique_ptr<Graph>>(int64_t batch)>;

struct FitOptions {
  /// The memory each plan must fit, in bytes.
  int64_t memoryBytes = 0;
  /// The most recompute a plan may cost, as `TrainingReport::overhead`
  /// (0.34: a third of a training step); none by default.
  std::optional<double> maxOverhead;
  /// The planning of each batch: `planner` (default `auto`, the least
  /// recompute within the budget), autodiff options. `budget` is set from
  /// `memoryBytes`.
  TrainingOptions training = {.planner = "auto"};
  /// The largest batch tried.
  int64_t maxBatch = int64_t(1) << 16;
};

/// One batch the search built and judged.
struct FitTrial {
  int64_t batch = 0;
  /// The peak of the plan chosen for this batch (`planPeakBytes`).
  int64_t peakBytes = 0;
  double overhead = 0;
  std::string planner;
  /// The peak is within the memory and the overhead within its limit.
  bool fits = false;
};

/// What `fitBatch` found.
struct FitReport {
  std::string graph;
  int64_t memoryBytes = 0;
  std::optional<double> maxOverhead;
  /// The largest batch that fits; every batch up to it was assumed to fit.
  int64_t batch = 0;
  /// `batch` is `FitOptions::maxBatch`: larger batches were not tried.
  bool atMaxBatch = false;
  /// The training report of `batch`'s plan.
  TrainingReport plan;
  /// Every batch built, in the order tried.
  std::vector<FitTrial> trials;
};

/// Finds the largest batch whose training graph, planned by
/// `buildTrainingGraph` with the budget `memoryBytes`, has a peak within it
/// and an overhead within `maxOverhead`. Assumes that fitting is monotone in
/// the batch (a batch fits when a larger one does); tries 1, 2, 4, ... until a
/// batch fails, then bisects between the last that fit and the first that
/// failed. The batch returned was built and fits, and the next one was built
/// and does not (unless it is `maxBatch`), whether or not the assumption
/// holds. Fails when batch 1 does not fit, or on errors building a graph.
absl::StatusOr<FitReport> fitBatch(const BatchedGraphFn &build,
                                   const FitOptions &options);

/// Builds `graph` (a forward graph whose batch `findBatchDim` finds) at other
/// batch sizes: a copy with every input's leading dim set to the batch, the
/// `shape`/`input_shape` attributes that carry the batch (`BatchTracker`)
/// scaled, and every result type inferred again. A graph whose ops do not
/// type-check at a batch fails naming the op.
absl::StatusOr<BatchedGraphFn> rebatchingBuilder(const Graph &graph);

} // namespace remat

#endif // REMAT_TRAINING_FIT_H

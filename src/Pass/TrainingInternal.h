//===- TrainingInternal.h - The training pipeline's two halves --*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `buildTrainingGraph` (remat/Pass/Training.h) either builds one strategy's
/// training graph or searches the plans within a budget; the search builds
/// each candidate with the first.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_PASS_TRAININGINTERNAL_H
#define REMAT_SRC_PASS_TRAININGINTERNAL_H

#include "remat/Pass/Training.h"

namespace remat {

/// Builds `options.strategy`'s training graph, ignoring `options.budget`;
/// the planner is told `budgetBytes`, the budget resolved to bytes.
absl::StatusOr<TrainingReport>
buildTrainingGraphAsGiven(Graph &graph, const TrainingOptions &options,
                          std::optional<int64_t> budgetBytes = std::nullopt);

/// Builds the training graph of the plan chosen for `*options.budget`.
absl::StatusOr<TrainingReport>
buildTrainingGraphInBudget(Graph &graph, const TrainingOptions &options);

} // namespace remat

#endif // REMAT_SRC_PASS_TRAININGINTERNAL_H

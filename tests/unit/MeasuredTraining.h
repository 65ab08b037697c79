//===- MeasuredTraining.h - Training builds held to the executor -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Builds a forward graph's training graph with some options and plain
/// autodiff's beside it, runs both, and checks what every planner must give:
/// the executor measures the peak the report simulates, and the gradients
/// equal plain autodiff's bitwise.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_MEASUREDTRAINING_H
#define REMAT_TESTS_UNIT_MEASUREDTRAINING_H

#include "remat/IR/Graph.h"
#include "remat/Training/Training.h"
#include "remat/Runtime/Executor.h"
#include "remat/Zoo/Zoo.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>

namespace remat {

/// The zoo model `name`, or null after a test failure.
inline std::unique_ptr<Graph> zooModel(const std::string &name,
                                       const ZooOptions &options) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = buildZooModel(name, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

/// A planned build, run beside plain autodiff's.
struct MeasuredTraining {
  TrainingReport report;
  RunResult plain;
  RunResult planned;
};

/// Builds `forward` with `strategy` at `budget` and plain autodiff, runs both
/// with `seed`; checks the planned run's peak against the report and its
/// outputs bitwise against plain autodiff's. Nothing when a build or a run
/// failed (a test failure).
inline std::optional<MeasuredTraining>
measureTraining(const Graph &forward, const std::string &strategy,
                const std::string &budget, uint64_t seed,
                std::function<void(llvm::StringRef)> onProgress = {}) {
  TrainingOptions options;
  options.planner = strategy;
  options.budget = budget;
  options.onProgress = std::move(onProgress);
  std::unique_ptr<Graph> plain = forward.clone();
  std::unique_ptr<Graph> planned = forward.clone();
  EXPECT_TRUE(buildTrainingGraph(*plain, {}).ok());
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*planned, options);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok())
    return std::nullopt;
  absl::StatusOr<RunResult> a = runGraph(*plain, {.seed = seed});
  absl::StatusOr<RunResult> b = runGraph(*planned, {.seed = seed});
  EXPECT_TRUE(a.ok() && b.ok());
  if (!a.ok() || !b.ok())
    return std::nullopt;
  EXPECT_EQ(b->peakBytes, report->peakBytesAfter);
  for (const OutputDiff &diff : compareOutputs(*a, *b)) {
    EXPECT_FALSE(diff.typeMismatch) << diff.name;
    EXPECT_EQ(diff.maxAbsDiff, 0.0) << diff.name;
  }
  return MeasuredTraining{std::move(*report), std::move(*a), std::move(*b)};
}

} // namespace remat

#endif // REMAT_TESTS_UNIT_MEASUREDTRAINING_H

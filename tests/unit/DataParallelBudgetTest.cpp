//===- DataParallelBudgetTest.cpp - A budget per device -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `buildTrainingGraph` with a budget and `finalPipeline = data-parallel`:
/// each candidate plan is replicated into towers and judged by its largest
/// device's peak, so every device of the chosen plan is within the budget
/// (tests/mpi/run-budget.sh measures each rank's peak under mpirun). The
/// towers' gradients must still be the one-device graph's.
///
//===----------------------------------------------------------------------===//

#include "remat/Training/Training.h"

#include "remat/IR/Graph.h"
#include "remat/Runtime/Executor.h"
#include "remat/Zoo/Zoo.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

/// 12 layers of [512, 32] activations: activations dominate each tower.
std::unique_ptr<Graph> deepMlp() {
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      buildZooModel("mlp", {{"layers", "12"},
                            {"width", "32"},
                            {"input", "16"},
                            {"classes", "4"},
                            {"batch", "512"}});
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

int64_t largestDevicePeak(const TrainingReport &report) {
  int64_t peak = 0;
  for (const DeviceProfile &device : report.devices)
    peak = std::max(peak, device.peakBytes);
  return peak;
}

TEST(DataParallelBudgetTest, EveryDeviceIsWithinTheBudget) {
  std::unique_ptr<Graph> forward = deepMlp();
  ASSERT_TRUE(forward);
  std::unique_ptr<Graph> plainTowers = forward->clone();
  TrainingOptions towers;
  towers.finalPipeline = "data-parallel{towers=2}";
  absl::StatusOr<TrainingReport> plain =
      buildTrainingGraph(*plainTowers, towers);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(plain->devices.size(), 2u);
  EXPECT_EQ(plain->devices[0].device, "gpu:0");
  EXPECT_EQ(plain->devices[1].device, "gpu:1");

  // Three quarters of a plain device: more than a plan on the whole batch
  // would need to meet, less than a plain tower holds.
  int64_t budget = largestDevicePeak(*plain) * 3 / 4;
  std::unique_ptr<Graph> planned = forward->clone();
  TrainingOptions options = towers;
  options.planner = kAutoPlanner.str();
  options.budget = std::to_string(budget);
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*planned, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->budgetMet, std::optional<bool>(true));
  EXPECT_GT(report->flopsRecompute, 0);
  ASSERT_EQ(report->devices.size(), 2u);
  for (const DeviceProfile &device : report->devices)
    EXPECT_LE(device.peakBytes, budget) << device.device;
  EXPECT_EQ(report->planPeakBytes(), largestDevicePeak(*report));
  // Plain autodiff's peak is the one-device graph's, as without a budget.
  EXPECT_EQ(report->peakBytesBefore, plain->peakBytesBefore);
  // The one-process executor holds every device's values: the whole graph's
  // simulated peak, over the budget of one device.
  absl::StatusOr<RunResult> run = runGraph(*planned, {.seed = 2});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->peakBytes, report->peakBytesAfter);
  EXPECT_GT(run->peakBytes, budget);

  // The mean of the towers' gradients is the whole batch's gradient.
  std::unique_ptr<Graph> oneDevice = forward->clone();
  ASSERT_TRUE(buildTrainingGraph(*oneDevice, {}).ok());
  absl::StatusOr<RunResult> reference = runGraph(*oneDevice, {.seed = 2});
  ASSERT_TRUE(reference.ok()) << reference.status();
  // Every gradient is matched by name; the loss is not (tower 0's is
  // %loss.t0, the loss of its half of the batch).
  std::vector<OutputDiff> diffs = compareOutputs(*reference, *run);
  EXPECT_EQ(diffs.size(), reference->outputs.size() - 1);
  for (const OutputDiff &diff : diffs) {
    EXPECT_FALSE(diff.typeMismatch) << diff.name;
    EXPECT_LT(diff.maxRelDiff, 1e-3) << diff.name;
  }
}

TEST(DataParallelBudgetTest, APipelineErrorIsReported) {
  std::unique_ptr<Graph> forward = deepMlp();
  ASSERT_TRUE(forward);
  TrainingOptions options;
  options.finalPipeline = "data-parallel{towers=3}";
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*forward, options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("towers=3 does not divide the "
                                           "batch 512"),
            std::string::npos)
      << report.status();
}

} // namespace
} // namespace remat

//===- ExecutorMemoryTest.cpp - Measured peaks against the simulation -----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The executor frees storage by counting readers at run time; simulateMemory
/// derives live ranges statically. The two are written independently, so
/// their agreement, byte for byte, on every zoo model (forward and training
/// graph) checks both against docs/memory-model.md.
///
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Executor.h"

#include "remat/Analysis/Memory.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Zoo/Zoo.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>

namespace remat {
namespace {

struct ZooCase {
  const char *label;
  const char *model;
  ZooOptions options;
};

/// Every model of the zoo at a size that runs in well under a second.
std::vector<ZooCase> zooCases() {
  return {
      {"mlp", "mlp",
       {{"layers", "3"}, {"width", "16"}, {"batch", "4"}, {"input", "20"}}},
      {"resnet18", "resnet",
       {{"depth", "18"}, {"batch", "2"}, {"image", "32"}, {"classes", "10"}}},
      {"resnet_preact_bottleneck", "resnet",
       {{"preact", "true"}, {"depth", "11"}, {"batch", "2"}}},
      {"resnet_preact_basic", "resnet",
       {{"preact", "true"}, {"block", "basic"}, {"depth", "8"}, {"batch", "2"}}},
      {"vgg16", "vgg",
       {{"depth", "16"}, {"batch", "1"}, {"image", "32"}, {"classes", "10"}}},
      {"mobilenet_v2", "mobilenet_v2",
       {{"batch", "2"}, {"image", "32"}, {"classes", "10"}}},
      {"unet", "unet",
       {{"depth", "2"}, {"channels", "4"}, {"batch", "1"}, {"image", "16"}}},
      {"transformer", "transformer",
       {{"layers", "2"}, {"d-model", "32"}, {"heads", "2"}, {"seq", "8"},
        {"batch", "2"}, {"vocab", "50"}}},
      {"transformer_dropout", "transformer",
       {{"layers", "1"}, {"d-model", "16"}, {"heads", "2"}, {"seq", "4"},
        {"batch", "2"}, {"vocab", "20"}, {"dropout", "0.1"}}},
      {"lstm", "lstm",
       {{"steps", "4"}, {"hidden", "8"}, {"batch", "2"}, {"input", "6"},
        {"classes", "3"}}},
      {"densenet121", "densenet",
       {{"depth", "121"}, {"growth", "4"}, {"batch", "1"}, {"image", "32"},
        {"classes", "10"}}},
  };
}

class ExecutorZooTest : public ::testing::TestWithParam<ZooCase> {
protected:
  std::unique_ptr<Graph> build() {
    const ZooCase &c = GetParam();
    absl::StatusOr<std::unique_ptr<Graph>> graph =
        buildZooModel(c.model, c.options);
    EXPECT_TRUE(graph.ok()) << graph.status();
    return graph.ok() ? std::move(*graph) : nullptr;
  }

  /// Runs `graph` and checks the measured peak and the loss.
  void expectPeakMatchesSimulation(const Graph &graph) {
    RunOptions options;
    options.seed = 1;
    absl::StatusOr<RunResult> run = runGraph(graph, options);
    ASSERT_TRUE(run.ok()) << run.status();
    int64_t simulated = simulateMemory(graph).peakBytes;
    EXPECT_EQ(run->peakBytes, simulated);
    RecordProperty("peak_bytes", std::to_string(run->peakBytes));
    ASSERT_FALSE(run->outputs.empty());
    double loss = run->outputs.front().second.at(0);
    EXPECT_TRUE(std::isfinite(loss)) << loss;
    EXPECT_GT(loss, 0);
  }
};

TEST_P(ExecutorZooTest, ForwardPeakEqualsSimulation) {
  std::unique_ptr<Graph> graph = build();
  ASSERT_TRUE(graph);
  expectPeakMatchesSimulation(*graph);
}

TEST_P(ExecutorZooTest, TrainingPeakEqualsSimulation) {
  std::unique_ptr<Graph> graph = build();
  ASSERT_TRUE(graph);
  absl::StatusOr<AutodiffResult> autodiff = differentiate(*graph);
  ASSERT_TRUE(autodiff.ok()) << autodiff.status();
  ASSERT_TRUE(verify(*graph).ok()) << verify(*graph);
  expectPeakMatchesSimulation(*graph);
}

INSTANTIATE_TEST_SUITE_P(AllModels, ExecutorZooTest,
                         ::testing::ValuesIn(zooCases()),
                         [](const ::testing::TestParamInfo<ZooCase> &info) {
                           return std::string(info.param.label);
                         });

} // namespace
} // namespace remat

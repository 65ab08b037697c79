//===- PlanBuilderTest.cpp - Plans of one differentiated graph, built -----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
//
// A `PlanBuilder` (src/Training/PlanBuilder.h) differentiates a forward graph
// once and builds each plan on a copy: every build must be the training
// graph a build of the same planner from the forward graph makes, and must
// leave the differentiated graph as it was for the next.
//
//===----------------------------------------------------------------------===//

#include "MeasuredTraining.h"

#include "Training/PlanBuilder.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Planner.h"
#include "remat/Training/Training.h"

#include <gtest/gtest.h>

#include <string>

namespace remat {
namespace {

/// A pre-activation ResNet-8 at batch 2: residual blocks' fan-out, so
/// that plans differ.
const ZooOptions kResNet = {{"preact", "true"}, {"block", "basic"},
                            {"depth", "8"}, {"batch", "2"}, {"image", "16"}};

/// A copy of `forward` and its builder (`PlanBuilder::differentiate`, told
/// `setup`); null builder after a test failure.
struct Differentiated {
  std::unique_ptr<Graph> graph;
  std::unique_ptr<PlanBuilder> builder;
};

Differentiated differentiateCopy(const Graph &forward,
                                 const PlanBuilder::Setup &setup = {}) {
  Differentiated result{forward.clone(), nullptr};
  absl::StatusOr<std::unique_ptr<PlanBuilder>> builder =
      PlanBuilder::differentiate(*result.graph, TrainingOptions(), setup);
  EXPECT_TRUE(builder.ok()) << builder.status();
  if (builder.ok())
    result.builder = std::move(*builder);
  return result;
}

TEST(PlanBuilderTest, EachBuildIsTheBuildFromTheForwardGraph) {
  std::unique_ptr<Graph> forward = zooModel("resnet", kResNet);
  ASSERT_TRUE(forward);
  Differentiated differentiated = differentiateCopy(*forward);
  ASSERT_TRUE(differentiated.builder);
  PlanBuilder *builder = differentiated.builder.get();
  TrainingOptions options;
  std::string base = printGraph(builder->graph());
  // Several plans of the one builder, kept values and explicit schedules
  // (`ap-sqrtn`: the renumbered plain schedule its first build finds, its
  // second reuses).
  for (const char *name :
       {"sqrtn", "ap-sqrtn", "none", "all", "mincut", "ap-sqrtn"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<std::unique_ptr<Planner>> planner =
        options.plannerRegistry().create(name);
    ASSERT_TRUE(planner.ok()) << planner.status();
    absl::StatusOr<BasePlan> plan = builder->plan(**planner, std::nullopt);
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<Trial> trial = builder->build(name, *plan, {});
    ASSERT_TRUE(trial.ok()) << trial.status();
    ASSERT_TRUE(trial->build.graph);
    // The verifier is the caller's, for the one trial it keeps.
    EXPECT_FALSE(trial->build.verified);
    EXPECT_TRUE(verify(*trial->build.graph).ok());

    std::unique_ptr<Graph> given = forward->clone();
    options.planner = name;
    absl::StatusOr<TrainingReport> report = buildTrainingGraph(*given, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(printGraph(*trial->build.graph), printGraph(*given));
    EXPECT_EQ(trial->peakBytes, report->planPeakBytes());
    EXPECT_EQ(trial->flopsRecompute, report->flopsRecompute);
    EXPECT_EQ(trial->build.report.peakBytesBefore, report->peakBytesBefore);
    EXPECT_EQ(trial->build.report.planner, name);
    // The next plan starts from the same graph.
    EXPECT_EQ(printGraph(builder->graph()), base);
  }
}

TEST(PlanBuilderTest, AJointGraphKeepsItsOwnGradients) {
  std::unique_ptr<Graph> forward = zooModel("resnet", kResNet);
  ASSERT_TRUE(forward);
  // Differentiated once by remat, then given as a joint graph: the builder
  // adopts it, and its plain trial is the same plain autodiff.
  Differentiated own = differentiateCopy(*forward);
  ASSERT_TRUE(own.builder);
  unsigned forwardOps = forward->numOps();
  Differentiated joint =
      differentiateCopy(*own.graph, {.jointForwardOps = forwardOps});
  ASSERT_TRUE(joint.builder);
  EXPECT_EQ(joint.graph->numOps(), own.graph->numOps());
  ASSERT_TRUE(joint.builder->unbuiltPlainTrial());
  EXPECT_EQ(joint.builder->unbuiltPlainTrial()->peakBytes,
            own.builder->unbuiltPlainTrial()->peakBytes);
  // A bound past the graph is no forward pass.
  std::unique_ptr<Graph> bad = own.graph->clone();
  absl::StatusOr<std::unique_ptr<PlanBuilder>> refused =
      PlanBuilder::differentiate(*bad, TrainingOptions(),
                                 {.jointForwardOps = bad->numOps() + 1});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("is not a training graph"),
            std::string::npos);
}

} // namespace
} // namespace remat

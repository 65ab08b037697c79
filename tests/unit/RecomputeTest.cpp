//===- RecomputeTest.cpp - The recompute rewrite ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The rewrite on small graphs whose copies are worked out by hand, and on
/// every zoo model with every strategy: the gradients must equal plain
/// autodiff's bitwise and the executor must measure the planned peak.
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/Recompute.h"

#include "ParsedGraph.h"

#include "remat/Analysis/Memory.h"
#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Pass/Schedule.h"
#include "remat/Training/Training.h"
#include "remat/Runtime/Executor.h"
#include "remat/Zoo/Zoo.h"

#include "absl/strings/match.h"
#include "llvm/ADT/DenseSet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace remat {
namespace {

std::unique_ptr<Graph> parse(llvm::StringRef text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "test");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

std::vector<Value *> values(const Graph &graph,
                            std::initializer_list<const char *> names) {
  std::vector<Value *> result;
  for (const char *name : names) {
    result.push_back(graph.lookupValue(name));
    EXPECT_NE(result.back(), nullptr) << name;
  }
  return result;
}

/// x -> a -> b -> c -> d -> loss with b kept: the backward pass needs a
/// (tanh'), b, c (tanh' of c and d); c is recomputed from b, a from x.
constexpr llvm::StringLiteral kChain = kTanhChain;

TEST(RecomputeTest, FourOpChainWithOneCheckpoint) {
  std::unique_ptr<Graph> graph = parse(kChain);
  ASSERT_TRUE(graph);
  RematPlan plan;
  plan.kept = values(*graph, {"b"});
  unsigned forwardOpIdBound = graph->opIdBound();
  absl::StatusOr<RecomputeResult> result = recomputeGradients(*graph, plan);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(verify(*graph).ok()) << verify(*graph);

  // tanh's gradient reads tanh's result, so the backward pass reads d, c, b
  // and a. b is kept; d and c are recomputed from b, a from the param x.
  // The first gradient op needs d: segment "after %b" (c, d) comes first,
  // then "from the leaves" (a).
  ASSERT_EQ(result->segments.size(), 2u);
  EXPECT_EQ(result->segments[0].label, "after %b");
  EXPECT_EQ(result->segments[0].numCopies, 2);
  EXPECT_EQ(result->segments[1].label, "from the leaves");
  EXPECT_EQ(result->segments[1].numCopies, 1);
  EXPECT_EQ(result->numCopies, 3);
  // Four tanh of 4 elements each: the copies cost 3 * 4 FLOPs.
  EXPECT_EQ(result->flopsRecompute, 12);

  // Only forward ops read the forward values that are not kept.
  for (const char *name : {"a", "c", "d"})
    for (const Use &use : graph->lookupValue(name)->uses())
      EXPECT_LT(use.user->id(), forwardOpIdBound)
          << name << " read by " << use.user->describe();
  // The copies read b through one stop_gradient.
  const Value *sg = graph->lookupValue("b.sg");
  ASSERT_NE(sg, nullptr);
  EXPECT_EQ(sg->producer()->kind(), "stop_gradient");
  const Value *cCopy = graph->lookupValue("c.re");
  ASSERT_NE(cCopy, nullptr);
  EXPECT_EQ(cCopy->producer()->operand(0), sg);
  // The root copies wait for a gradient op.
  EXPECT_FALSE(cCopy->producer()->controlDeps().empty());
}

// A schedule may recompute values that nothing reads any more: c and d
// again before the gradient op reading a, after every reader of theirs.
// The rewrite erases such copies, d's first and then c's, which only d's
// copy read; the count without rewriting agrees. What is left is d's copy
// before its first reader: one tanh of 4 elements.
TEST(RecomputeTest, ScheduleCopiesNothingReadsAreErased) {
  std::unique_ptr<Graph> graph = parse(kChain);
  ASSERT_TRUE(graph);
  unsigned forwardOpIdBound = graph->opIdBound();
  ASSERT_TRUE(differentiate(*graph).ok());
  Value *a = graph->lookupValue("a"), *d = graph->lookupValue("d");
  Op *firstReaderOfD = nullptr, *lastReaderOfA = nullptr;
  for (Op &op : graph->ops()) {
    if (op.id() < forwardOpIdBound)
      continue;
    if (!firstReaderOfD && llvm::is_contained(op.operands(), d))
      firstReaderOfD = &op;
    if (llvm::is_contained(op.operands(), a))
      lastReaderOfA = &op;
  }
  ASSERT_TRUE(firstReaderOfD && lastReaderOfA);
  RematPlan plan;
  plan.schedule = std::vector<RecomputeStep>{
      {firstReaderOfD, {d->producer()}},
      {lastReaderOfA, {graph->lookupValue("c")->producer(), d->producer()}}};
  std::vector<unsigned> order;
  for (const Op &op : graph->ops())
    order.push_back(op.id());
  EXPECT_EQ(recomputeFlopsLowerBound(*graph, forwardOpIdBound, plan, order), 4);
  absl::StatusOr<RecomputeResult> result =
      rematerialize(*graph, forwardOpIdBound, plan);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(verify(*graph).ok()) << verify(*graph);
  EXPECT_EQ(result->numCopies, 1);
  EXPECT_EQ(result->flopsRecompute, 4);
  EXPECT_EQ(result->maxRecomputations, 1);
  ASSERT_EQ(result->segments.size(), 1u);
  EXPECT_EQ(result->segments[0].numCopies, 1);
  EXPECT_EQ(graph->lookupValue("c.re"), nullptr);
  const Value *dCopy = graph->lookupValue("d.re");
  ASSERT_NE(dCopy, nullptr);
  EXPECT_TRUE(dCopy->hasUses());
}

TEST(RecomputeTest, CheckpointsMustBeForwardValues) {
  std::unique_ptr<Graph> graph = parse(kChain);
  std::unique_ptr<Graph> other = parse(kChain);
  ASSERT_TRUE(graph && other);
  RematPlan plan;
  plan.kept = values(*other, {"b"});
  absl::StatusOr<RecomputeResult> result = recomputeGradients(*graph, plan);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(std::string(result.status().message()),
            "checkpoint %b is not a forward value of graph @chain");
  // Checked before autodiff: the graph is unchanged.
  EXPECT_EQ(graph->outputs().size(), 1u);
}

/// Runs `graph` and its copy under plain autodiff and under `strategy`, and
/// expects identical gradients and the executor to measure the planned peak.
void expectSameGradients(const Graph &forward, const std::string &strategy,
                         bool forceDataDependency = false) {
  SCOPED_TRACE(strategy);
  std::unique_ptr<Graph> plain = forward.clone();
  std::unique_ptr<Graph> rewritten = forward.clone();
  ASSERT_TRUE(buildTrainingGraph(*plain, {}).ok());
  TrainingOptions options;
  options.planner = strategy;
  options.forceDataDependency = forceDataDependency;
  absl::StatusOr<TrainingReport> report =
      buildTrainingGraph(*rewritten, options);
  ASSERT_TRUE(report.ok()) << report.status();
  absl::StatusOr<RunResult> a = runGraph(*plain, {.seed = 5});
  absl::StatusOr<RunResult> b = runGraph(*rewritten, {.seed = 5});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  std::vector<OutputDiff> diffs = compareOutputs(*a, *b);
  ASSERT_EQ(diffs.size(), plain->outputs().size());
  for (const OutputDiff &diff : diffs) {
    EXPECT_FALSE(diff.typeMismatch) << diff.name;
    EXPECT_EQ(diff.maxAbsDiff, 0.0) << diff.name;
  }
  EXPECT_EQ(b->peakBytes, report->peakBytesAfter);
  EXPECT_EQ(report->peakBytesAfter, simulateMemory(*rewritten).peakBytes);
  if (forceDataDependency) {
    for (const Op &op : rewritten->ops())
      EXPECT_TRUE(op.controlDeps().empty()) << op.describe();
  }
}

TEST(RecomputeTest, ChainGradientsEqualPlainAutodiff) {
  std::unique_ptr<Graph> graph = parse(kChain);
  ASSERT_TRUE(graph);
  for (const char *strategy : {"all", "sqrtn", "names=b", "regions"})
    expectSameGradients(*graph, strategy);
  expectSameGradients(*graph, "names=b", /*forceDataDependency=*/true);
}

struct ZooCase {
  const char *name;
  ZooOptions options;
};

class RecomputeZooTest : public ::testing::TestWithParam<ZooCase> {};

TEST_P(RecomputeZooTest, EveryStrategyKeepsGradientsBitwise) {
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      buildZooModel(GetParam().name, GetParam().options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (const char *strategy :
       {"all", "collection", "speed", "memory", "sqrtn", "regions"}) {
    // `memory` finds no bottleneck on some small models: an error, not a
    // wrong answer (tested with the strategies). Any other error fails.
    absl::StatusOr<RematPlan> plan =
        planRematerialization(**graph, strategy);
    if (!plan.ok() && std::string(strategy) == "memory" &&
        absl::StrContains(plan.status().message(), "found no bottleneck"))
      continue;
    ASSERT_TRUE(plan.ok()) << strategy << ": " << plan.status();
    expectSameGradients(**graph, strategy);
  }
  expectSameGradients(**graph, "sqrtn", /*forceDataDependency=*/true);
}

/// A schedule for the training graph of `forward`: before every third
/// gradient op that reads forward values (from a seeded choice), all their
/// forward ancestors are recomputed, so that ops near the inputs are
/// recomputed many times, each copy dying once a newer one exists.
std::vector<RecomputeStep> everyThirdReaderRecomputes(const Graph &training,
                                                      unsigned forwardOpIdBound,
                                                      unsigned seed) {
  std::vector<RecomputeStep> steps;
  unsigned counter = seed;
  for (const Op &op : training.ops()) {
    if (op.id() < forwardOpIdBound)
      continue;
    std::vector<Op *> pending;
    for (Value *operand : op.operands())
      if (operand->producer()->id() < forwardOpIdBound &&
          operand->producer()->numOperands() != 0)
        pending.push_back(operand->producer());
    if (pending.empty() || counter++ % 3 != 0)
      continue;
    llvm::DenseSet<Op *> closure;
    RecomputeStep step;
    step.before = const_cast<Op *>(&op);
    while (!pending.empty()) {
      Op *producer = pending.back();
      pending.pop_back();
      if (!closure.insert(producer).second)
        continue;
      step.ops.push_back(producer);
      for (Value *operand : producer->operands())
        if (operand->producer()->numOperands() != 0)
          pending.push_back(operand->producer());
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

TEST_P(RecomputeZooTest, SchedulesKeepGradientsBitwiseAndPeaksMeasured) {
  absl::StatusOr<std::unique_ptr<Graph>> forward =
      buildZooModel(GetParam().name, GetParam().options);
  ASSERT_TRUE(forward.ok()) << forward.status();
  std::unique_ptr<Graph> plain = (*forward)->clone();
  ASSERT_TRUE(buildTrainingGraph(*plain, {}).ok());
  absl::StatusOr<RunResult> expected = runGraph(*plain, {.seed = 7});
  ASSERT_TRUE(expected.ok()) << expected.status();

  for (unsigned seed : {0u, 1u}) {
    SCOPED_TRACE(seed);
    std::unique_ptr<Graph> graph = (*forward)->clone();
    unsigned forwardOpIdBound = graph->opIdBound();
    ASSERT_TRUE(differentiate(*graph).ok());
    RematPlan plan;
    plan.schedule =
        everyThirdReaderRecomputes(*graph, forwardOpIdBound, seed);
    ASSERT_FALSE(plan.schedule->empty());
    absl::StatusOr<RecomputeResult> result =
        rematerialize(*graph, forwardOpIdBound, plan);
    ASSERT_TRUE(result.ok()) << result.status();
    size_t planned = 0;
    for (const RecomputeStep &step : *plan.schedule)
      planned += step.ops.size();
    EXPECT_EQ(result->numCopies, int64_t(planned));
    EXPECT_GE(result->maxRecomputations, 2);
    ASSERT_TRUE(scheduleForMemory(*graph).ok());
    ASSERT_TRUE(verify(*graph).ok()) << verify(*graph);

    absl::StatusOr<RunResult> run = runGraph(*graph, {.seed = 7});
    ASSERT_TRUE(run.ok()) << run.status();
    for (const OutputDiff &diff : compareOutputs(*expected, *run)) {
      EXPECT_FALSE(diff.typeMismatch) << diff.name;
      EXPECT_EQ(diff.maxAbsDiff, 0.0) << diff.name;
    }
    EXPECT_EQ(run->peakBytes, simulateMemory(*graph).peakBytes);
  }
}

// Every zoo family at a size that runs in milliseconds, since each case runs
// 16 graphs. VGG and ResNet-18 at their smallest take seconds; the ctests
// `recompute-compare-*` (label slow) compare them through the CLI.
INSTANTIATE_TEST_SUITE_P(
    Zoo, RecomputeZooTest,
    ::testing::Values(
        ZooCase{"mlp", {{"layers", "6"}, {"width", "8"}, {"batch", "2"}}},
        ZooCase{"resnet",
                {{"preact", "true"},
                 {"depth", "11"},
                 {"batch", "1"},
                 {"image", "16"}}},
        ZooCase{"resnet",
                {{"preact", "true"},
                 {"block", "basic"},
                 {"depth", "8"},
                 {"batch", "1"},
                 {"image", "16"}}},
        ZooCase{"mobilenet_v2",
                {{"batch", "1"}, {"image", "16"}, {"classes", "10"}}},
        ZooCase{"unet",
                {{"depth", "2"}, {"channels", "4"}, {"batch", "1"},
                 {"image", "16"}}},
        ZooCase{"transformer",
                {{"layers", "2"},
                 {"d-model", "16"},
                 {"heads", "2"},
                 {"seq", "4"},
                 {"batch", "2"},
                 {"vocab", "20"},
                 {"dropout", "0.1"}}},
        ZooCase{"lstm", {{"steps", "5"}, {"hidden", "8"}, {"batch", "2"}}},
        ZooCase{"densenet",
                {{"depth", "121"},
                 {"batch", "1"},
                 {"image", "32"},
                 {"growth", "4"},
                 {"classes", "10"}}}),
    [](const ::testing::TestParamInfo<ZooCase> &info) {
      return std::string(info.param.name) + "_" + std::to_string(info.index);
    });

TEST(RecomputeTest, SqrtNSavesMemoryOnADeepMlp) {
  // 60 layers of [512, 32] activations (64 KiB each, against 4 KiB of
  // weights and a 64 KiB input): plain autodiff keeps about one activation
  // per layer for the backward pass (a relu's result is both its gradient's
  // operand and the next matmul's), 60 * 64 KiB = 3.75 MiB; sqrtn keeps
  // about 11 and recomputes one segment of about 11 at a time, so under
  // half. The executor measures both.
  absl::StatusOr<std::unique_ptr<Graph>> forward = buildZooModel(
      "mlp",
      {{"layers", "60"}, {"width", "32"}, {"batch", "512"}, {"input", "32"}});
  ASSERT_TRUE(forward.ok());
  std::unique_ptr<Graph> plain = (*forward)->clone();
  ASSERT_TRUE(buildTrainingGraph(*plain, {}).ok());
  TrainingOptions options;
  options.planner = "sqrtn";
  absl::StatusOr<TrainingReport> report =
      buildTrainingGraph(**forward, options);
  ASSERT_TRUE(report.ok()) << report.status();
  absl::StatusOr<RunResult> before = runGraph(*plain);
  absl::StatusOr<RunResult> after = runGraph(**forward);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(before->peakBytes, report->peakBytesBefore);
  EXPECT_EQ(after->peakBytes, report->peakBytesAfter);
  EXPECT_LT(after->peakBytes, before->peakBytes / 2);
  EXPECT_GT(report->overhead, 0.0);
  EXPECT_LT(report->overhead, 0.5);
}

} // namespace
} // namespace remat

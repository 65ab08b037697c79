//===- AutodiffTest.cpp - The autodiff pass through its C++ API ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `differentiate` options (xs, ys, grad_ys, unconnected), naming, boundaries,
/// errors, determinism and depth; gradient values are checked by running the
/// training graph and comparing with derivatives worked out by hand. The
/// golden tests of the emitted ops are tests/lit/passes/autodiff.remat.
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/Autodiff.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Runtime/Executor.h"
#include "remat/Zoo/Zoo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace remat {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Graph> parse(llvm::StringRef text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "test");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : std::make_unique<Graph>();
}

/// The output named `name` of `run`.
const HostTensor &output(const RunResult &run, llvm::StringRef name) {
  for (const auto &[outputName, tensor] : run.outputs)
    if (outputName == name)
      return tensor;
  ADD_FAILURE() << "no output " << name.str();
  static HostTensor empty;
  return empty;
}

TEST(AutodiffTest, GradientsOfEveryParamBecomeNamedOutputs) {
  std::unique_ptr<Graph> g = parse(R"(
    graph @g {
      input %x : f32[3]
      param %w : f32[3]
      param %b : f32[3]
      %h = mul(%x, %w)
      %y = add(%h, %b)
      %loss = reduce_sum(%y)
      output %loss
    })");
  absl::StatusOr<AutodiffResult> result = differentiate(*g);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(verify(*g).ok());
  ASSERT_EQ(result->gradients.size(), 2u);
  ASSERT_EQ(g->outputs().size(), 3u);
  EXPECT_EQ(g->outputs()[0]->name(), "loss");
  EXPECT_EQ(g->outputs()[1]->name(), "w.grad");
  EXPECT_EQ(g->outputs()[2]->name(), "b.grad");
  EXPECT_EQ(result->gradients[0], g->outputs()[1]);
  EXPECT_GT(result->numOpsAdded, 0);

  // d loss / d w = x and d loss / d b = 1, entry by entry.
  absl::StatusOr<RunResult> run = runGraph(*g, {.seed = 5});
  ASSERT_TRUE(run.ok()) << run.status();
  TensorMap feeds = makeFeeds(*g, 5);
  const HostTensor &x = feeds.at("x");
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(output(*run, "w.grad").at(i), x.at(i));
    EXPECT_EQ(output(*run, "b.grad").at(i), 1.0);
  }
}

TEST(AutodiffTest, ChosenXsYsAndGradYs) {
  // y = x * w with a fed gradient g for y: dx = g * w, dw = g * x. The loss
  // (output 0) is not differentiated at all.
  std::unique_ptr<Graph> g = parse(R"(
    graph @g {
      input %x : f32[4]
      param %w : f32[4]
      input %g : f32[4]
      %y = mul(%x, %w)
      %loss = reduce_sum(%y)
      output %loss
    })");
  AutodiffOptions options;
  options.ys = {"y"};
  options.gradYs = {"g"};
  options.xs = {"x", "w"};
  absl::StatusOr<AutodiffResult> result = differentiate(*g, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(verify(*g).ok());
  absl::StatusOr<RunResult> run = runGraph(*g, {.seed = 1});
  ASSERT_TRUE(run.ok()) << run.status();
  TensorMap feeds = makeFeeds(*g, 1);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(output(*run, "x.grad").at(i),
                    float(feeds.at("g").at(i)) * float(feeds.at("w").at(i)));
    EXPECT_FLOAT_EQ(output(*run, "w.grad").at(i),
                    float(feeds.at("g").at(i)) * float(feeds.at("x").at(i)));
  }
}

TEST(AutodiffTest, GradientsFlowThroughAnXComputedFromAnotherX) {
  // xs = {w, h} with h = exp(w): h's gradient is 1, and w's is the total
  // derivative exp(w), not zero.
  std::unique_ptr<Graph> g = parse(R"(
    graph @g {
      param %w : f32[2]
      %h = exp(%w)
      %loss = reduce_sum(%h)
      output %loss
    })");
  AutodiffOptions options;
  options.xs = {"w", "h"};
  ASSERT_TRUE(differentiate(*g, options).ok());
  absl::StatusOr<RunResult> run = runGraph(*g, {.seed = 2});
  ASSERT_TRUE(run.ok()) << run.status();
  TensorMap feeds = makeFeeds(*g, 2);
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(output(*run, "h.grad").at(i), 1.0);
    EXPECT_FLOAT_EQ(output(*run, "w.grad").at(i),
                    std::exp(float(feeds.at("w").at(i))));
  }
}

TEST(AutodiffTest, IntegerAndUnconnectedXs) {
  std::unique_ptr<Graph> g = parse(R"(
    graph @g {
      input %ids : i32[2]
      param %w : f32[2]
      param %unused : f32[3]
      %loss = reduce_sum(%w)
      output %loss
    })");
  AutodiffOptions options;
  options.xs = {"ids", "w", "unused"};
  std::unique_ptr<Graph> none = g->clone();

  absl::StatusOr<AutodiffResult> zeros = differentiate(*g, options);
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  // Integer values never get a gradient, not even zeros.
  EXPECT_EQ(zeros->gradients[0], nullptr);
  ASSERT_NE(zeros->gradients[2], nullptr);
  EXPECT_EQ(zeros->gradients[2]->name(), "unused.grad");
  EXPECT_EQ(g->outputs().size(), 3u);

  options.unconnected = UnconnectedGradient::None;
  absl::StatusOr<AutodiffResult> nothing = differentiate(*none, options);
  ASSERT_TRUE(nothing.ok()) << nothing.status();
  EXPECT_EQ(nothing->gradients[2], nullptr);
  EXPECT_EQ(none->outputs().size(), 2u);
  EXPECT_EQ(none->lookupValue("unused.grad"), nullptr);
}

TEST(AutodiffTest, MissingRuleFailsBeforeChangingTheGraph) {
  std::unique_ptr<Graph> g = parse(R"(
    graph @g {
      param %w : f32[4]
      %y = relu(%w)
      %g = relu_grad(%y, %w)
      %loss = reduce_sum(%g)
      output %loss
    })");
  std::string before = printGraph(*g);
  absl::StatusOr<AutodiffResult> result = differentiate(*g);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("op 'relu_grad' has no gradient rule"));
  EXPECT_EQ(printGraph(*g), before);
}

TEST(AutodiffTest, GradientOpsTakeTheForwardOpsDevice) {
  std::unique_ptr<Graph> g = parse(R"(
    graph @g {
      param %w : f32[4]
      %a = tanh(%w) device "gpu:1"
      %loss = reduce_sum(%a)
      output %loss
    })");
  ASSERT_TRUE(differentiate(*g).ok());
  Value *grad = g->lookupValue("w.grad");
  ASSERT_NE(grad, nullptr);
  EXPECT_EQ(grad->producer()->kind(), "tanh_grad");
  EXPECT_EQ(grad->producer()->device(), "gpu:1");
}

TEST(AutodiffTest, EarlyAggregationIsBitwiseTheSameSum) {
  // add_n sums left to right, so summing every two partials as they arrive
  // gives the same bits as one sum at the end.
  absl::StatusOr<std::unique_ptr<Graph>> forward =
      buildZooModel("densenet", {{"depth", "121"},
                                 {"batch", "1"},
                                 {"image", "32"},
                                 {"growth", "4"}});
  ASSERT_TRUE(forward.ok()) << forward.status();
  std::unique_ptr<Graph> late = (*forward)->clone();
  std::unique_ptr<Graph> early = (*forward)->clone();
  ASSERT_TRUE(differentiate(*late).ok());
  AutodiffOptions eager;
  eager.aggregateCount = 2;
  eager.aggregateBytes = 0;
  ASSERT_TRUE(differentiate(*early, eager).ok());
  EXPECT_NE(printGraph(*late), printGraph(*early));

  absl::StatusOr<RunResult> a = runGraph(*late, {.seed = 9});
  absl::StatusOr<RunResult> b = runGraph(*early, {.seed = 9});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  std::vector<OutputDiff> diffs = compareOutputs(*a, *b);
  ASSERT_EQ(diffs.size(), (*forward)->params().size() + 1);
  for (const OutputDiff &diff : diffs)
    EXPECT_EQ(diff.maxAbsDiff, 0.0) << diff.name;
  // Summing early frees partial gradients sooner.
  EXPECT_LE(b->peakBytes, a->peakBytes);
}

TEST(AutodiffTest, SameInputSameOutput) {
  absl::StatusOr<std::unique_ptr<Graph>> forward =
      buildZooModel("transformer", {{"layers", "2"},
                                    {"d-model", "32"},
                                    {"heads", "2"},
                                    {"seq", "8"},
                                    {"batch", "2"},
                                    {"vocab", "50"}});
  ASSERT_TRUE(forward.ok()) << forward.status();
  std::unique_ptr<Graph> first = (*forward)->clone();
  std::unique_ptr<Graph> second = (*forward)->clone();
  ASSERT_TRUE(differentiate(*first).ok());
  ASSERT_TRUE(differentiate(*second).ok());
  EXPECT_EQ(printGraph(*first), printGraph(*second));
  EXPECT_TRUE(verify(*first).ok());
}

TEST(AutodiffTest, DeepChainsNeedNoRecursion) {
  // 200k layers: a recursive walk over depth would overflow the stack.
  absl::StatusOr<std::unique_ptr<Graph>> g = buildZooModel(
      "mlp", {{"layers", "200000"}, {"width", "2"}, {"batch", "1"}});
  ASSERT_TRUE(g.ok()) << g.status();
  size_t params = (*g)->params().size();
  absl::StatusOr<AutodiffResult> result = differentiate(**g);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*g)->outputs().size(), params + 1);
  EXPECT_TRUE(verify(**g).ok());
}

TEST(AutodiffTest, BadOptions) {
  std::unique_ptr<Graph> g = parse(R"(
    graph @g {
      param %w : f32[2]
      input %n : i32[2]
      %loss = reduce_sum(%w)
      output %loss
    })");
  AutodiffOptions unknown;
  unknown.xs = {"nope"};
  EXPECT_THAT(std::string(differentiate(*g, unknown).status().message()),
              HasSubstr("no value named 'nope'"));
  AutodiffOptions intY;
  intY.ys = {"n"};
  EXPECT_THAT(std::string(differentiate(*g, intY).status().message()),
              HasSubstr("non-float type i32[2]"));
  AutodiffOptions count;
  count.ys = {"loss"};
  count.gradYs = {"w", "w"};
  EXPECT_THAT(std::string(differentiate(*g, count).status().message()),
              HasSubstr("2 grad_ys given for 1 ys"));
  AutodiffOptions type;
  type.gradYs = {"w"};
  EXPECT_THAT(std::string(differentiate(*g, type).status().message()),
              HasSubstr("has type f32[2] but '%loss' has type f32[]"));
}

} // namespace
} // namespace remat

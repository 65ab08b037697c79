//===- JointGraphTest.cpp - Training graphs another autodiff made ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `extern` ops (a framework's ops, known by their types and FLOPs), pinned
/// ops (`recompute = false`) and `buildJointTrainingGraph`: a
/// training graph differentiated elsewhere, as PyTorch's joint graph arrives
/// through the Python bridge, planned by remat's planners.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/Training/Training.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace remat {
namespace {

using ::testing::HasSubstr;

constexpr int kLayers = 8;
/// Declarations, then one op per layer.
constexpr unsigned kForwardOps = 2 + kLayers;

/// A chain as a framework differentiates it: layer i reads layer i-1 and
/// the weight; the gradient of layer i reads the gradient after it and
/// layer i's input, so plain autodiff keeps every layer alive until its
/// gradient runs. `pinned` layers say `recompute = false`.
std::string jointChain(std::initializer_list<int> pinned = {}) {
  std::string text = "graph @joint {\n  param %w : f32[64,64]\n"
                     "  input %x : f32[64,64]\n";
  std::string previous = "x";
  for (int i = 0; i < kLayers; ++i) {
    bool pin = std::find(pinned.begin(), pinned.end(), i) != pinned.end();
    text += fmt::format(
        "  %h{0} = extern(%{1}, %w) {{fn = \"aten.mm.default\", "
        "types = \"f32[64,64]\", flops = 524288, node = \"h{0}\"{2}}}\n",
        i, previous, pin ? ", recompute = false" : "");
    previous = fmt::format("h{}", i);
  }
  text += fmt::format("  %t = extern(%{}) {{fn = \"tangent\", types = "
                      "\"f32[64,64]\", node = \"t\"}}\n",
                      previous);
  std::string gradient = "t";
  for (int i = kLayers - 1; i >= 0; --i) {
    std::string input = i == 0 ? "x" : fmt::format("h{}", i - 1);
    text += fmt::format(
        "  %g{0} = extern(%{1}, %{2}) {{fn = \"aten.mm.default\", types = "
        "\"f32[64,64]\", flops = 524288, node = \"g{0}\"}}\n",
        i, gradient, input);
    gradient = fmt::format("g{}", i);
  }
  text += fmt::format("  output %h{}\n  output %g0\n}}\n", kLayers - 1);
  return text;
}

std::unique_ptr<Graph> parse(const std::string &text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "joint");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

TrainingOptions jointOptions(std::string planner) {
  TrainingOptions options;
  options.planner = std::move(planner);
  return options;
}

/// The joint chain's training graph, built in place.
absl::StatusOr<TrainingReport> buildJoint(Graph &graph,
                                          const TrainingOptions &options,
                                          unsigned forwardOps = kForwardOps) {
  return buildJointTrainingGraph(graph, forwardOps, options);
}

/// The ops whose `node` attribute is `node`: the original and its copies.
int opsOfNode(const Graph &graph, llvm::StringRef node) {
  int count = 0;
  for (const Op &op : graph.ops())
    if (const Attribute *attr = op.findAttr("node");
        attr && attr->asString() == node)
      ++count;
  return count;
}

TEST(JointGraphTest, ExternOpsHaveTheWrittenTypesAndFlops) {
  std::unique_ptr<Graph> graph = parse(
      "graph @g {\n  input %x : f32[4,8]\n"
      "  %a, %b = extern(%x) {fn = \"aten.native_batch_norm.default\", "
      "types = \"f32[4,8] i64[]\", flops = 96}\n"
      "  %v = extern_view(%a) {fn = \"aten.t.default\", types = \"f32[8,4]\"}\n"
      "  output %v\n  output %b\n}\n");
  ASSERT_TRUE(graph);
  const Op &op = *graph->outputs()[1]->producer();
  ASSERT_EQ(op.numResults(), 2u);
  EXPECT_EQ(op.result(0)->type().str(), "f32[4,8]");
  EXPECT_EQ(op.result(1)->type().str(), "i64[]");
  EXPECT_TRUE(graph->outputs()[0]->producer()->hasFlag(OpFlagView));
}

TEST(JointGraphTest, BadExternTypesAreLocatedErrors) {
  auto error = [](llvm::StringRef kind, llvm::StringRef types) {
    std::string text = fmt::format(
        "graph @g {{\n  input %x : f32[4]\n  %y = {}(%x) {{fn = \"f\", "
        "types = \"{}\"}}\n  output %y\n}}\n",
        kind.str(), types.str());
    absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "bad");
    EXPECT_FALSE(graph.ok()) << types.str();
    return graph.ok() ? std::string() : std::string(graph.status().message());
  };
  EXPECT_THAT(error("extern", "f32[4,x]"), HasSubstr("bad:3:"));
  EXPECT_THAT(error("extern", "f32[4,x]"), HasSubstr("bad dimension 'x'"));
  EXPECT_THAT(error("extern", "q8[4]"), HasSubstr("unknown dtype 'q8'"));
  EXPECT_THAT(error("extern", "f32"), HasSubstr("not DTYPE[DIMS]"));
  EXPECT_THAT(error("extern", ""), HasSubstr("at least one type"));
  EXPECT_THAT(error("extern", "f32[4611686018427387904,4]"),
              HasSubstr("overflows"));
  EXPECT_THAT(error("extern_view", "f32[4] f32[4]"),
              HasSubstr("one result, 'types' gives 2"));
}

TEST(JointGraphTest, SqrtnRecomputesTheChainPyTorchDifferentiated) {
  std::unique_ptr<Graph> graph = parse(jointChain());
  ASSERT_TRUE(graph);
  absl::StatusOr<TrainingReport> report =
      buildJoint(*graph, jointOptions("sqrtn"));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->flopsRecompute, 0);
  EXPECT_LT(report->peakBytesAfter, report->peakBytesBefore);
  // The gradient ops were given, not made: only copies were added, and
  // each keeps its original's node.
  int copies = 0;
  for (int i = 0; i < kLayers; ++i)
    copies += opsOfNode(*graph, fmt::format("h{}", i)) - 1;
  EXPECT_GT(copies, 0);
  EXPECT_EQ(copies * 524288, report->flopsRecompute);
  for (int i = 0; i < kLayers; ++i)
    EXPECT_EQ(opsOfNode(*graph, fmt::format("g{}", i)), 1);
}

TEST(JointGraphTest, ABudgetIsMetOnAJointGraph) {
  std::unique_ptr<Graph> graph = parse(jointChain());
  ASSERT_TRUE(graph);
  TrainingOptions options = jointOptions("auto");
  options.budget = "50%";
  absl::StatusOr<TrainingReport> report = buildJoint(*graph, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(report->budgetMet.has_value());
  EXPECT_TRUE(*report->budgetMet);
  EXPECT_LE(report->peakBytesAfter, report->peakBytesBefore / 2);
  EXPECT_GT(report->flopsRecompute, 0);
}

TEST(JointGraphTest, APinnedOpIsNeverCopied) {
  for (const char *planner : {"sqrtn", "all", "auto"}) {
    SCOPED_TRACE(planner);
    std::unique_ptr<Graph> graph = parse(jointChain({2, 5}));
    ASSERT_TRUE(graph);
    TrainingOptions options = jointOptions(planner);
    if (options.planner == "auto")
      options.budget = "40%";
    absl::StatusOr<TrainingReport> report = buildJoint(*graph, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_GT(report->flopsRecompute, 0);
    EXPECT_EQ(opsOfNode(*graph, "h2"), 1);
    EXPECT_EQ(opsOfNode(*graph, "h5"), 1);
    // Unpinned layers are copied.
    EXPECT_GT(opsOfNode(*graph, "h3") + opsOfNode(*graph, "h6"), 2);
  }
}

// PyTorch's min-cut on a joint graph: the matmul (32 FLOPs per result byte)
// is saved, not recomputed from the input, and the cheap ops after it (1/4
// and 1/2 FLOP per byte; the concatenation has twice its bytes) are
// recomputed from it for the gradients, 8192 FLOPs each. With the matmul
// cheap too, the cut would save nothing and recompute all three.
TEST(JointGraphTest, MinCutSavesAnExternMatmulAndRecomputesWhatIsCheap) {
  std::unique_ptr<Graph> graph = parse(
      "graph @joint {\n  param %w : f32[64,64]\n  input %x : f32[64,64]\n"
      "  %h = extern(%x, %w) {fn = \"aten.mm.default\", types = "
      "\"f32[64,64]\", flops = 524288, node = \"h\"}\n"
      "  %a = extern(%h, %h) {fn = \"aten.cat.default\", types = "
      "\"f32[128,64]\", flops = 8192, node = \"a\"}\n"
      "  %b = extern(%a) {fn = \"aten.sum.dim_IntList\", types = "
      "\"f32[64,64]\", flops = 8192, node = \"b\"}\n"
      "  %t = extern(%b) {fn = \"tangent\", types = \"f32[64,64]\", "
      "node = \"t\"}\n"
      "  %g = extern(%t, %a) {fn = \"aten.mul.Tensor\", types = "
      "\"f32[128,64]\", flops = 8192, node = \"g\"}\n"
      "  output %b\n  output %g\n}\n");
  ASSERT_TRUE(graph);
  absl::StatusOr<TrainingReport> report =
      buildJoint(*graph, jointOptions("mincut"), /*forwardOps=*/5);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(opsOfNode(*graph, "h"), 1);
  EXPECT_EQ(opsOfNode(*graph, "a"), 2);
  EXPECT_EQ(opsOfNode(*graph, "b"), 2);
  EXPECT_EQ(report->flopsRecompute, 2 * 8192);
}

TEST(JointGraphTest, ABoundThatIsNoForwardPassIsAnError) {
  std::unique_ptr<Graph> graph = parse(jointChain());
  ASSERT_TRUE(graph);
  absl::StatusOr<TrainingReport> report =
      buildJoint(*graph, jointOptions("sqrtn"), graph->numOps() + 1);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(),
              HasSubstr("is not a training graph whose first"));
}

} // namespace
} // namespace remat

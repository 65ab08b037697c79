//===- JointForwardOrderTest.cpp - A joint graph's forward, reordered -----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `orderJointForward`: AOT Autograd's joint graphs list the parameters'
/// views and the fills first and the buffers' updates last; reordered, each
/// sits by its block, and the bottleneck planners find the blocks.
///
//===----------------------------------------------------------------------===//

#include "Training/JointForwardOrder.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Training/Training.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace remat {
namespace {

using ::testing::ElementsAre;

std::unique_ptr<Graph> parse(const std::string &text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "joint");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

/// An extern op line: `%name = extern(operands) {fn, types, flops, node}`.
std::string externOp(llvm::StringRef name, llvm::StringRef operands,
                     llvm::StringRef fn, llvm::StringRef type,
                     int64_t flops = 256, llvm::StringRef kind = "extern") {
  return fmt::format("  %{0} = {1}({2}) {{fn = \"{3}\", types = \"{4}\", "
                     "flops = {5}, node = \"{0}\"}}\n",
                     name.str(), kind.str(), operands.str(), fn.str(),
                     type.str(), flops);
}

/// A residual block as AOT Autograd lists it: the weights' views and a
/// fill first, the shortcut right after the value it reads, the running
/// statistic's update (`copy_`) last. Of the forward, the backward reads
/// the fill, `s0` (a statistic) and the layers.
constexpr const char *kResidualJoint = R"(graph @joint {
  param %w0 : f32[16,16]
  param %w1 : f32[16,16]
  param %w2 : f32[16,16]
  input %x : f32[16,16]
  input %labels : i64[16]
  input %mean : f32[16]
)";

std::string residualJoint() {
  std::string text = kResidualJoint;
  const char *mat = "f32[16,16]";
  for (int i = 0; i < 3; ++i)
    text += externOp(fmt::format("v{}", i), fmt::format("%w{}", i),
                     "aten.t.default", mat, 0, "extern_view");
  text += externOp("zero", "", "aten.full.default", "f32[]", 1);
  text += externOp("target", "%labels", "aten.ne.Scalar+aten.where.self",
                   "i64[16]", 32);
  text += externOp("h0", "%x, %v0", "aten.mm.default", mat, 8192);
  text += externOp("s0", "%h0", "aten.mean.dim", "f32[16]");
  text += externOp("r0", "%h0", "aten.relu.default", mat);
  text += externOp("sc", "%r0", "aten.mul.Tensor", mat);
  text += externOp("h1", "%r0, %v1", "aten.mm.default", mat, 8192);
  text += externOp("u0", "%mean, %s0", "aten.add.Tensor", "f32[16]", 16);
  text += externOp("h2", "%h1, %v2", "aten.mm.default", mat, 8192);
  text += externOp("out", "%h2, %sc", "aten.add.Tensor", mat);
  text += externOp("loss", "%out, %target", "aten.nll_loss_forward.default",
                   "f32[]", 512);
  text += externOp("copy0", "%mean, %u0", "aten.copy_.default", "f32[16]",
                   16);
  text += "  %forward.end = extern(%loss) {fn = \"forward.end\", "
          "types = \"f32[]\"}\n";
  text += externOp("t", "%forward.end", "tangent", "f32[]", 0);
  text += externOp("g2", "%t, %out, %target, %zero", "g", mat, 512);
  text += externOp("g1", "%g2, %h1, %s0", "g", mat, 8192);
  text += externOp("g0", "%g1, %h0", "g", mat, 8192);
  text += "  output %forward.end\n  output %g0\n}\n";
  return text;
}

/// Declarations and ops up to `forward.end`.
constexpr unsigned kResidualForwardOps = 6 + 16;

/// The first result's name of each compute op of the forward, in order.
std::vector<std::string> forwardNames(const Graph &graph, unsigned forwardOps) {
  std::vector<std::string> names;
  unsigned position = 0;
  for (const Op &op : graph.ops()) {
    if (position++ == forwardOps)
      break;
    if (!op.hasFlag(OpFlagLeaf))
      names.push_back(op.result()->name().str());
  }
  return names;
}

TEST(JointForwardOrderTest, EachOpMovesNextToItsBlock) {
  std::unique_ptr<Graph> graph = parse(residualJoint());
  ASSERT_TRUE(graph);
  orderJointForward(*graph, kResidualForwardOps);
  ASSERT_TRUE(verify(*graph).ok()) << verify(*graph);
  // Views before their layers; `s0`, `u0` and the update after the value
  // they read; the shortcut (shallower than the branch) just before the
  // add; the labels' op before the loss; the fill, read by the backward
  // only, before `forward.end`.
  EXPECT_THAT(forwardNames(*graph, kResidualForwardOps),
              ElementsAre("v0", "h0", "s0", "u0", "copy0", "r0", "v1", "h1",
                          "v2", "h2", "sc", "out", "target", "loss", "zero",
                          "forward.end"));
  // Renumbered in schedule order, as the joint graph's build requires;
  // the backward is where it was.
  unsigned id = 0;
  for (const Op &op : graph->ops())
    EXPECT_EQ(op.id(), id++) << op.describe();
  EXPECT_EQ(std::prev(graph->ops().end())->result()->name(), "g0");
}

TEST(JointForwardOrderTest, AnOrderedForwardIsLeftAsItIs) {
  std::unique_ptr<Graph> graph = parse(residualJoint());
  ASSERT_TRUE(graph);
  orderJointForward(*graph, kResidualForwardOps);
  std::string once = printGraph(*graph);
  orderJointForward(*graph, kResidualForwardOps);
  EXPECT_EQ(printGraph(*graph), once);
}

TEST(JointForwardOrderTest, AForwardWithoutTheLossIsLeftAsItIs) {
  std::unique_ptr<Graph> graph = parse(residualJoint());
  ASSERT_TRUE(graph);
  std::string before = printGraph(*graph);
  // Past the graph's end, and ending before the loss's op: the joint
  // graph's build reports both.
  orderJointForward(*graph, graph->numOps() + 1);
  EXPECT_EQ(printGraph(*graph), before);
  orderJointForward(*graph, 10);
  EXPECT_EQ(printGraph(*graph), before);
}

constexpr int kLayers = 12;

/// An MLP as AOT Autograd's joint graph lists it: every weight's view, a
/// fill that the gradients read and the labels' op that the loss and its
/// gradient read, at the forward's start. The weights are
/// small beside the activations, so that the budget is the activations'.
std::string viewsFirstChain() {
  std::string text = "graph @joint {\n";
  for (int i = 0; i < kLayers; ++i)
    text += fmt::format("  param %w{} : f32[16,16]\n", i);
  text += "  input %x : f32[512,512]\n  input %labels : i64[512]\n";
  const char *mat = "f32[512,512]";
  for (int i = 0; i < kLayers; ++i)
    text += externOp(fmt::format("v{}", i), fmt::format("%w{}", i),
                     "aten.t.default", "f32[16,16]", 0, "extern_view");
  text += externOp("zero", "", "aten.full.default", "f32[]", 1);
  text += externOp("target", "%labels", "aten.ne.Scalar+aten.where.self",
                   "i64[512]", 1024);
  std::string previous = "x";
  for (int i = 0; i < kLayers; ++i) {
    text += externOp(fmt::format("h{}", i),
                     fmt::format("%{}, %v{}", previous, i),
                     "aten.mm.default+aten.relu.default", mat, 33554432);
    previous = fmt::format("h{}", i);
  }
  text += externOp("loss", fmt::format("%{}, %target", previous),
                   "aten.nll_loss_forward.default", "f32[]");
  text += "  %forward.end = extern(%loss) {fn = \"forward.end\", "
          "types = \"f32[]\"}\n";
  text += externOp("t", "%forward.end", "tangent", "f32[]", 0);
  text += externOp("dlogits", fmt::format("%t, %{}, %target", previous),
                   "aten.nll_loss_backward.default", mat);
  std::string gradient = "dlogits";
  std::vector<std::string> outputs;
  for (int i = kLayers - 1; i >= 0; --i) {
    std::string input = i == 0 ? "x" : fmt::format("h{}", i - 1);
    text += externOp(fmt::format("g{}", i),
                     fmt::format("%{}, %h{}, %v{}, %zero", gradient, i, i),
                     "aten.threshold_backward.default+aten.mm.default", mat,
                     33554432);
    text += externOp(fmt::format("gw{}", i),
                     fmt::format("%{}, %{}", gradient, input),
                     "aten.mm.default", "f32[16,16]", 33554432);
    gradient = fmt::format("g{}", i);
    outputs.push_back(fmt::format("  output %gw{}\n", i));
  }
  text += "  output %forward.end\n" + llvm::join(outputs, "") + "}\n";
  return text;
}

TEST(JointForwardOrderTest, ChainFindsTheBlocksOfAJointGraph) {
  std::unique_ptr<Graph> graph = parse(viewsFirstChain());
  ASSERT_TRUE(graph);
  TrainingOptions options;
  options.planner = "chain";
  options.budget = "60%";
  absl::StatusOr<TrainingReport> report =
      buildJointTrainingGraph(*graph, kLayers + 2 + kLayers + 2 + kLayers + 2,
                              options);
  ASSERT_TRUE(report.ok()) << report.status();
  // With the labels' op first, its edge to the loss crosses every layer:
  // one block, and no schedule within the budget.
  ASSERT_TRUE(report->budgetMet.has_value());
  EXPECT_TRUE(*report->budgetMet);
  EXPECT_GT(report->flopsRecompute, 0);
  EXPECT_LE(report->peakBytesAfter, report->peakBytesBefore * 6 / 10);
}

} // namespace
} // namespace remat

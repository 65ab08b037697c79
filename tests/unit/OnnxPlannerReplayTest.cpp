//===- OnnxPlannerReplayTest.cpp - ONNX Runtime's order and planner, replayed ===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Golden tests of the export's replay of ONNX Runtime 1.30's order and
/// allocation planner (src/IO/OnnxExport/PlannerReplay.h), on graphs of a
/// few nodes whose order and buffers are worked out by hand below; no ONNX
/// Runtime needed.
///
//===----------------------------------------------------------------------===//

#include "IO/OnnxExport/PlannerReplay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace remat::onnxexport {
namespace {

using ::testing::ElementsAre;

/// A graph of unary nodes over the float32 input `x`, with every tensor's
/// dims given.
struct SmallGraph {
  onnx::GraphProto proto;
  TensorInfos infos;

  SmallGraph() { tensor("x", {1024}); proto.add_input()->set_name("x"); }

  void tensor(const std::string &name, std::vector<int64_t> dims) {
    TensorInfo info{onnx::TensorProto::FLOAT, {dims.begin(), dims.end()}, 4};
    for (int64_t dim : dims)
      info.bytes *= dim;
    infos.add(name, std::move(info));
  }
  /// `output = opType(inputs...)`, of dims `dims`.
  void node(const std::string &opType, std::vector<std::string> inputs,
            const std::string &output, std::vector<int64_t> dims) {
    onnx::NodeProto &node = *proto.add_node();
    node.set_op_type(opType);
    for (const std::string &input : inputs)
      node.add_input(input);
    node.add_output(output);
    tensor(output, std::move(dims));
  }
  void output(const std::string &name) { proto.add_output()->set_name(name); }

  std::string nameOf(const ReplayGraph &graph, int id) const {
    return graph.values[size_t(id)].name.str();
  }
};

TEST(OnnxPlannerReplayTest, TheOrderWalksBackFromTheLastUnreadNode) {
  // n0: a = Sin(x), n1: b = Cos(x), n2: c = Add(a, b), n3: d = Neg(x).
  // c and d are unread; the walk pops d (pushed last) first, then c, whose
  // producers are pushed in node order (n0, n1), so b (written last) runs
  // before a.
  SmallGraph g;
  g.node("Sin", {"x"}, "a", {1024});
  g.node("Cos", {"x"}, "b", {1024});
  g.node("Add", {"a", "b"}, "c", {1024});
  g.node("Neg", {"x"}, "d", {1024});
  EXPECT_THAT(runtimeOrder(g.proto), ElementsAre(3, 1, 0, 2));
}

/// n0: a = Sin(x) [1024], n1: b = Sin(a) [16], n2: c = Sin(b) [2048],
/// n3: d = Sin(c) [1024], n4: y = Sin(d) [16], y the graph's output.
/// a dies at n1, and the next tensor of its dims is d: a's buffer waits
/// idle for d across n2, where c is made.
SmallGraph idleAcrossThePeak() {
  SmallGraph g;
  g.node("Sin", {"x"}, "a", {1024});
  g.node("Sin", {"a"}, "b", {16});
  g.node("Sin", {"b"}, "c", {2048});
  g.node("Sin", {"c"}, "d", {1024});
  g.node("Sin", {"d"}, "y", {16});
  g.output("y");
  return g;
}

TEST(OnnxPlannerReplayTest, AFreedBufferWaitsIdleForTheNextTensorOfItsDims) {
  SmallGraph g = idleAcrossThePeak();
  std::vector<int> order = runtimeOrder(g.proto);
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3, 4));
  ReplayGraph graph(g.proto, order, g.infos);
  std::vector<bool> hidden(graph.values.size(), false);
  PlannerReplay replay(graph, hidden);
  // Held bytes by step: a's buffer (4096) from n0 to n4, d in it from n3;
  // b's (64) at n1-n2; c's (8192) at n2-n3; y's (64, an output: never a
  // reused buffer) from n4. n2 holds 4096 + 64 + 8192.
  EXPECT_EQ(replay.run(), 12352);
  EXPECT_EQ(replay.peakStep(), 2);
  // At n2 a's buffer holds nothing: it is idle, and it alone.
  std::vector<int> idle = replay.idleAbove(12352 - 1);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(g.nameOf(graph, idle.front()), "a");
}

TEST(OnnxPlannerReplayTest, HidingATensorsDimsLeavesOnlyLiveBytes) {
  SmallGraph g = idleAcrossThePeak();
  std::vector<int> order = runtimeOrder(g.proto);
  ReplayGraph graph(g.proto, order, g.infos);
  std::vector<bool> none(graph.values.size(), false);
  // Nothing reused: a's buffer goes at n1; n2 holds b and c (64 + 8192),
  // n3 c and a new d (8192 + 4096), the peak.
  PlannerReplay live(graph, none, /*reuseFreed=*/false);
  EXPECT_EQ(live.run(), 12288);
  EXPECT_EQ(live.peakStep(), 3);
  // With a's dims hidden, its buffer is never offered to d: the same.
  std::vector<bool> hidden = none;
  hidden[size_t(graph.ids.find("a")->second)] = true;
  PlannerReplay replay(graph, hidden);
  EXPECT_EQ(replay.run(), 12288);
  EXPECT_EQ(replay.peakStep(), 3);
  std::vector<std::string> held;
  for (int id : replay.heldAt(3))
    held.push_back(g.nameOf(graph, id));
  EXPECT_THAT(held, ElementsAre("c", "d"));
}

TEST(OnnxPlannerReplayTest, AnInPlaceKernelAndAViewAllocateNothing) {
  // a = Sin(x) [1024] (4096 bytes); r = Relu(a), a's only reader, writes
  // over a; v = Reshape(r) views it; y = Sin(v) [16] is the output. One
  // 4096-byte buffer from n0 to n3, y's 64 bytes at n3.
  SmallGraph g;
  g.tensor("shape", {2});
  g.proto.add_initializer()->set_name("shape");
  g.node("Sin", {"x"}, "a", {1024});
  g.node("Relu", {"a"}, "r", {1024});
  g.node("Reshape", {"r", "shape"}, "v", {32, 32});
  g.node("Sin", {"v"}, "y", {16});
  g.output("y");
  ReplayGraph graph(g.proto, runtimeOrder(g.proto), g.infos);
  std::vector<bool> hidden(graph.values.size(), false);
  EXPECT_EQ(PlannerReplay(graph, hidden).run(), 4096 + 64);

  // A kernel that is not in place (Sin) allocates r beside a at n1.
  g.proto.mutable_node(1)->set_op_type("Sin");
  ReplayGraph copied(g.proto, runtimeOrder(g.proto), g.infos);
  EXPECT_EQ(PlannerReplay(copied, hidden).run(), 4096 + 4096);
}

TEST(OnnxPlannerReplayTest, AnInPlaceKernelDoesNotWriteOverAnInputReadLater) {
  // r = Relu(a), but a is read again by s = Add(r, a): r gets its own
  // buffer, and n2 holds a, r and s.
  SmallGraph g;
  g.node("Sin", {"x"}, "a", {1024});
  g.node("Relu", {"a"}, "r", {1024});
  g.node("Add", {"r", "a"}, "s", {1024});
  g.output("s");
  ReplayGraph graph(g.proto, runtimeOrder(g.proto), g.infos);
  std::vector<bool> hidden(graph.values.size(), false);
  EXPECT_EQ(PlannerReplay(graph, hidden).run(), 3 * 4096);
}

} // namespace
} // namespace remat::onnxexport

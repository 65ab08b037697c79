//===- OnnxWaitsTest.cpp - Nodes that wait for tensors by data --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The export's one unit of zeros and waits (src/IO/OnnxExport/Waits.h), on
/// a model of two nodes: what a wait reads, and which zeros a step reuses.
///
//===----------------------------------------------------------------------===//

#include "IO/OnnxExport/Waits.h"

#include <gtest/gtest.h>

#include <string>

namespace remat::onnxexport {
namespace {

/// x: f32[8] and w: f64[2], inputs; a = Relu(x); b = Relu(w).
onnx::ModelProto twoNodes() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto &graph = *model.mutable_graph();
  auto input = [&](const std::string &name, int type, int64_t dim) {
    onnx::ValueInfoProto &info = *graph.add_input();
    info.set_name(name);
    auto &tensor = *info.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(type);
    tensor.mutable_shape()->add_dim()->set_dim_value(dim);
  };
  input("x", onnx::TensorProto::FLOAT, 8);
  input("w", onnx::TensorProto::DOUBLE, 2);
  for (auto [in, out] : {std::pair{"x", "a"}, std::pair{"w", "b"}}) {
    onnx::NodeProto &node = *graph.add_node();
    node.set_op_type("Relu");
    node.add_input(in);
    node.add_output(out);
  }
  return model;
}

class OnnxWaitsTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(graph.index().ok()); }

  onnx::ModelProto model = twoNodes();
  OnnxGraph graph{model};
  Waits waits{graph};
};

TEST_F(OnnxWaitsTest, AWaitReadsItsInputLessTheZeroInTheInputsType) {
  NodeBuilder at(graph, "a");
  onnx::NodeProto &relu = *graph.proto().mutable_node(0);
  // a = Relu(x) waits for b, a double: x is read as x - Cast<float>(z).
  waits.wait(at, relu, 0, "b");
  const onnx::GraphProto &proto = graph.proto();
  // The zero: Reshape, Slice, Cast to bool, Cast to double, Mul; then the
  // Cast to float and the Sub.
  ASSERT_EQ(proto.node_size(), 2 + 5 + 2);
  const onnx::NodeProto &sub = proto.node(8), &cast = proto.node(7);
  EXPECT_EQ(sub.op_type(), "Sub");
  EXPECT_EQ(sub.input(0), "x");
  EXPECT_EQ(sub.input(1), cast.output(0));
  EXPECT_EQ(cast.op_type(), "Cast");
  EXPECT_EQ(cast.input(0), proto.node(6).output(0));
  EXPECT_EQ(proto.node(6).op_type(), "Mul");
  EXPECT_EQ(relu.input(0), sub.output(0));
  // The tensor read so has x's type and dims.
  const TensorInfo *read = graph.infos().find(sub.output(0));
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->type, onnx::TensorProto::FLOAT);
  EXPECT_EQ(read->bytes, 32);
}

TEST_F(OnnxWaitsTest, AZeroIsReusedWithinItsStepOnly) {
  NodeBuilder at(graph, "t");
  std::string zero = waits.zeroOf(at, "a", DType::F32);
  int nodes = graph.proto().node_size();
  EXPECT_EQ(waits.zeroOf(at, "a", DType::F32), zero);
  EXPECT_EQ(graph.proto().node_size(), nodes);
  // A step that comes after may put a waiting node before the zero.
  waits.beginStep();
  EXPECT_FALSE(waits.hasZeroOf("a"));
  EXPECT_NE(waits.zeroOf(at, "a", DType::F32), zero);
  EXPECT_EQ(graph.proto().node_size(), nodes + 5);
}

} // namespace
} // namespace remat::onnxexport

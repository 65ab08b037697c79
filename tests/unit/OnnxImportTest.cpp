//===- OnnxImportTest.cpp - ONNX import against ONNX semantics --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Small models built as ModelProto, imported and run on the executor, with
/// results computed by hand from ONNX's definitions; and malformed models,
/// which must fail with one located line.
///
//===----------------------------------------------------------------------===//

#include "OnnxTestModels.h"

#include "remat/IO/Onnx.h"
#include "remat/IO/TextFormat.h"
#include "remat/Runtime/Executor.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::OnnxModelBuilder;
using testing::setAttr;

HostTensor tensorOf(std::vector<int64_t> shape, std::vector<float> values) {
  HostTensor t(Type(DType::F32, shape));
  std::copy(values.begin(), values.end(), t.values<float>().begin());
  return t;
}

/// Imports `model` with a sum loss and runs it with `inputs` and the model's
/// own tensors; returns the values of model output 0 (graph output 1).
std::vector<float> runImported(const OnnxModelBuilder &model,
                               TensorMap inputs) {
  OnnxImportOptions options;
  options.loss = OnnxLoss::Sum;
  auto graph = importOnnx(model.bytes(), "test.onnx", options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok())
    return {};
  auto tensors = readOnnxTensors(model.bytes(), "test.onnx");
  EXPECT_TRUE(tensors.ok()) << tensors.status();
  for (auto &[name, tensor] : *tensors)
    inputs.insert({name, std::move(tensor)});
  RunOptions run;
  run.feeds = &inputs;
  auto result = runGraph(**graph, run);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok())
    return {};
  auto values = result->outputs.at(1).second.values<float>();
  return {values.begin(), values.end()};
}

std::string importError(const std::string &bytes,
                        OnnxImportOptions options = {}) {
  auto graph = importOnnx(bytes, "bad.onnx", options);
  EXPECT_FALSE(graph.ok());
  return graph.ok() ? "" : std::string(graph.status().message());
}

TEST(OnnxImportTest, GroupedConvWithAsymmetricPads) {
  OnnxModelBuilder b;
  b.input("x", {1, 2, 3, 3});
  b.floats("w", {2, 1, 2, 2}, std::vector<float>(8, 1.0f));
  onnx::NodeProto &conv = b.node("Conv", {"x", "w"}, {"y"});
  setAttr(conv, "group", int64_t(2));
  setAttr(conv, "pads", std::vector<int64_t>{0, 0, 1, 1});
  b.output("y", {1, 2, 3, 3});
  std::vector<float> x(18);
  for (int i = 0; i < 18; ++i)
    x[i] = float(i + 1);
  TensorMap feeds;
  feeds.insert({"x", tensorOf({1, 2, 3, 3}, x)});
  std::vector<float> y = runImported(b, std::move(feeds));
  // Channel 0 sums 2x2 windows of 1..9 (zero below and right), channel 1
  // of 10..18 with its own weights (groups = 2).
  EXPECT_THAT(y, ElementsAre(12, 16, 9, 24, 28, 15, 15, 17, 9, //
                             48, 52, 27, 60, 64, 33, 33, 35, 18));
}

TEST(OnnxImportTest, AddBroadcastsAnInitializer) {
  OnnxModelBuilder b;
  b.input("a", {2, 3});
  b.floats("bias", {3}, {10, 20, 30});
  b.node("Add", {"a", "bias"}, {"y"});
  b.output("y", {2, 3});
  TensorMap feeds;
  feeds.insert({"a", tensorOf({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_THAT(runImported(b, std::move(feeds)),
              ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST(OnnxImportTest, GemmWithTransposeAlphaAndBeta) {
  OnnxModelBuilder b;
  b.input("a", {3, 2});
  b.floats("b", {3, 2}, {1, 0, 0, 1, 1, 1});
  b.floats("c", {2}, {1, 2});
  onnx::NodeProto &gemm = b.node("Gemm", {"a", "b", "c"}, {"y"});
  setAttr(gemm, "transA", int64_t(1));
  setAttr(gemm, "alpha", 2.0f);
  setAttr(gemm, "beta", 0.5f);
  b.output("y", {2, 2});
  TensorMap feeds;
  feeds.insert({"a", tensorOf({3, 2}, {1, 4, 2, 5, 3, 6})});
  // a^T b = [[4, 5], [10, 11]]; times 2, plus 0.5 * [1, 2].
  EXPECT_THAT(runImported(b, std::move(feeds)),
              ElementsAre(8.5, 11, 20.5, 23));
}

TEST(OnnxImportTest, MatMulReadsATransposedWeightWithoutATranspose) {
  // PyTorch's Linear on [S, B, D]: MatMul(x, Transpose(weight [F, D])).
  OnnxModelBuilder b;
  b.input("x", {1, 2, 3});
  b.floats("w", {2, 3}, {1, 0, 1, 0, 2, 0});
  onnx::NodeProto &t = b.node("Transpose", {"w"}, {"wt"});
  setAttr(t, "perm", std::vector<int64_t>{1, 0});
  b.node("MatMul", {"x", "wt"}, {"y"});
  b.output("y", {1, 2, 2});
  OnnxImportOptions options;
  options.loss = OnnxLoss::Sum;
  auto graph = importOnnx(b.bytes(), "t.onnx", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::string text = printGraph(**graph);
  EXPECT_THAT(text, Not(HasSubstr("transpose(")));
  EXPECT_THAT(text, HasSubstr("transpose_b = true"));
  TensorMap feeds;
  feeds.insert({"x", tensorOf({1, 2, 3}, {1, 2, 3, 4, 5, 6})});
  // Rows [1, 2, 3] and [4, 5, 6] against w's rows [1, 0, 1] and [0, 2, 0].
  EXPECT_THAT(runImported(b, std::move(feeds)), ElementsAre(4, 4, 10, 10));
}

TEST(OnnxImportTest, TransposeReadByAnotherOpIsEmitted) {
  OnnxModelBuilder b;
  b.input("x", {3, 2});
  b.floats("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  onnx::NodeProto &t = b.node("Transpose", {"w"}, {"wt"});
  setAttr(t, "perm", std::vector<int64_t>{1, 0});
  b.node("Add", {"x", "wt"}, {"y"});
  b.output("y", {3, 2});
  TensorMap feeds;
  feeds.insert({"x", tensorOf({3, 2}, {0, 0, 0, 0, 10, 10})});
  EXPECT_THAT(runImported(b, std::move(feeds)),
              ElementsAre(1, 4, 2, 5, 13, 16));
}

TEST(OnnxImportTest, EvalBatchNormUsesTheRunningStatistics) {
  // Opset 17 without training_mode: (x - mean) / sqrt(var + eps) * s + b.
  OnnxModelBuilder b;
  b.input("x", {2, 2, 1, 1});
  b.floats("scale", {2}, {2, -1});
  b.floats("bias", {2}, {0.5, 0});
  b.floats("mean", {2}, {1, 0});
  b.floats("var", {2}, {4, 1});
  onnx::NodeProto &bn =
      b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  setAttr(bn, "epsilon", 0.0f);
  b.output("y", {2, 2, 1, 1});
  TensorMap feeds;
  feeds.insert({"x", tensorOf({2, 2, 1, 1}, {1, 2, 3, 6})});
  EXPECT_THAT(runImported(b, std::move(feeds)), ElementsAre(0.5, -2, 2.5, -6));
}

TEST(OnnxImportTest, SliceClampsNegativeAndHugeBounds) {
  OnnxModelBuilder b;
  b.input("x", {5});
  b.constInts("starts", {-3});
  b.constInts("ends", {std::numeric_limits<int64_t>::max()});
  b.node("Slice", {"x", "starts", "ends"}, {"y"});
  b.output("y", {3});
  TensorMap feeds;
  feeds.insert({"x", tensorOf({5}, {0, 1, 2, 3, 4})});
  EXPECT_THAT(runImported(b, std::move(feeds)), ElementsAre(2, 3, 4));
}

TEST(OnnxImportTest, ClipClampsBothWays) {
  OnnxModelBuilder b;
  b.input("x", {4});
  b.constFloat("lo", 0.0f);
  b.constFloat("hi", 6.0f);
  b.node("Clip", {"x", "lo", "hi"}, {"y"});
  b.output("y", {4});
  TensorMap feeds;
  feeds.insert({"x", tensorOf({4}, {-1, 0.5, 6, 7})});
  EXPECT_THAT(runImported(b, std::move(feeds)), ElementsAre(0, 0.5, 6, 6));
}

TEST(OnnxImportTest, ErfAndPowMatchTheirDefinitions) {
  OnnxModelBuilder b;
  b.input("x", {3});
  b.node("Erf", {"x"}, {"e"});
  b.constFloat("two", 2.0f);
  b.node("Pow", {"e", "two"}, {"y"});
  b.output("y", {3});
  TensorMap feeds;
  feeds.insert({"x", tensorOf({3}, {-1, 0, 0.5})});
  std::vector<float> y = runImported(b, std::move(feeds));
  ASSERT_EQ(y.size(), 3u);
  EXPECT_FLOAT_EQ(y[0], float(std::erf(-1.0) * std::erf(-1.0)));
  EXPECT_FLOAT_EQ(y[1], 0.0f);
  EXPECT_FLOAT_EQ(y[2], float(std::erf(0.5) * std::erf(0.5)));
}

TEST(OnnxImportTest, ShapeChainsFoldToOneStaticReshape) {
  OnnxModelBuilder b;
  b.input("x", {2, 6});
  b.node("Shape", {"x"}, {"s"});
  b.constInts("zero", {0}, /*scalar=*/true);
  b.node("Gather", {"s", "zero"}, {"n"});
  b.constInts("axes", {0});
  b.node("Unsqueeze", {"n", "axes"}, {"n1"});
  b.constInts("rest", {3, -1});
  setAttr(b.node("Concat", {"n1", "rest"}, {"shape"}), "axis", int64_t(0));
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y", {2, 3, 2});
  OnnxImportOptions options;
  options.loss = OnnxLoss::Sum;
  auto graph = importOnnx(b.bytes(), "chain.onnx", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::string text = printGraph(**graph);
  EXPECT_THAT(text, HasSubstr("%y = reshape(%x) {shape = [2, 3, 2]}"));
  EXPECT_THAT(text, Not(HasSubstr("gather")));
  EXPECT_THAT(text, Not(HasSubstr("concat")));
}

TEST(OnnxImportTest, NamesAndLeavesFollowTheModel) {
  OnnxImportOptions options;
  options.loss = OnnxLoss::SoftmaxCrossEntropy;
  options.inputShapes["x"] = {2, 3, 8, 8};
  auto graph = importOnnx(testing::tinyConvNet(15, true), "net.onnx", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::string text = printGraph(**graph);
  EXPECT_THAT(text, HasSubstr("param %conv1.weight : f32[4,3,3,3]"));
  EXPECT_THAT(text, HasSubstr("param %conv1.bias : f32[4,1,1]"));
  EXPECT_THAT(text, HasSubstr("input %labels : i32[2]"));
  EXPECT_THAT(text, HasSubstr("%loss = softmax_cross_entropy(%logits, %labels)"));
  // Training mode: batch statistics, no running statistics read.
  EXPECT_THAT(text, HasSubstr("batch_norm(%c1, %bn1.weight, %bn1.bias)"));
  EXPECT_THAT(text, Not(HasSubstr("running_mean")));
  auto eval = importOnnx(testing::tinyConvNet(17, false), "net.onnx", options);
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_THAT(printGraph(**eval), HasSubstr("input %bn1.running_var : f32[4]"));
}

TEST(OnnxImportTest, SameModelImportsToTheSameText) {
  auto a = importOnnx(testing::tinyTransformerLayer(17), "t.onnx",
                      {.loss = OnnxLoss::Sum});
  auto b = importOnnx(testing::tinyTransformerLayer(17), "t.onnx",
                      {.loss = OnnxLoss::Sum});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(printGraph(**a), printGraph(**b));
}

//===----------------------------------------------------------------------===//
// Malformed models
//===----------------------------------------------------------------------===//

TEST(OnnxImportTest, RejectsBytesThatAreNotAModel) {
  EXPECT_THAT(importError("graph @x {}\n"),
              HasSubstr("bad.onnx: error: not an ONNX model"));
}

TEST(OnnxImportTest, EveryTruncationFailsCleanlyOrImports) {
  std::string bytes = testing::tinyConvNet(15, true);
  OnnxImportOptions options;
  options.loss = OnnxLoss::Sum;
  options.inputShapes["x"] = {2, 3, 8, 8};
  for (size_t size = 0; size < bytes.size(); size += 5) {
    auto graph = importOnnx(bytes.substr(0, size), "cut.onnx", options);
    if (!graph.ok()) {
      std::string message(graph.status().message());
      EXPECT_THAT(message, HasSubstr("cut.onnx: error: ")) << size;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(OnnxImportTest, UnsupportedOpNamesNodeTypeAndOpset) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.node("HardSwish", {"x"}, {"y"});
  b.output("y", {2, 3});
  EXPECT_EQ(importError(b.bytes()),
            "bad.onnx: error: node '/HardSwish_0' (HardSwish): op type "
            "HardSwish (opset 17) is not supported; see docs/import.md for "
            "the supported ops");
}

TEST(OnnxImportTest, RejectsOpsetsOutsideTheRange) {
  OnnxModelBuilder b(11);
  b.input("x", {2});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {2});
  EXPECT_THAT(importError(b.bytes()),
              HasSubstr("bad.onnx: error: opset 11 is not supported"));
}

TEST(OnnxImportTest, DynamicInputNeedsAShape) {
  EXPECT_THAT(importError(testing::tinyConvNet(15, true)),
              HasSubstr("graph input 'x' has a dynamic dimension 'N'; fix it "
                        "with --input-shape=x="));
}

TEST(OnnxImportTest, InputShapeMustAgreeWithTheModel) {
  OnnxImportOptions options;
  options.inputShapes["x"] = {2, 4, 8, 8};
  EXPECT_THAT(importError(testing::tinyConvNet(15, true), options),
              HasSubstr("the model fixes it at 3"));
  options.inputShapes = {{"y", {1}}};
  EXPECT_THAT(importError(testing::tinyConvNet(15, true), options),
              HasSubstr("'y', which is not an input of the model"));
}

TEST(OnnxImportTest, MissingInitializerIsReported) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 4, 4});
  b.node("Conv", {"x", "missing.weight"}, {"y"});
  b.output("y", {1, 1, 4, 4});
  std::string message = importError(b.bytes());
  EXPECT_THAT(message, HasSubstr("bad.onnx: error: "));
  EXPECT_THAT(message, HasSubstr("missing.weight"));
}

TEST(OnnxImportTest, UnsupportedAttributeValueNamesIt) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 4, 4});
  onnx::NodeProto &pool = b.node("MaxPool", {"x"}, {"y"});
  setAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  setAttr(pool, "ceil_mode", int64_t(1));
  b.output("y", {1, 1, 3, 3});
  EXPECT_EQ(importError(b.bytes()),
            "bad.onnx: error: node '/MaxPool_0' (MaxPool): ceil_mode 1 is not "
            "supported (only 0)");
}

TEST(OnnxImportTest, WindowAttributesBelowOneAreErrorsNotCrashes) {
  // libonnx's shape inference divides by the strides unchecked: a zero
  // stride was a SIGFPE (found by remat-onnx-fuzzer), now a located error,
  // as are the other window sizes below 1.
  struct Case {
    const char *op, *attribute;
    std::vector<int64_t> value;
  };
  for (const Case &c :
       {Case{"Conv", "strides", {0, 1}}, Case{"Conv", "dilations", {1, -2}},
        Case{"Conv", "group", {0}}, Case{"MaxPool", "strides", {1, 0}},
        Case{"AveragePool", "kernel_shape", {0, 2}},
        Case{"DepthToSpace", "blocksize", {0}}}) {
    SCOPED_TRACE(std::string(c.op) + " " + c.attribute);
    OnnxModelBuilder b;
    b.input("x", {1, 2, 4, 4});
    std::vector<std::string> inputs = {"x"};
    if (std::string(c.op) == "Conv") {
      b.floats("w", {2, 2, 2, 2}, std::vector<float>(16, 1.0f));
      inputs.push_back("w");
    }
    onnx::NodeProto &node = b.node(c.op, inputs, {"y"});
    bool scalar = std::string(c.attribute) == "group" ||
                  std::string(c.attribute) == "blocksize";
    if (std::string(c.op) != "Conv" && !scalar)
      setAttr(node, "kernel_shape", std::vector<int64_t>{2, 2});
    if (scalar)
      setAttr(node, c.attribute, c.value[0]);
    else
      setAttr(node, c.attribute, c.value);
    b.output("y", {1, 2, 3, 3});
    int64_t bad = *std::min_element(c.value.begin(), c.value.end());
    EXPECT_EQ(importError(b.bytes()),
              fmt::format("bad.onnx: error: node '/{}_0' ({}): attribute '{}' "
                          "{} {}; it must be at least 1",
                          c.op, c.op, c.attribute, scalar ? "is" : "holds",
                          bad));
  }
}

TEST(OnnxImportTest, ConvWeightOfHigherRankIsALocatedErrorNotACrash) {
  // libonnx's Conv shape inference takes the kernel's rank from the weight
  // and reads that many input dims: a rank-5 weight on a rank-4 input read
  // past the input's shape (a SIGSEGV found by remat-onnx-fuzzer). The
  // converter sees the node first now.
  OnnxModelBuilder b;
  b.input("x", {1, 2, 4, 4});
  b.floats("w", {2, 2, 2, 2, 2}, std::vector<float>(32, 1.0f));
  b.node("Conv", {"x", "w"}, {"y"});
  b.output("y", {1, 2, 3, 3});
  EXPECT_EQ(importError(b.bytes()),
            "bad.onnx: error: node '/Conv_0' (Conv): only 2-D convolutions "
            "(input rank 4) are supported, got input f32[1,2,4,4] and weight "
            "f32[2,2,2,2,2]");
}

TEST(OnnxImportTest, UndefinedOutputOfAModelWithoutNodesIsAnErrorNotACrash) {
  // The error about the output was built naming the current node, which a
  // model without nodes never set (a SIGSEGV with nothing on stderr).
  EXPECT_EQ(importError(testing::noNodesUndefinedOutput()),
            "bad.onnx: error: graph output 'nope' is not defined");
  // With a node, the same line: the output is not blamed on the node.
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("nope", {2, 3});
  EXPECT_EQ(importError(b.bytes()),
            "bad.onnx: error: graph output 'nope' is not defined");
}

TEST(OnnxImportTest, ACycleNamesTheNodeOnOneLine) {
  // ONNX's checker names the node on its message's second line, which the
  // error used to cut off ("... however input 'y2' of node: ").
  OnnxModelBuilder b;
  b.input("x", {2});
  b.node("Add", {"x", "y2"}, {"y1"});
  b.node("Relu", {"y1"}, {"y2"});
  b.output("y2", {2});
  std::string message = importError(b.bytes());
  EXPECT_THAT(message, HasSubstr("however input 'y2' of node: name: /Add_0 "
                                 "OpType: Add is not output of any previous "
                                 "nodes"));
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(OnnxImportTest, FlattenOfAnEmptyBatchKeepsItsInnerDims) {
  // Flatten's inner size came from the element count divided by the outer
  // one: a batch of 0 gave [0, 0], and the Gemm after it read f32[0,0].
  OnnxModelBuilder b;
  b.input("x", {0, 2, 2});
  b.node("Flatten", {"x"}, {"flat"});
  b.weights("w", {4, 3});
  b.node("MatMul", {"flat", "w"}, {"y"});
  b.output("y", {0, 3});
  OnnxImportOptions options;
  options.loss = OnnxLoss::Sum;
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      importOnnx(b.bytes(), "empty.onnx", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Value *flat = (*graph)->lookupValue("flat");
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(flat->type(), Type(DType::F32, {0, 4}));
}

TEST(OnnxImportTest, FoldedShapesPastInt64AreNamedNotNegative) {
  // ConstantOfShape of [2^32, 2^32]: 2^64 elements, which the element count
  // gave as -1 ("shape gives -1 elements").
  OnnxModelBuilder b;
  b.input("x", {2});
  b.constInts("dims", {int64_t(1) << 32, int64_t(1) << 32});
  b.node("ConstantOfShape", {"dims"}, {"c"});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {2});
  EXPECT_EQ(importError(b.bytes()),
            "bad.onnx: error: node '/ConstantOfShape_1' (ConstantOfShape): "
            "shape gives the shape [4294967296,4294967296], more than "
            "2^63-1 elements");
  // A Reshape whose given entries multiply past int64 (an overflow in
  // signed arithmetic before).
  OnnxModelBuilder r;
  r.input("x", {4});
  r.constInts("target", {int64_t(1) << 62, 4, 0});
  r.node("Reshape", {"x", "target"}, {"y"});
  r.output("y", {4});
  std::string message = importError(r.bytes());
  EXPECT_THAT(message,
              HasSubstr("node '/Reshape_1' (Reshape): shape [4611686018427387904, "
                        "4, 0] has more than 2^63-1 elements"));
}

TEST(OnnxImportTest, InitializerOfUnknownElementTypeIsALocatedError) {
  // Found by remat-onnx-fuzzer: element type 17 (no ONNX type has that
  // number) came back without the file and node, and the type's name blank.
  // ONNX's checker does not look at the type of a tensor in raw bytes.
  OnnxModelBuilder b;
  b.input("x", {1, 2, 4, 4});
  b.floats("w", {2, 2, 2, 2}, std::vector<float>(16, 1.0f));
  onnx::TensorProto &w = *b.model().mutable_graph()->mutable_initializer(0);
  w.set_data_type(17);
  w.clear_float_data();
  w.set_raw_data(std::string(64, '\0'));
  b.node("Conv", {"x", "w"}, {"y"});
  b.output("y", {1, 2, 3, 3});
  EXPECT_EQ(importError(b.bytes()),
            "bad.onnx: error: node '/Conv_0' (Conv): tensor 'w': unknown "
            "element type 17");
}

TEST(OnnxImportTest, ShapeInferenceComplaintsAreReportedAfterConversion) {
  // The model's own output type disagrees with the Relu's: the converters
  // accept every node, then ONNX's strict shape inference objects.
  OnnxModelBuilder b;
  b.input("x", {2, 4});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {2, 3});
  std::string message = importError(b.bytes());
  EXPECT_THAT(message, ::testing::StartsWith(
                           "bad.onnx: error: ONNX's shape inference rejects "
                           "the model: "));
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(OnnxImportTest, LossNeedsAScalarOrAChoice) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {2, 3});
  EXPECT_THAT(importError(b.bytes()),
              HasSubstr("the model's first output 'y' is f32[2,3], not a "
                        "scalar loss"));
  EXPECT_FALSE(parseOnnxLoss("hinge").ok());
}

} // namespace
} // namespace remat

//===- BackwardOpsTest.cpp - Shape inference of the backward ops ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Result types, error messages and FLOPs of the ops that gradient rules emit
/// (relu_grad, slice_grad, conv2d_grad_input, ...), as issue3-spec.md defines
/// them, and causal_mask's `value` attribute.
///
//===----------------------------------------------------------------------===//

#include "OpsTestSupport.h"

#include <cstdint>

namespace remat::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Type f64(std::initializer_list<int64_t> shape) { return typeOf(DType::F64, shape); }
Type i32(std::initializer_list<int64_t> shape) { return typeOf(DType::I32, shape); }
Type i64(std::initializer_list<int64_t> shape) { return typeOf(DType::I64, shape); }

class BackwardOpsTest : public OpsTest {};

TEST_F(BackwardOpsTest, ActivationGradsHaveTheTypeOfDy) {
  for (const char *kind : {"relu_grad", "gelu_grad", "sigmoid_grad", "tanh_grad"}) {
    SCOPED_TRACE(kind);
    EXPECT_EQ(resultType(kind, {f32({4, 8}), f32({4, 8})}), f32({4, 8}));
    EXPECT_EQ(resultType(kind, {f64({}), f64({})}), f64({}));
  }
  // relu_grad 1, gelu_grad 8, sigmoid_grad and tanh_grad 3 per element of 32.
  EXPECT_EQ(flops("relu_grad", {f32({4, 8}), f32({4, 8})}), 32);
  EXPECT_EQ(flops("gelu_grad", {f32({4, 8}), f32({4, 8})}), 256);
  EXPECT_EQ(flops("tanh_grad", {f32({4, 8}), f32({4, 8})}), 96);
}

TEST_F(BackwardOpsTest, ActivationGradsRejectMismatchedOperands) {
  EXPECT_THAT(error("relu_grad", {f32({4, 8}), f32({8})}),
              HasSubstr("'relu_grad' dy f32[8] must have the type of operand 0 "
                        "f32[4,8]"));
  EXPECT_THAT(error("tanh_grad", {f32({4}), f64({4})}),
              HasSubstr("'tanh_grad' dy f64[4] must have the type of operand 0 "
                        "f32[4]"));
  EXPECT_THAT(error("sigmoid_grad", {i32({4}), i32({4})}),
              HasSubstr("'sigmoid_grad' operand 0 must be a float tensor"));
}

TEST_F(BackwardOpsTest, SliceGradRestoresTheSlicedShape) {
  // slice of [10, 6] from [1, 0] with steps [3, 2] to ends [10, 6] gives
  // [ceil(9/3), ceil(6/2)] = [3, 3]; the gradient goes back to [10, 6].
  EXPECT_EQ(resultType("slice_grad", {f32({3, 3})},
                       {{"shape", {10, 6}}, {"starts", {1, 0}}, {"steps", {3, 2}}}),
            f32({10, 6}));
  EXPECT_EQ(resultType("slice_grad", {f64({2, 0})},
                       {{"shape", {5, 4}}, {"starts", {3, 4}}}),
            f64({5, 4}));
  EXPECT_EQ(flops("slice_grad", {f32({2})}, {{"shape", {4}}, {"starts", {1}}}), 0);
}

TEST_F(BackwardOpsTest, SliceGradRejectsAWindowThatDoesNotFit) {
  // Start 1 step 3 over 10: indices 1, 4, 7 — at most 3 entries, not 4.
  EXPECT_THAT(error("slice_grad", {f32({4})},
                    {{"shape", {10}}, {"starts", {1}}, {"steps", {3}}}),
              HasSubstr("'slice_grad' dim 0: dy f32[4] has 4 entries, but a "
                        "slice of 10 from 1 with step 3 has at most 3"));
  EXPECT_THAT(error("slice_grad", {f32({4})}, {{"shape", {4, 1}}, {"starts", {0}}}),
              HasSubstr("'slice_grad' shape [4,1] has 2 entries but dy f32[4] "
                        "has rank 1"));
  EXPECT_THAT(error("slice_grad", {f32({1})},
                    {{"shape", {4}}, {"starts", {0}}, {"steps", {0}}}),
              HasSubstr("'slice_grad' dim 0: step 0 must be >= 1"));
}

TEST_F(BackwardOpsTest, ReduceMaxGradHasTheTypeOfX) {
  EXPECT_EQ(resultType("reduce_max_grad", {f32({2, 3, 4}), f32({2, 4}), f32({2, 4})},
                       {{"axes", {1}}}),
            f32({2, 3, 4}));
  EXPECT_EQ(resultType("reduce_max_grad", {f32({2, 3}), f32({1, 1}), f32({1, 1})},
                       {{"axes", emptyList()}, {"keepdims", true}}),
            f32({2, 3}));
  // 3 per element of x: 3 * 24 = 72.
  EXPECT_EQ(flops("reduce_max_grad", {f32({2, 3, 4}), f32({2, 4}), f32({2, 4})},
                  {{"axes", {1}}}),
            72);
  EXPECT_THAT(error("reduce_max_grad", {f32({2, 3}), f32({3}), f32({3})},
                    {{"axes", {1}}}),
              HasSubstr("'reduce_max_grad' operand 1 f32[3] must have the type "
                        "of reduce_max of x f32[2,3], f32[2]"));
}

TEST_F(BackwardOpsTest, SoftmaxGradsCheckAxisAndTypes) {
  EXPECT_EQ(resultType("softmax_grad", {f32({2, 5}), f32({2, 5})}), f32({2, 5}));
  EXPECT_EQ(resultType("log_softmax_grad", {f32({2, 5}), f32({2, 5})},
                       {{"axis", 0}}),
            f32({2, 5}));
  EXPECT_THAT(error("softmax_grad", {f32({2, 5}), f32({2, 5})}, {{"axis", 2}}),
              HasSubstr("'softmax_grad' axis 2 is out of range for rank 2"));
  EXPECT_THAT(error("log_softmax_grad", {f32({2, 5}), f32({5})}),
              HasSubstr("'log_softmax_grad' dy f32[5] must have the type of y "
                        "f32[2,5]"));
}

TEST_F(BackwardOpsTest, CausalMaskTakesAFillValue) {
  EXPECT_EQ(resultType("causal_mask", {f32({4, 4})}, {{"value", 0.0}}),
            f32({4, 4}));
  auto op = build("causal_mask", {f32({4, 4})});
  ASSERT_TRUE(op.ok());
  llvm::SmallVector<Type, 4> types = (*op)->operandTypes();
  EXPECT_EQ((*op)->signature(types).getFloat("value"), -1e9);
}

TEST_F(BackwardOpsTest, NormGradsReturnDxDgammaDbeta) {
  EXPECT_THAT(resultTypes("layer_norm_grad",
                          {f32({2, 3, 8}), f32({8}), f32({2, 3, 8})}),
              ElementsAre(f32({2, 3, 8}), f32({8}), f32({8})));
  EXPECT_THAT(resultTypes("batch_norm_grad",
                          {f32({4, 3, 5, 5}), f32({3}), f32({4, 3, 5, 5})}),
              ElementsAre(f32({4, 3, 5, 5}), f32({3}), f32({3})));
  // 12 per element of x: 12 * 48 = 576.
  EXPECT_EQ(flops("layer_norm_grad", {f32({2, 3, 8}), f32({8}), f32({2, 3, 8})}),
            576);
  EXPECT_THAT(error("batch_norm_grad", {f32({4, 3}), f32({4}), f32({4, 3})}),
              HasSubstr("'batch_norm_grad' operand 1 must have shape [3] (the "
                        "channels of x), got f32[4]"));
  EXPECT_THAT(error("layer_norm_grad", {f32({2, 8}), f32({8}), f32({8})}),
              HasSubstr("'layer_norm_grad' operand 2 must have shape [2,8] (the "
                        "shape of x), got f32[8]"));
}

TEST_F(BackwardOpsTest, ConvGradsRestoreTheOperandShapes) {
  // x [2, 4, 9, 9], w [6, 2, 3, 3], groups 2, stride 2, pad 1:
  // Ho = (9 + 2 - 2 - 1) / 2 + 1 = 5, so dy is [2, 6, 5, 5].
  AttrList window = {{"strides", {2, 2}}, {"padding", {1, 1}}, {"groups", 2}};
  AttrList gradInput = window;
  gradInput.push_back({"input_shape", {2, 4, 9, 9}});
  EXPECT_EQ(resultType("conv2d_grad_input", {f32({2, 6, 5, 5}), f32({6, 2, 3, 3})},
                       gradInput),
            f32({2, 4, 9, 9}));
  AttrList gradFilter = window;
  gradFilter.push_back({"filter_shape", {6, 2, 3, 3}});
  EXPECT_EQ(resultType("conv2d_grad_filter", {f32({2, 4, 9, 9}), f32({2, 6, 5, 5})},
                       gradFilter),
            f32({6, 2, 3, 3}));
  // As the forward: 2 * (2*6*5*5 = 300) * (2*3*3 = 18) = 10800.
  EXPECT_EQ(flops("conv2d_grad_input", {f32({2, 6, 5, 5}), f32({6, 2, 3, 3})},
                  gradInput),
            10800);
  EXPECT_EQ(flops("conv2d_grad_filter", {f32({2, 4, 9, 9}), f32({2, 6, 5, 5})},
                  gradFilter),
            10800);
}

TEST_F(BackwardOpsTest, ConvGradsRejectAnInconsistentDy) {
  // Without the stride, conv2d of [2, 4, 9, 9] gives Ho = 9 + 2 - 2 = 9.
  EXPECT_THAT(error("conv2d_grad_input", {f32({2, 6, 5, 5}), f32({6, 2, 3, 3})},
                    {{"padding", {1, 1}},
                     {"groups", 2},
                     {"input_shape", {2, 4, 9, 9}}}),
              HasSubstr("'conv2d_grad_input' dy f32[2,6,5,5] must have the type "
                        "of conv2d of x f32[2,4,9,9] with w f32[6,2,3,3], "
                        "f32[2,6,9,9]"));
  EXPECT_THAT(error("conv2d_grad_filter", {f32({2, 4, 9, 9}), f32({2, 6, 7, 7})},
                    {{"filter_shape", {6, 4, 3}}}),
              HasSubstr("'conv2d_grad_filter' filter_shape must have 4 entries, "
                        "got [6,4,3]"));
  EXPECT_THAT(error("conv2d_grad_input", {f32({2, 6, 7, 7}), f32({6, 3, 3, 3})},
                    {{"input_shape", {2, 4, 9, 9}}}),
              HasSubstr("'conv2d_grad_input' w f32[6,3,3,3] has 3 input channels "
                        "per group, but x f32[2,4,9,9] with groups 1 needs 4"));
}

TEST_F(BackwardOpsTest, PoolGradsRestoreTheInputShape) {
  // kernel 3, stride 2, pad 1 over 8: (8 + 2 - 3) / 2 + 1 = 4.
  AttrList window = {{"kernel", {3, 3}}, {"strides", {2, 2}}, {"padding", {1, 1}}};
  EXPECT_EQ(resultType("max_pool2d_grad", {f32({1, 2, 8, 8}), f32({1, 2, 4, 4})},
                       window),
            f32({1, 2, 8, 8}));
  AttrList avg = window;
  avg.push_back({"input_shape", {1, 2, 8, 8}});
  EXPECT_EQ(resultType("avg_pool2d_grad", {f32({1, 2, 4, 4})}, avg),
            f32({1, 2, 8, 8}));
  // 3*3 per element of dy: 9 * 32 = 288.
  EXPECT_EQ(flops("avg_pool2d_grad", {f32({1, 2, 4, 4})}, avg), 288);
  EXPECT_THAT(error("max_pool2d_grad", {f32({1, 2, 8, 8}), f32({1, 2, 3, 3})},
                    window),
              HasSubstr("'max_pool2d_grad' dy f32[1,2,3,3] must have the pooled "
                        "type of x f32[1,2,8,8], f32[1,2,4,4]"));
  EXPECT_THAT(error("avg_pool2d_grad", {f32({1, 2, 4, 4})},
                    {{"kernel", {2, 2}}, {"input_shape", {1, 2, 8}}}),
              HasSubstr("'avg_pool2d_grad' input_shape must have 4 entries [N, "
                        "C, H, W], got [1,2,8]"));
}

TEST_F(BackwardOpsTest, GatherGradScattersIntoSize) {
  // gather of x [5, 7, 3] along axis 1 by indices [2, 4] gives dy
  // [5, 2, 4, 3]; the gradient is [5] + [size 7] + [3].
  EXPECT_EQ(resultType("gather_grad", {i32({2, 4}), f32({5, 2, 4, 3})},
                       {{"axis", 1}, {"size", 7}}),
            f32({5, 7, 3}));
  // embedding: ids [8, 16], dy [8, 16, 32] into a [50, 32] table.
  EXPECT_EQ(resultType("gather_grad", {i64({8, 16}), f32({8, 16, 32})},
                       {{"size", 50}}),
            f32({50, 32}));
  // axis -1 of the rank-3 result [5, 7, 3] is dim 2.
  EXPECT_EQ(resultType("gather_grad", {i32({4}), f32({5, 7, 4})},
                       {{"axis", -1}, {"size", 3}}),
            f32({5, 7, 3}));
  EXPECT_EQ(flops("gather_grad", {i32({4}), f32({5, 7, 4})},
                  {{"axis", -1}, {"size", 3}}),
            140);
  EXPECT_THAT(error("gather_grad", {i32({2, 4}), f32({5, 2, 3, 3})},
                    {{"axis", 1}, {"size", 7}}),
              HasSubstr("'gather_grad' dy f32[5,2,3,3] must hold the shape of "
                        "indices i32[2,4] at dim 1"));
  EXPECT_THAT(error("gather_grad", {f32({4}), f32({4})}, {{"size", 7}}),
              HasSubstr("'gather_grad' operand 0 must be an integer tensor"));
}

TEST_F(BackwardOpsTest, SoftmaxCrossEntropyGradHasTheTypeOfLogits) {
  EXPECT_EQ(resultType("softmax_cross_entropy_grad",
                       {f32({4, 10}), i32({4}), f32({})}),
            f32({4, 10}));
  EXPECT_THAT(error("softmax_cross_entropy_grad",
                    {f32({4, 10}), i32({4}), f32({4})}),
              HasSubstr("'softmax_cross_entropy_grad' dy f32[4] must be the loss "
                        "type f32[]"));
  EXPECT_THAT(error("softmax_cross_entropy_grad",
                    {f32({4, 10}), i32({5}), f32({})}),
              HasSubstr("'softmax_cross_entropy_grad' labels i32[5] must have "
                        "the shape of logits f32[4,10]"));
}

} // namespace
} // namespace remat::test

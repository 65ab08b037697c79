//===- OpsNormLossTest.cpp - Normalisation, indexing, dropout and losses ----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Result types, error messages and FLOPs of layer_norm, batch_norm,
/// embedding, gather, dropout, softmax_cross_entropy and mse_loss, as
/// op-spec.md defines them.
///
//===----------------------------------------------------------------------===//

#include "OpsTestSupport.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace remat::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Type f16(std::initializer_list<int64_t> shape) { return typeOf(DType::F16, shape); }
Type i32(std::initializer_list<int64_t> shape) { return typeOf(DType::I32, shape); }
Type i64(std::initializer_list<int64_t> shape) { return typeOf(DType::I64, shape); }

//===----------------------------------------------------------------------===//
// layer_norm, batch_norm
//===----------------------------------------------------------------------===//

class NormalizationTest : public OpsTest {};

TEST_F(NormalizationTest, LayerNormKeepsTheTypeOfX) {
  std::vector<Type> gpt = {f32({32, 128, 768}), f32({768}), f32({768})};
  EXPECT_EQ(resultType("layer_norm", gpt), f32({32, 128, 768}));
  EXPECT_EQ(resultType("layer_norm", gpt, {{"eps", 1e-6}}), f32({32, 128, 768}));
  // 8 per element of x: 8*32*128*768 = 25165824.
  EXPECT_EQ(flops("layer_norm", gpt), int64_t(25165824));
  EXPECT_EQ(resultType("layer_norm", {f16({10}), f16({10}), f16({10})}),
            f16({10}));
}

TEST_F(NormalizationTest, LayerNormRejectsBadOperands) {
  EXPECT_THAT(error("layer_norm", {f32({4, 768}), f32({512}), f32({768})}),
              HasSubstr("'layer_norm' operand 1 must have shape [768] (the last "
                        "dim of x), got f32[512]"));
  EXPECT_THAT(error("layer_norm", {f32({4, 768}), f32({768}), f32({1, 768})}),
              HasSubstr("'layer_norm' operand 2 must have shape [768] (the last "
                        "dim of x), got f32[1,768]"));
  EXPECT_THAT(error("layer_norm", {i32({4, 8}), i32({8}), i32({8})}),
              HasSubstr("'layer_norm' operand 0 must be a float tensor, got "
                        "i32[4,8]"));
  EXPECT_THAT(error("layer_norm", {f32({4, 8}), f16({8}), f16({8})}),
              HasSubstr("'layer_norm' operand 1 has dtype f16 but operand 0 has "
                        "f32"));
  EXPECT_THAT(error("layer_norm", {f32({}), f32({}), f32({})}),
              HasSubstr("'layer_norm' operand 0 must have rank >= 1, got f32[]"));
  EXPECT_THAT(error("layer_norm", {f32({4, 8}), f32({8})}),
              HasSubstr("'layer_norm' takes 3 operands, got 2"));
  EXPECT_THAT(error("layer_norm", {f32({4, 8}), f32({8}), f32({8})},
                    {{"eps", -1e-5}}),
              HasSubstr("'layer_norm' eps must be >= 0"));
}

TEST_F(NormalizationTest, BatchNormReturnsOutputMeanAndVariance) {
  std::vector<Type> resnet = {f32({16, 64, 56, 56}), f32({64}), f32({64})};
  EXPECT_THAT(resultTypes("batch_norm", resnet),
              ElementsAre(f32({16, 64, 56, 56}), f32({64}), f32({64})));
  // 8 per element of x: 8*16*64*56*56 = 25690112.
  EXPECT_EQ(flops("batch_norm", resnet), int64_t(25690112));
  // Rank 2 (after a dense layer): channels are dim 1; stats keep the dtype.
  EXPECT_THAT(resultTypes("batch_norm", {f16({32, 100}), f16({100}), f16({100})}),
              ElementsAre(f16({32, 100}), f16({100}), f16({100})));
}

TEST_F(NormalizationTest, BatchNormRejectsBadOperands) {
  EXPECT_THAT(error("batch_norm", {f32({16, 64, 8, 8}), f32({32}), f32({64})}),
              HasSubstr("'batch_norm' operand 1 must have shape [64] (the "
                        "channels of x), got f32[32]"));
  // gamma sized by the last dim (the layer_norm convention) is not channels.
  EXPECT_THAT(error("batch_norm", {f32({16, 64, 8, 8}), f32({64}), f32({8})}),
              HasSubstr("'batch_norm' operand 2 must have shape [64] (the "
                        "channels of x), got f32[8]"));
  EXPECT_THAT(error("batch_norm", {f32({64}), f32({64}), f32({64})}),
              HasSubstr("'batch_norm' operand 0 must have rank >= 2, got f32[64]"));
  EXPECT_THAT(error("batch_norm", {i64({2, 3}), f32({3}), f32({3})}),
              HasSubstr("'batch_norm' operand 0 must be a float tensor"));
}

//===----------------------------------------------------------------------===//
// embedding, gather
//===----------------------------------------------------------------------===//

class IndexingTest : public OpsTest {};

TEST_F(IndexingTest, EmbeddingAppendsTheRowWidth) {
  EXPECT_EQ(resultType("embedding", {f32({50257, 768}), i64({4, 128})}),
            f32({4, 128, 768}));
  EXPECT_EQ(resultType("embedding", {f16({100, 16}), i32({})}), f16({16}));
  EXPECT_EQ(flops("embedding", {f32({50257, 768}), i64({4, 128})}), 0);
}

TEST_F(IndexingTest, EmbeddingRejectsBadOperands) {
  EXPECT_THAT(error("embedding", {f32({100, 16}), f32({4, 128})}),
              HasSubstr("'embedding' operand 1 must be an integer tensor, got "
                        "f32[4,128]"));
  EXPECT_THAT(error("embedding", {i32({100, 16}), i32({4})}),
              HasSubstr("'embedding' operand 0 must be a float tensor, got "
                        "i32[100,16]"));
  EXPECT_THAT(error("embedding", {f32({100, 16, 2}), i32({4})}),
              HasSubstr("'embedding' operand 0 must have rank 2, got "
                        "f32[100,16,2]"));
}

TEST_F(IndexingTest, GatherReplacesTheAxisByTheIndexShape) {
  // x [10,20,30], axis 1, indices [5] -> [10] + [5] + [30].
  EXPECT_EQ(resultType("gather", {f32({10, 20, 30}), i32({5})}, {{"axis", 1}}),
            f32({10, 5, 30}));
  // axis -1 = 2; indices [2,3] -> [10,20] + [2,3].
  EXPECT_EQ(resultType("gather", {f32({10, 20, 30}), i64({2, 3})}, {{"axis", -1}}),
            f32({10, 20, 2, 3}));
  // Default axis 0, scalar index: drops the dim.
  EXPECT_EQ(resultType("gather", {i32({10, 20}), i32({})}), i32({20}));
  EXPECT_EQ(flops("gather", {f32({10, 20, 30}), i32({5})}), 0);
}

TEST_F(IndexingTest, GatherRejectsBadAxisAndIndices) {
  EXPECT_THAT(error("gather", {f32({10, 20, 30}), i32({5})}, {{"axis", 3}}),
              HasSubstr("'gather' axis 3 is out of range for rank 3"));
  EXPECT_THAT(error("gather", {f32({10, 20, 30}), i32({5})}, {{"axis", -4}}),
              HasSubstr("'gather' axis -4 is out of range for rank 3"));
  EXPECT_THAT(error("gather", {f32({}), i32({5})}),
              HasSubstr("'gather' axis 0 is out of range for rank 0"));
  EXPECT_THAT(error("gather", {f32({10, 20}), f32({5})}),
              HasSubstr("'gather' operand 1 must be an integer tensor, got f32[5]"));
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

class DropoutTest : public OpsTest {};

TEST_F(DropoutTest, KeepsTheTypeAndIsRandom) {
  AttrList attrs = {{"rate", 0.1}, {"seed", 7}};
  EXPECT_EQ(resultType("dropout", {f32({32, 512})}, attrs), f32({32, 512}));
  // 2 per element (draw and scale): 2*32*512 = 32768.
  EXPECT_EQ(flops("dropout", {f32({32, 512})}, attrs), 32768);
  // Rate 0 is allowed, and an int literal reads as a float.
  EXPECT_EQ(resultType("dropout", {f16({4})}, {{"rate", 0}, {"seed", -3}}),
            f16({4}));
  EXPECT_TRUE(OpRegistry::global().lookup("dropout")->hasFlag(OpFlagRandom));
}

TEST_F(DropoutTest, RejectsRateOutsideTheUnitInterval) {
  EXPECT_THAT(error("dropout", {f32({4})}, {{"rate", 1.0}, {"seed", 7}}),
              HasSubstr("'dropout' rate must be in [0, 1), got 1"));
  EXPECT_THAT(error("dropout", {f32({4})}, {{"rate", -0.5}, {"seed", 7}}),
              HasSubstr("'dropout' rate must be in [0, 1), got -0.5"));
  EXPECT_THAT(error("dropout", {f32({4})}, {{"rate", std::nan("")}, {"seed", 7}}),
              HasSubstr("'dropout' rate must be in [0, 1), got nan"));
}

TEST_F(DropoutTest, RejectsMissingAttributesAndIntegers) {
  EXPECT_THAT(error("dropout", {f32({4})}, {{"rate", 0.1}}),
              HasSubstr("'dropout' needs attribute 'seed'"));
  EXPECT_THAT(error("dropout", {f32({4})}, {{"seed", 1}}),
              HasSubstr("'dropout' needs attribute 'rate'"));
  EXPECT_THAT(error("dropout", {i32({4})}, {{"rate", 0.1}, {"seed", 1}}),
              HasSubstr("'dropout' operand 0 must be a float tensor, got i32[4]"));
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy, mse_loss
//===----------------------------------------------------------------------===//

class LossTest : public OpsTest {};

TEST_F(LossTest, CrossEntropyIsAScalarOfTheLogitsDType) {
  EXPECT_EQ(resultType("softmax_cross_entropy", {f32({32, 10}), i32({32})}),
            f32({}));
  EXPECT_EQ(resultType("softmax_cross_entropy",
                       {f16({4, 128, 50257}), i64({4, 128})}),
            f16({}));
  // One position: logits [C], labels [].
  EXPECT_EQ(resultType("softmax_cross_entropy", {f32({10}), i32({})}), f32({}));
  // 6 per logit element: 6*32*10 = 1920.
  EXPECT_EQ(flops("softmax_cross_entropy", {f32({32, 10}), i32({32})}), 1920);
}

TEST_F(LossTest, CrossEntropyRejectsBadLabelsAndLogits) {
  EXPECT_THAT(error("softmax_cross_entropy", {f32({32, 10}), f32({32})}),
              HasSubstr("'softmax_cross_entropy' operand 1 must be an integer "
                        "tensor, got f32[32]"));
  EXPECT_THAT(error("softmax_cross_entropy", {i32({32, 10}), i32({32})}),
              HasSubstr("'softmax_cross_entropy' operand 0 must be a float "
                        "tensor, got i32[32,10]"));
  EXPECT_THAT(error("softmax_cross_entropy", {f32({32, 10}), i32({16})}),
              HasSubstr("'softmax_cross_entropy' labels i32[16] must have the "
                        "shape of logits f32[32,10] without the class dim, [32]"));
  // One-hot labels are not class indices.
  EXPECT_THAT(error("softmax_cross_entropy", {f32({32, 10}), i32({32, 10})}),
              HasSubstr("labels i32[32,10] must have the shape of logits"));
  EXPECT_THAT(error("softmax_cross_entropy", {f32({}), i32({})}),
              HasSubstr("'softmax_cross_entropy' operand 0 must have rank >= 1"));
}

TEST_F(LossTest, MseLossIsAScalarOfThePredictionDType) {
  EXPECT_EQ(resultType("mse_loss", {f32({32, 1}), f32({32, 1})}), f32({}));
  EXPECT_EQ(resultType("mse_loss", {f16({8}), f16({8})}), f16({}));
  // 3 per element (sub, square, sum): 3*32 = 96.
  EXPECT_EQ(flops("mse_loss", {f32({32, 1}), f32({32, 1})}), 96);
}

TEST_F(LossTest, MseLossRejectsMismatchedOrIntegerOperands) {
  EXPECT_THAT(error("mse_loss", {f32({32, 1}), f32({32})}),
              HasSubstr("'mse_loss' target f32[32] must have the type of pred "
                        "f32[32,1]"));
  EXPECT_THAT(error("mse_loss", {f32({8}), f16({8})}),
              HasSubstr("'mse_loss' target f16[8] must have the type of pred "
                        "f32[8]"));
  EXPECT_THAT(error("mse_loss", {i32({8}), i32({8})}),
              HasSubstr("'mse_loss' operand 0 must be a float tensor, got i32[8]"));
}

} // namespace
} // namespace remat::test

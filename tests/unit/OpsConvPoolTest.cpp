//===- OpsConvPoolTest.cpp - conv2d and the pooling ops ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Result types, error messages and FLOPs of conv2d, max_pool2d, avg_pool2d,
/// global_avg_pool and upsample_nearest, as op-spec.md defines them.
///
//===----------------------------------------------------------------------===//

#include "OpsTestSupport.h"

#include <cstdint>

namespace remat::test {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kHuge = int64_t(1) << 62;

Type f16(std::initializer_list<int64_t> shape) { return typeOf(DType::F16, shape); }
Type i32(std::initializer_list<int64_t> shape) { return typeOf(DType::I32, shape); }

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

class Conv2dTest : public OpsTest {};

TEST_F(Conv2dTest, ResNetStemHalvesTheImage) {
  // Ho = (224 + 2*3 - 1*(7-1) - 1) / 2 + 1 = 223 / 2 + 1 = 112.
  AttrList stem = {{"strides", {2, 2}}, {"padding", {3, 3}}};
  EXPECT_EQ(resultType("conv2d", {f32({1, 3, 224, 224}), f32({64, 3, 7, 7})},
                       stem),
            f32({1, 64, 112, 112}));
  // 2*N*Cout*Ho*Wo*(Cin/groups)*kh*kw = 2*1*64*112*112*3*7*7 = 236027904.
  EXPECT_EQ(flops("conv2d", {f32({1, 3, 224, 224}), f32({64, 3, 7, 7})}, stem),
            int64_t(236027904));
}

TEST_F(Conv2dTest, DefaultsAreUnitStrideNoPadding) {
  // Ho = (32 - 2 - 1) / 1 + 1 = 30.
  EXPECT_EQ(resultType("conv2d", {f32({2, 16, 32, 32}), f32({32, 16, 3, 3})}),
            f32({2, 32, 30, 30}));
  // 2*2*32*30*30*16*3*3 = 16588800.
  EXPECT_EQ(flops("conv2d", {f32({2, 16, 32, 32}), f32({32, 16, 3, 3})}),
            int64_t(16588800));
}

TEST_F(Conv2dTest, DepthwiseWithGroupsEqualToChannels) {
  // groups = C = 32: w [32, 32/32 = 1, 3, 3]; pad 1 keeps 56.
  AttrList depthwise = {{"padding", {1, 1}}, {"groups", 32}};
  EXPECT_EQ(resultType("conv2d", {f32({8, 32, 56, 56}), f32({32, 1, 3, 3})},
                       depthwise),
            f32({8, 32, 56, 56}));
  // 2*8*32*56*56*1*3*3 = 14450688: one input channel per output channel.
  EXPECT_EQ(flops("conv2d", {f32({8, 32, 56, 56}), f32({32, 1, 3, 3})},
                  depthwise),
            int64_t(14450688));
}

TEST_F(Conv2dTest, GroupedConvolutionReadsCinOverGroupsChannels) {
  // groups 2: Cin 4 -> 2 per group, Cout 6 -> 3 per group; 1x1 keeps 8x8.
  AttrList grouped = {{"groups", 2}};
  EXPECT_EQ(resultType("conv2d", {f32({1, 4, 8, 8}), f32({6, 2, 1, 1})}, grouped),
            f32({1, 6, 8, 8}));
  // 2*1*6*8*8*2*1*1 = 1536.
  EXPECT_EQ(flops("conv2d", {f32({1, 4, 8, 8}), f32({6, 2, 1, 1})}, grouped),
            1536);
}

TEST_F(Conv2dTest, DilationWidensTheWindow) {
  // Dilation 2 makes a 3x3 kernel span 2*(3-1)+1 = 5: Ho = (10 - 5) / 1 + 1 = 6.
  EXPECT_EQ(resultType("conv2d", {f32({1, 4, 10, 10}), f32({8, 4, 3, 3})},
                       {{"dilation", {2, 2}}}),
            f32({1, 8, 6, 6}));
  // With padding 2: (10 + 4 - 5) / 1 + 1 = 10.
  EXPECT_EQ(resultType("conv2d", {f32({1, 4, 10, 10}), f32({8, 4, 3, 3})},
                       {{"dilation", {2, 2}}, {"padding", {2, 2}}}),
            f32({1, 8, 10, 10}));
  // FLOPs do not grow with dilation: 2*1*8*6*6*4*3*3 = 20736.
  EXPECT_EQ(flops("conv2d", {f32({1, 4, 10, 10}), f32({8, 4, 3, 3})},
                  {{"dilation", {2, 2}}}),
            20736);
}

TEST_F(Conv2dTest, HeightAndWidthSettingsAreIndependent) {
  // H: (7 - 3) / 2 + 1 = 3.  W: kernel 1, pad 1: (5 + 2 - 1) / 1 + 1 = 7.
  EXPECT_EQ(resultType("conv2d", {f32({1, 1, 7, 5}), f32({1, 1, 3, 1})},
                       {{"strides", {2, 1}}, {"padding", {0, 1}}}),
            f32({1, 1, 3, 7}));
  // Integer division floors: (8 - 3) / 2 + 1 = 3.
  EXPECT_EQ(resultType("conv2d", {f32({1, 1, 8, 8}), f32({1, 1, 3, 3})},
                       {{"strides", {2, 2}}}),
            f32({1, 1, 3, 3}));
}

TEST_F(Conv2dTest, KeepsTheDTypeAndIsExpensive) {
  EXPECT_EQ(resultType("conv2d", {f16({1, 3, 4, 4}), f16({2, 3, 1, 1})}),
            f16({1, 2, 4, 4}));
  EXPECT_TRUE(OpRegistry::global().lookup("conv2d")->hasFlag(OpFlagExpensive));
}

TEST_F(Conv2dTest, RejectsWrongRanksAndDTypes) {
  EXPECT_THAT(error("conv2d", {f32({3, 224, 224}), f32({64, 3, 7, 7})}),
              HasSubstr("'conv2d' operand 0 must have rank 4, got f32[3,224,224]"));
  EXPECT_THAT(error("conv2d", {f32({1, 3, 8, 8}), f32({64, 3})}),
              HasSubstr("'conv2d' operand 1 must have rank 4, got f32[64,3]"));
  EXPECT_THAT(error("conv2d", {i32({1, 3, 8, 8}), i32({4, 3, 3, 3})}),
              HasSubstr("'conv2d' operand 0 must be a float tensor, got i32[1,3,8,8]"));
  EXPECT_THAT(error("conv2d", {f32({1, 3, 8, 8}), f16({4, 3, 3, 3})}),
              HasSubstr("'conv2d' operand 1 has dtype f16 but operand 0 has f32"));
}

TEST_F(Conv2dTest, RejectsChannelAndGroupMismatches) {
  EXPECT_THAT(error("conv2d", {f32({1, 3, 224, 224}), f32({64, 4, 7, 7})}),
              HasSubstr("'conv2d' w f32[64,4,7,7] has 4 input channels per "
                        "group, but x f32[1,3,224,224] with groups 1 needs 3"));
  // Depthwise weights with groups left at 1.
  EXPECT_THAT(error("conv2d", {f32({1, 32, 8, 8}), f32({32, 1, 3, 3})}),
              HasSubstr("has 1 input channels per group, but x f32[1,32,8,8] "
                        "with groups 1 needs 32"));
  EXPECT_THAT(error("conv2d", {f32({1, 6, 8, 8}), f32({4, 2, 3, 3})},
                    {{"groups", 4}}),
              HasSubstr("'conv2d' input channels 6 of x f32[1,6,8,8] are not "
                        "divisible by groups 4"));
  EXPECT_THAT(error("conv2d", {f32({1, 4, 8, 8}), f32({6, 1, 1, 1})},
                    {{"groups", 4}}),
              HasSubstr("'conv2d' output channels 6 of w f32[6,1,1,1] are not "
                        "divisible by groups 4"));
  EXPECT_THAT(error("conv2d", {f32({1, 4, 8, 8}), f32({4, 4, 1, 1})},
                    {{"groups", 0}}),
              HasSubstr("'conv2d' groups must be >= 1, got 0"));
  EXPECT_THAT(error("conv2d", {f32({1, 4, 8, 8}), f32({4, 4, 1, 1})},
                    {{"groups", -2}}),
              HasSubstr("'conv2d' groups must be >= 1, got -2"));
}

TEST_F(Conv2dTest, RejectsBadListAttributes) {
  std::vector<Type> types = {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})};
  EXPECT_THAT(error("conv2d", types, {{"strides", {2}}}),
              HasSubstr("'conv2d' attribute 'strides' must have 2 entries [h, "
                        "w], got [2]"));
  EXPECT_THAT(error("conv2d", types, {{"padding", {1, 1, 1, 1}}}),
              HasSubstr("'conv2d' attribute 'padding' must have 2 entries [h, "
                        "w], got [1,1,1,1]"));
  EXPECT_THAT(error("conv2d", types, {{"dilation", emptyList()}}),
              HasSubstr("'conv2d' attribute 'dilation' must have 2 entries"));
  EXPECT_THAT(error("conv2d", types, {{"strides", {0, 1}}}),
              HasSubstr("'conv2d' attribute 'strides' entries must be >= 1, got "
                        "[0,1]"));
  EXPECT_THAT(error("conv2d", types, {{"strides", {1, -1}}}),
              HasSubstr("'conv2d' attribute 'strides' entries must be >= 1, got "
                        "[1,-1]"));
  EXPECT_THAT(error("conv2d", types, {{"padding", {-1, 0}}}),
              HasSubstr("'conv2d' attribute 'padding' entries must be >= 0, got "
                        "[-1,0]"));
  EXPECT_THAT(error("conv2d", types, {{"dilation", {1, 0}}}),
              HasSubstr("'conv2d' attribute 'dilation' entries must be >= 1, "
                        "got [1,0]"));
  EXPECT_THAT(error("conv2d", types, {{"strides", 2}}),
              HasSubstr("'conv2d' attribute 'strides' must be int list, got int"));
}

TEST_F(Conv2dTest, RejectsWindowsThatDoNotFit) {
  // 7x7 kernel on a 5x5 image: window 7 > 5 + 0.
  EXPECT_THAT(error("conv2d", {f32({1, 3, 5, 5}), f32({8, 3, 7, 7})}),
              HasSubstr("'conv2d' output height would be < 1: window 7 (kernel "
                        "7, dilation 1) is larger than input 5 + 2*padding 0"));
  // Dilation 3 spans 3*(3-1)+1 = 7 > 5 along the width only.
  EXPECT_THAT(error("conv2d", {f32({1, 1, 9, 5}), f32({1, 1, 3, 3})},
                    {{"dilation", {3, 3}}}),
              HasSubstr("'conv2d' output width would be < 1: window 7 (kernel "
                        "3, dilation 3) is larger than input 5 + 2*padding 0"));
  // Padding rescues it: 5 + 2*1 = 7 fits exactly one window.
  EXPECT_EQ(resultType("conv2d", {f32({1, 1, 9, 5}), f32({1, 1, 3, 3})},
                       {{"dilation", {3, 3}}, {"padding", {0, 1}}}),
            f32({1, 1, 3, 1}));
  EXPECT_THAT(error("conv2d", {f32({1, 3, 8, 8}), f32({8, 3, 0, 3})}),
              HasSubstr("'conv2d' kernel of w f32[8,3,0,3] must be at least 1x1"));
}

TEST_F(Conv2dTest, OverflowingWindowArithmeticIsAnError) {
  std::vector<Type> types = {f32({1, 1, 8, 8}), f32({1, 1, 3, 3})};
  // 2 * 2^62 overflows int64.
  EXPECT_THAT(error("conv2d", types, {{"padding", {kHuge, 0}}}),
              HasSubstr("'conv2d' window arithmetic overflows int64 along height"));
  // 2^62 * (3 - 1) overflows int64.
  EXPECT_THAT(error("conv2d", types, {{"dilation", {1, kHuge}}}),
              HasSubstr("'conv2d' window arithmetic overflows int64 along width"));
}

//===----------------------------------------------------------------------===//
// max_pool2d, avg_pool2d
//===----------------------------------------------------------------------===//

class Pool2dTest : public OpsTest {};

TEST_F(Pool2dTest, ResNetMaxPoolHalvesTheImage) {
  // (112 + 2*1 - 3) / 2 + 1 = 111 / 2 + 1 = 56.
  AttrList resnet = {{"kernel", {3, 3}}, {"strides", {2, 2}}, {"padding", {1, 1}}};
  EXPECT_EQ(resultType("max_pool2d", {f32({1, 64, 112, 112})}, resnet),
            f32({1, 64, 56, 56}));
  // kh*kw per output element: 3*3 * 1*64*56*56 = 1806336.
  EXPECT_EQ(flops("max_pool2d", {f32({1, 64, 112, 112})}, resnet),
            int64_t(1806336));
}

TEST_F(Pool2dTest, EmptyStridesMeanTheKernel) {
  // Kernel 2, strides [] -> 2: 32 / 2 = 16.
  EXPECT_EQ(resultType("avg_pool2d", {f32({4, 8, 32, 32})}, {{"kernel", {2, 2}}}),
            f32({4, 8, 16, 16}));
  EXPECT_EQ(resultType("avg_pool2d", {f32({4, 8, 32, 32})},
                       {{"kernel", {2, 2}}, {"strides", emptyList()}}),
            f32({4, 8, 16, 16}));
  // 2*2 * 4*8*16*16 = 32768.
  EXPECT_EQ(flops("avg_pool2d", {f32({4, 8, 32, 32})}, {{"kernel", {2, 2}}}),
            32768);
  // Floors like conv2d: (10 - 3) / 3 + 1 = 3; width (10 - 2) / 2 + 1 = 5.
  EXPECT_EQ(resultType("max_pool2d", {f32({1, 1, 10, 10})}, {{"kernel", {3, 2}}}),
            f32({1, 1, 3, 5}));
  // Overlapping windows: (5 - 2) / 1 + 1 = 4.
  EXPECT_EQ(resultType("max_pool2d", {f32({1, 1, 5, 5})},
                       {{"kernel", {2, 2}}, {"strides", {1, 1}}}),
            f32({1, 1, 4, 4}));
}

TEST_F(Pool2dTest, MaxPoolTakesAnyDTypeAvgPoolOnlyFloat) {
  EXPECT_EQ(resultType("max_pool2d", {i32({1, 1, 4, 4})}, {{"kernel", {2, 2}}}),
            i32({1, 1, 2, 2}));
  EXPECT_THAT(error("avg_pool2d", {i32({1, 1, 4, 4})}, {{"kernel", {2, 2}}}),
              HasSubstr("'avg_pool2d' operand 0 must be a float tensor, got "
                        "i32[1,1,4,4]"));
}

TEST_F(Pool2dTest, RejectsBadShapesAndAttributes) {
  EXPECT_THAT(error("max_pool2d", {f32({64, 112, 112})}, {{"kernel", {3, 3}}}),
              HasSubstr("'max_pool2d' operand 0 must have rank 4, got "
                        "f32[64,112,112]"));
  EXPECT_THAT(error("max_pool2d", {f32({1, 1, 4, 4})}),
              HasSubstr("'max_pool2d' needs attribute 'kernel'"));
  EXPECT_THAT(error("max_pool2d", {f32({1, 1, 4, 4})}, {{"kernel", {3}}}),
              HasSubstr("'max_pool2d' attribute 'kernel' must have 2 entries "
                        "[h, w], got [3]"));
  EXPECT_THAT(error("avg_pool2d", {f32({1, 1, 4, 4})}, {{"kernel", {0, 3}}}),
              HasSubstr("'avg_pool2d' attribute 'kernel' entries must be >= 1, "
                        "got [0,3]"));
  EXPECT_THAT(error("avg_pool2d", {f32({1, 1, 4, 4})},
                    {{"kernel", {2, 2}}, {"strides", {2, 0}}}),
              HasSubstr("'avg_pool2d' attribute 'strides' entries must be >= 1, "
                        "got [2,0]"));
  EXPECT_THAT(error("avg_pool2d", {f32({1, 1, 4, 4})},
                    {{"kernel", {2, 2}}, {"strides", {2, 2, 2}}}),
              HasSubstr("'avg_pool2d' attribute 'strides' must have 2 entries"));
  EXPECT_THAT(error("max_pool2d", {f32({1, 1, 4, 4})},
                    {{"kernel", {2, 2}}, {"padding", {0, -1}}}),
              HasSubstr("'max_pool2d' attribute 'padding' entries must be >= 0, "
                        "got [0,-1]"));
  EXPECT_THAT(error("max_pool2d", {f32({1, 1, 8, 8})},
                    {{"kernel", {3, 3}}, {"padding", {1, 3}}}),
              HasSubstr("'max_pool2d' padding [1,3] must be smaller than kernel "
                        "[3,3]: a window would cover only padding"));
  EXPECT_THAT(error("max_pool2d", {f32({1, 1, 4, 4})}, {{"kernel", {5, 5}}}),
              HasSubstr("'max_pool2d' output height would be < 1: window 5 "
                        "(kernel 5, dilation 1) is larger than input 4 + "
                        "2*padding 0"));
  // A stride past the input leaves one window: (8 - 3) / 2^62 + 1 = 1.
  EXPECT_EQ(resultType("max_pool2d", {f32({1, 1, 8, 8})},
                       {{"kernel", {3, 3}}, {"strides", {1, kHuge}}}),
            f32({1, 1, 6, 1}));
}

//===----------------------------------------------------------------------===//
// global_avg_pool, upsample_nearest
//===----------------------------------------------------------------------===//

class GlobalPoolUpsampleTest : public OpsTest {};

TEST_F(GlobalPoolUpsampleTest, GlobalAvgPoolDropsTheImageDims) {
  EXPECT_EQ(resultType("global_avg_pool", {f32({8, 512, 7, 7})}), f32({8, 512}));
  // One add per input element: 8*512*7*7 = 200704.
  EXPECT_EQ(flops("global_avg_pool", {f32({8, 512, 7, 7})}), 200704);
  EXPECT_THAT(error("global_avg_pool", {f32({8, 512})}),
              HasSubstr("'global_avg_pool' operand 0 must have rank 4, got "
                        "f32[8,512]"));
  EXPECT_THAT(error("global_avg_pool", {i32({8, 512, 7, 7})}),
              HasSubstr("'global_avg_pool' operand 0 must be a float tensor"));
}

TEST_F(GlobalPoolUpsampleTest, UpsampleNearestScalesHeightAndWidth) {
  EXPECT_EQ(resultType("upsample_nearest", {f32({1, 16, 8, 8})}),
            f32({1, 16, 16, 16}));
  EXPECT_EQ(resultType("upsample_nearest", {i32({2, 3, 4, 5})}, {{"scale", 3}}),
            i32({2, 3, 12, 15}));
  EXPECT_EQ(resultType("upsample_nearest", {f32({2, 3, 4, 5})}, {{"scale", 1}}),
            f32({2, 3, 4, 5}));
  EXPECT_EQ(flops("upsample_nearest", {f32({1, 16, 8, 8})}), 0);
}

TEST_F(GlobalPoolUpsampleTest, UpsampleNearestRejectsBadScaleAndRank) {
  EXPECT_THAT(error("upsample_nearest", {f32({1, 16, 8, 8})}, {{"scale", 0}}),
              HasSubstr("'upsample_nearest' scale must be >= 1, got 0"));
  EXPECT_THAT(error("upsample_nearest", {f32({1, 16, 8, 8})}, {{"scale", -2}}),
              HasSubstr("'upsample_nearest' scale must be >= 1, got -2"));
  EXPECT_THAT(error("upsample_nearest", {f32({16, 8, 8})}),
              HasSubstr("'upsample_nearest' operand 0 must have rank 4"));
  // 8 * 2^62 overflows int64.
  EXPECT_THAT(error("upsample_nearest", {f32({1, 16, 8, 8})}, {{"scale", kHuge}}),
              HasSubstr("'upsample_nearest' of f32[1,16,8,8] by scale "
                        "4611686018427387904 overflows int64 dims"));
}

} // namespace
} // namespace remat::test

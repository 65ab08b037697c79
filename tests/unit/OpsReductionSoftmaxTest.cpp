//===- OpsReductionSoftmaxTest.cpp - Reductions, softmax, causal mask -----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Result types, error messages and FLOPs of reduce_sum/mean/max, softmax,
/// log_softmax and causal_mask, as op-spec.md defines them.
///
//===----------------------------------------------------------------------===//

#include "OpsTestSupport.h"

#include <cstdint>
#include <limits>

namespace remat::test {
namespace {

using ::testing::HasSubstr;

//===----------------------------------------------------------------------===//
// reduce_sum, reduce_mean, reduce_max
//===----------------------------------------------------------------------===//

class ReductionTest : public OpsTest {};

TEST_F(ReductionTest, DropsOrKeepsReducedDims) {
  for (const char *kind : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    SCOPED_TRACE(kind);
    EXPECT_EQ(resultType(kind, {f32({2, 3, 4})}, {{"axes", {1}}}), f32({2, 4}));
    EXPECT_EQ(
        resultType(kind, {f32({2, 3, 4})}, {{"axes", {1}}, {"keepdims", true}}),
        f32({2, 1, 4}));
    // -1 is dim 2; the order of axes does not matter.
    EXPECT_EQ(resultType(kind, {f32({2, 3, 4})}, {{"axes", {-1, 0}}}),
              f32({3}));
    // No axes: every dim.
    EXPECT_EQ(resultType(kind, {f32({2, 3, 4})}), f32({}));
    EXPECT_EQ(resultType(kind, {f32({2, 3, 4})}, {{"keepdims", true}}),
              f32({1, 1, 1}));
    EXPECT_EQ(resultType(kind, {f32({})}), f32({}));
    // One FLOP per input element: 2*3*4 = 24, whatever survives.
    EXPECT_EQ(flops(kind, {f32({2, 3, 4})}, {{"axes", {1}}}), 24);
    EXPECT_EQ(flops(kind, {f32({2, 3, 4})}), 24);
  }
}

TEST_F(ReductionTest, SumAndMaxTakeAnyDTypeMeanNeedsFloat) {
  Type ints = typeOf(DType::I32, {2, 3});
  EXPECT_EQ(resultType("reduce_sum", {ints}, {{"axes", {0}}}),
            typeOf(DType::I32, {3}));
  EXPECT_EQ(resultType("reduce_max", {ints}, {{"axes", {0}}}),
            typeOf(DType::I32, {3}));
  EXPECT_THAT(error("reduce_mean", {ints}, {{"axes", {0}}}),
              HasSubstr("'reduce_mean' operand 0 must be a float tensor, got "
                        "i32[2,3]"));
}

TEST_F(ReductionTest, Errors) {
  // 1 and -2 both name dim 1 of a rank-3 tensor.
  EXPECT_THAT(error("reduce_sum", {f32({2, 3, 4})}, {{"axes", {1, -2}}}),
              HasSubstr("'reduce_sum' axes [1,-2] name dim 1 twice"));
  EXPECT_THAT(error("reduce_max", {f32({2, 3, 4})}, {{"axes", {3}}}),
              HasSubstr("'reduce_max' axis 3 is out of range for rank 3"));
  EXPECT_THAT(error("reduce_mean", {f32({2, 3, 4})}, {{"axes", {-4}}}),
              HasSubstr("'reduce_mean' axis -4 is out of range for rank 3"));
  EXPECT_THAT(error("reduce_sum", {f32({})}, {{"axes", {0}}}),
              HasSubstr("'reduce_sum' axis 0 is out of range for rank 0"));
  EXPECT_THAT(error("reduce_sum", {f32({2})}, {{"keepdims", 1}}),
              HasSubstr("'reduce_sum' attribute 'keepdims' must be bool"));
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax
//===----------------------------------------------------------------------===//

class SoftmaxTest : public OpsTest {};

TEST_F(SoftmaxTest, KeepsTheType) {
  for (const char *kind : {"softmax", "log_softmax"}) {
    SCOPED_TRACE(kind);
    EXPECT_EQ(resultType(kind, {f32({4, 10})}), f32({4, 10}));
    EXPECT_EQ(resultType(kind, {f32({4, 10})}, {{"axis", 0}}), f32({4, 10}));
    EXPECT_EQ(resultType(kind, {typeOf(DType::F16, {2, 3, 5})}, {{"axis", -2}}),
              typeOf(DType::F16, {2, 3, 5}));
    // 5 FLOPs per element: 5 * 4 * 10.
    EXPECT_EQ(flops(kind, {f32({4, 10})}), 200);
  }
}

TEST_F(SoftmaxTest, Errors) {
  EXPECT_THAT(error("softmax", {f32({4, 10})}, {{"axis", -3}}),
              HasSubstr("'softmax' axis -3 is out of range for rank 2"));
  EXPECT_THAT(error("log_softmax", {f32({4, 10})}, {{"axis", 2}}),
              HasSubstr("'log_softmax' axis 2 is out of range for rank 2"));
  // The default axis -1 does not exist in a scalar.
  EXPECT_THAT(error("softmax", {f32({})}),
              HasSubstr("'softmax' axis -1 is out of range for rank 0"));
  EXPECT_THAT(error("log_softmax", {typeOf(DType::I64, {4})}),
              HasSubstr("'log_softmax' operand 0 must be a float tensor, got "
                        "i64[4]"));
  EXPECT_THAT(error("softmax", {f32({4}), f32({4})}),
              HasSubstr("'softmax' takes 1 operand, got 2"));
}

TEST_F(SoftmaxTest, FlopsSaturateInsteadOfOverflowing) {
  // f16[2^62 - 1] is 2^63 - 2 bytes, a valid type, but 5 FLOPs per element
  // make about 2^64.3.
  Type big(DType::F16, {(int64_t(1) << 62) - 1});
  ASSERT_TRUE(big.checkedByteSize());
  EXPECT_EQ(flops("softmax", {big}), std::numeric_limits<int64_t>::max());
}

//===----------------------------------------------------------------------===//
// causal_mask
//===----------------------------------------------------------------------===//

class CausalMaskTest : public OpsTest {};

TEST_F(CausalMaskTest, KeepsTheType) {
  EXPECT_EQ(resultType("causal_mask", {f32({2, 8, 8})}), f32({2, 8, 8}));
  // The last two dims need not be square.
  EXPECT_EQ(resultType("causal_mask", {typeOf(DType::BF16, {4, 6})}),
            typeOf(DType::BF16, {4, 6}));
  // One FLOP per element: 2 * 8 * 8.
  EXPECT_EQ(flops("causal_mask", {f32({2, 8, 8})}), 128);
}

TEST_F(CausalMaskTest, Errors) {
  EXPECT_THAT(
      error("causal_mask", {f32({8})}),
      HasSubstr("'causal_mask' operand 0 must have rank >= 2, got f32[8]"));
  EXPECT_THAT(error("causal_mask", {typeOf(DType::I32, {8, 8})}),
              HasSubstr("'causal_mask' operand 0 must be a float tensor, got "
                        "i32[8,8]"));
  EXPECT_THAT(error("causal_mask", {f32({8, 8})}, {{"axis", -1}}),
              HasSubstr("'causal_mask' has no attribute 'axis'"));
}

TEST(ReductionSoftmaxRegistryTest, EverySummaryIsWritten) {
  for (const char *kind : {"reduce_sum", "reduce_mean", "reduce_max", "softmax",
                           "log_softmax", "causal_mask"}) {
    const OpDef *def = OpRegistry::global().lookup(kind);
    ASSERT_NE(def, nullptr) << kind;
    EXPECT_FALSE(def->summary.empty()) << kind;
    EXPECT_EQ(def->flags, unsigned(OpFlagNone)) << kind;
  }
}

} // namespace
} // namespace remat::test

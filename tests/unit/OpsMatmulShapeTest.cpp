//===- OpsMatmulShapeTest.cpp - matmul and the data-movement ops ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Result types, error messages and FLOPs of matmul, transpose, reshape,
/// broadcast, concat, split, slice and pad, as op-spec.md defines them.
///
//===----------------------------------------------------------------------===//

#include "OpsTestSupport.h"

#include <cstdint>
#include <limits>

namespace remat::test {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

class MatmulTest : public OpsTest {};

TEST_F(MatmulTest, BatchedTimesMatrix) {
  // a [8,32,64] x b [64,16]: batch [8], m 32, k 64, n 16.
  EXPECT_EQ(resultType("matmul", {f32({8, 32, 64}), f32({64, 16})}),
            f32({8, 32, 16}));
  EXPECT_EQ(flops("matmul", {f32({8, 32, 64}), f32({64, 16})}),
            2 * 8 * 32 * 16 * 64);
}

TEST_F(MatmulTest, BatchDimsBroadcastFromEitherSide) {
  // Batch [4,1] against [3] broadcasts to [4,3]; m 5, k 6, n 7.
  EXPECT_EQ(resultType("matmul", {f32({4, 1, 5, 6}), f32({3, 6, 7})}),
            f32({4, 3, 5, 7}));
  EXPECT_EQ(flops("matmul", {f32({4, 1, 5, 6}), f32({3, 6, 7})}),
            2 * (4 * 3) * 5 * 7 * 6);
  // The matrix side may be a and the batched side b.
  EXPECT_EQ(resultType("matmul", {f32({5, 6}), f32({2, 6, 7})}),
            f32({2, 5, 7}));
}

TEST_F(MatmulTest, TransposesSwapTheLastTwoDims) {
  // transpose_a: a [64,32] reads as [32,64], so m 32, k 64.
  EXPECT_EQ(resultType("matmul", {f32({64, 32}), f32({64, 16})},
                       {{"transpose_a", true}}),
            f32({32, 16}));
  EXPECT_EQ(
      flops("matmul", {f32({64, 32}), f32({64, 16})}, {{"transpose_a", true}}),
      2 * 32 * 16 * 64);
  // transpose_b: b [16,64] reads as [64,16].
  EXPECT_EQ(resultType("matmul", {f32({32, 64}), f32({16, 64})},
                       {{"transpose_b", true}}),
            f32({32, 16}));
  // Both, batched: a [2,64,32] -> [2,32,64]; b [16,64] -> [64,16].
  EXPECT_EQ(resultType("matmul", {f32({2, 64, 32}), f32({16, 64})},
                       {{"transpose_a", true}, {"transpose_b", true}}),
            f32({2, 32, 16}));
}

TEST_F(MatmulTest, KeepsTheDTypeAndIsExpensive) {
  EXPECT_EQ(resultType("matmul", {typeOf(DType::BF16, {2, 3}),
                                  typeOf(DType::BF16, {3, 4})}),
            typeOf(DType::BF16, {2, 4}));
  const OpDef *def = OpRegistry::global().lookup("matmul");
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->hasFlag(OpFlagExpensive));
  EXPECT_FALSE(def->hasFlag(OpFlagView));
}

TEST_F(MatmulTest, FlopsSaturateInsteadOfOverflowing) {
  // a, b f16[2^21, 2^21] are 2^43 bytes each, but 2 * m * n * k = 2^64.
  int64_t big = int64_t(1) << 21;
  Type t(DType::F16, {big, big});
  EXPECT_EQ(flops("matmul", {t, t}), kInt64Max);
}

TEST_F(MatmulTest, Errors) {
  EXPECT_THAT(error("matmul", {f32({32, 784}), f32({512, 10})}),
              HasSubstr("'matmul' contracts k = 784 of a f32[32,784] with "
                        "k = 512 of b f32[512,10]"));
  // transpose_b makes b [10,512] read as [512,10]: still 784 against 512.
  EXPECT_THAT(error("matmul", {f32({32, 784}), f32({10, 512})},
                    {{"transpose_b", true}}),
              HasSubstr("contracts k = 784 of a f32[32,784] with k = 512"));
  EXPECT_THAT(error("matmul", {f32({2, 3, 4}), f32({5, 4, 6})}),
              HasSubstr("'matmul' batch dims of f32[2,3,4] and f32[5,4,6]: "
                        "shapes [2] and [5] do not broadcast"));
  EXPECT_THAT(error("matmul", {f32({2, 64}), f32({64})}),
              HasSubstr("'matmul' operand 1 must have rank >= 2, got f32[64]"));
  EXPECT_THAT(
      error("matmul", {typeOf(DType::I32, {2, 2}), typeOf(DType::I32, {2, 2})}),
      HasSubstr("'matmul' operand 0 must be a float tensor, got i32[2,2]"));
  EXPECT_THAT(
      error("matmul", {f32({2, 2}), typeOf(DType::F64, {2, 2})}),
      HasSubstr("'matmul' operand 1 has dtype f64 but operand 0 has f32"));
  EXPECT_THAT(error("matmul", {f32({2, 2})}),
              HasSubstr("'matmul' takes 2 operands, got 1"));
  EXPECT_THAT(error("matmul", {f32({2, 2}), f32({2, 2})}, {{"transpose_a", 1}}),
              HasSubstr("'matmul' attribute 'transpose_a' must be bool"));
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

class TransposeTest : public OpsTest {};

TEST_F(TransposeTest, PermutesDims) {
  // Result dim i is x's dim perm[i]: [x2, x0, x1] = [4, 2, 3].
  EXPECT_EQ(resultType("transpose", {f32({2, 3, 4})}, {{"perm", {2, 0, 1}}}),
            f32({4, 2, 3}));
  // -1 names dim 2.
  EXPECT_EQ(resultType("transpose", {f32({2, 3, 4})}, {{"perm", {-1, 0, 1}}}),
            f32({4, 2, 3}));
  EXPECT_EQ(resultType("transpose", {f32({})}, {{"perm", emptyList()}}),
            f32({}));
  EXPECT_EQ(flops("transpose", {f32({2, 3, 4})}, {{"perm", {1, 0, 2}}}), 0);
  const OpDef *def = OpRegistry::global().lookup("transpose");
  ASSERT_NE(def, nullptr);
  EXPECT_FALSE(def->hasFlag(OpFlagView));
}

TEST_F(TransposeTest, Errors) {
  EXPECT_THAT(error("transpose", {f32({2, 3, 4})}, {{"perm", {1, 0}}}),
              HasSubstr("'transpose' perm has 2 entries but operand 0 "
                        "f32[2,3,4] has rank 3"));
  EXPECT_THAT(
      error("transpose", {f32({2, 3, 4})}, {{"perm", {0, 0, 1}}}),
      HasSubstr("'transpose' perm [0,0,1] is not a permutation of 0..2"));
  // -3 and 0 both name dim 0.
  EXPECT_THAT(error("transpose", {f32({2, 3, 4})}, {{"perm", {-3, 0, 1}}}),
              HasSubstr("is not a permutation of 0..2"));
  EXPECT_THAT(error("transpose", {f32({2, 3, 4})}, {{"perm", {0, 1, 3}}}),
              HasSubstr("'transpose' axis 3 is out of range for rank 3"));
  EXPECT_THAT(error("transpose", {f32({2, 3})}),
              HasSubstr("'transpose' needs attribute 'perm'"));
}

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

class ReshapeTest : public OpsTest {};

TEST_F(ReshapeTest, KeepsTheElementCount) {
  // 2*3*4 = 24 elements.
  EXPECT_EQ(resultType("reshape", {f32({2, 3, 4})}, {{"shape", {6, 4}}}),
            f32({6, 4}));
  EXPECT_EQ(resultType("reshape", {f32({2, 3, 4})}, {{"shape", {24}}}),
            f32({24}));
  EXPECT_EQ(resultType("reshape", {f32({1, 1})}, {{"shape", emptyList()}}),
            f32({}));
  EXPECT_EQ(flops("reshape", {f32({2, 3, 4})}, {{"shape", {6, 4}}}), 0);
  const OpDef *def = OpRegistry::global().lookup("reshape");
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->hasFlag(OpFlagView));
}

TEST_F(ReshapeTest, InfersOneMinusOne) {
  // 24 / 4 = 6 and 24 / 2 = 12.
  EXPECT_EQ(resultType("reshape", {f32({2, 3, 4})}, {{"shape", {-1, 4}}}),
            f32({6, 4}));
  EXPECT_EQ(resultType("reshape", {f32({2, 3, 4})}, {{"shape", {2, -1}}}),
            f32({2, 12}));
  // An empty tensor: 0 elements / 5 = 0.
  EXPECT_EQ(resultType("reshape", {f32({0, 5})}, {{"shape", {-1, 5}}}),
            f32({0, 5}));
}

TEST_F(ReshapeTest, Errors) {
  EXPECT_THAT(error("reshape", {f32({2, 3, 4})}, {{"shape", {-1, -1}}}),
              HasSubstr("'reshape' shape [-1,-1] has more than one -1"));
  EXPECT_THAT(error("reshape", {f32({2, 3, 4})}, {{"shape", {5, 4}}}),
              HasSubstr("'reshape' cannot reshape f32[2,3,4] (24 elements) to "
                        "[5,4] (20 elements)"));
  // 24 is not a multiple of 5.
  EXPECT_THAT(error("reshape", {f32({2, 3, 4})}, {{"shape", {5, -1}}}),
              HasSubstr("'reshape' cannot infer the -1 of shape [5,-1] from "
                        "f32[2,3,4] (24 elements)"));
  // Any size of the -1 gives 0 elements.
  EXPECT_THAT(error("reshape", {f32({0, 5})}, {{"shape", {0, -1}}}),
              HasSubstr("cannot infer the -1 of shape [0,-1]"));
  EXPECT_THAT(error("reshape", {f32({6})}, {{"shape", {2, -3}}}),
              HasSubstr("'reshape' shape [2,-3] has negative dim -3"));
  int64_t big = int64_t(1) << 40;
  EXPECT_THAT(error("reshape", {f32({6})}, {{"shape", {big, big}}}),
              HasSubstr("'reshape' shape [1099511627776,1099511627776] "
                        "overflows int64 elements"));
}

//===----------------------------------------------------------------------===//
// broadcast
//===----------------------------------------------------------------------===//

class BroadcastTest : public OpsTest {};

TEST_F(BroadcastTest, BroadcastsToExactlyTheShape) {
  EXPECT_EQ(resultType("broadcast", {f32({3, 1})}, {{"shape", {2, 3, 4}}}),
            f32({2, 3, 4}));
  EXPECT_EQ(resultType("broadcast", {f32({})}, {{"shape", {5}}}), f32({5}));
  EXPECT_EQ(resultType("broadcast", {f32({4})}, {{"shape", {4}}}), f32({4}));
  EXPECT_EQ(resultType("broadcast", {f32({1})}, {{"shape", {0}}}), f32({0}));
  EXPECT_EQ(flops("broadcast", {f32({3, 1})}, {{"shape", {2, 3, 4}}}), 0);
}

TEST_F(BroadcastTest, Errors) {
  EXPECT_THAT(error("broadcast", {f32({3, 4})}, {{"shape", {2, 5, 4}}}),
              HasSubstr("'broadcast' cannot broadcast f32[3,4] to [2,5,4]"));
  // Broadcasting never drops dims.
  EXPECT_THAT(error("broadcast", {f32({3, 4})}, {{"shape", {4}}}),
              HasSubstr("'broadcast' cannot broadcast f32[3,4] to [4]"));
  EXPECT_THAT(error("broadcast", {f32({1})}, {{"shape", {2, -1}}}),
              HasSubstr("'broadcast' shape [2,-1] has negative entry -1"));
}

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

class ConcatTest : public OpsTest {};

TEST_F(ConcatTest, SumsTheAxisDim) {
  EXPECT_EQ(resultType("concat", {f32({2, 3}), f32({4, 3})}, {{"axis", 0}}),
            f32({6, 3}));
  // 3 + 5 + 1 = 9 along the last axis.
  EXPECT_EQ(resultType("concat", {f32({2, 3}), f32({2, 5}), f32({2, 1})},
                       {{"axis", -1}}),
            f32({2, 9}));
  EXPECT_EQ(resultType("concat", {f32({2, 3})}, {{"axis", 1}}), f32({2, 3}));
  EXPECT_EQ(flops("concat", {f32({2, 3}), f32({4, 3})}, {{"axis", 0}}), 0);
}

TEST_F(ConcatTest, Errors) {
  EXPECT_THAT(error("concat", {f32({2, 3}), f32({4, 5})}, {{"axis", 0}}),
              HasSubstr("'concat' along axis 0: dim 1 of operand 1 f32[4,5] "
                        "is 5 but operand 0 f32[2,3] has 3"));
  EXPECT_THAT(error("concat", {f32({2, 3}), f32({2, 3, 1})}, {{"axis", 0}}),
              HasSubstr("'concat' operand 1 f32[2,3,1] has rank 3 but operand "
                        "0 f32[2,3] has rank 2"));
  EXPECT_THAT(
      error("concat", {f32({2, 3}), typeOf(DType::F16, {2, 3})}, {{"axis", 0}}),
      HasSubstr("'concat' operand 1 has dtype f16 but operand 0 has f32"));
  EXPECT_THAT(error("concat", {f32({2, 3}), f32({2, 3})}, {{"axis", -3}}),
              HasSubstr("'concat' axis -3 is out of range for rank 2"));
  EXPECT_THAT(error("concat", {}, {{"axis", 0}}),
              HasSubstr("'concat' takes at least 1 operand"));
  // i8[2^62] is 2^62 bytes, but two of them make a dim of 2^63.
  Type half(DType::I8, {int64_t(1) << 62});
  EXPECT_THAT(error("concat", {half, half}, {{"axis", 0}}),
              HasSubstr("'concat' result dim 0 overflows int64"));
}

//===----------------------------------------------------------------------===//
// split
//===----------------------------------------------------------------------===//

class SplitTest : public OpsTest {};

TEST_F(SplitTest, OneResultPerSize) {
  EXPECT_EQ(
      resultTypes("split", {f32({6, 4})}, {{"axis", 0}, {"sizes", {2, 4}}}),
      (std::vector<Type>{f32({2, 4}), f32({4, 4})}));
  // 1 + 0 + 3 = 4 along the last axis; a zero size gives an empty result.
  EXPECT_EQ(
      resultTypes("split", {f32({6, 4})}, {{"axis", -1}, {"sizes", {1, 0, 3}}}),
      (std::vector<Type>{f32({6, 1}), f32({6, 0}), f32({6, 3})}));
  EXPECT_EQ(flops("split", {f32({6, 4})}, {{"axis", 0}, {"sizes", {2, 4}}}), 0);
}

TEST_F(SplitTest, Errors) {
  EXPECT_THAT(error("split", {f32({6, 4})}, {{"axis", 0}, {"sizes", {2, 3}}}),
              HasSubstr("'split' sizes [2,3] sum to 5 but dim 0 of f32[6,4] "
                        "is 6"));
  EXPECT_THAT(error("split", {f32({6, 4})}, {{"axis", 0}, {"sizes", {7, -1}}}),
              HasSubstr("'split' sizes [7,-1] has negative size -1"));
  EXPECT_THAT(
      error("split", {f32({6, 4})}, {{"axis", 0}, {"sizes", emptyList()}}),
      HasSubstr("'split' sizes must not be empty"));
  EXPECT_THAT(error("split", {f32({6, 4})}, {{"axis", 2}, {"sizes", {6}}}),
              HasSubstr("'split' axis 2 is out of range for rank 2"));
  EXPECT_THAT(error("split", {f32({6, 4})}, {{"axis", 0}}),
              HasSubstr("'split' needs attribute 'sizes'"));
  int64_t big = int64_t(1) << 62;
  EXPECT_THAT(
      error("split", {f32({6})}, {{"axis", 0}, {"sizes", {big, big}}}),
      HasSubstr("'split' sizes [4611686018427387904,4611686018427387904] "
                "overflow int64"));
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

class SliceTest : public OpsTest {};

TEST_F(SliceTest, StridedWindows) {
  // Dim 0: indices 1, 4, 7 below 9 -> ceil(8/3) = 3.
  // Dim 1: indices 0, 2, 4, 6 below 8 -> ceil(8/2) = 4.
  EXPECT_EQ(
      resultType("slice", {f32({10, 8})},
                 {{"starts", {1, 0}}, {"ends", {9, 8}}, {"steps", {3, 2}}}),
      f32({3, 4}));
  // No steps: end - start per dim.
  EXPECT_EQ(resultType("slice", {f32({10, 8})},
                       {{"starts", {2, 3}}, {"ends", {4, 8}}}),
            f32({2, 5}));
  // start == end gives an empty dim; a step beyond the span keeps one index.
  EXPECT_EQ(resultType("slice", {f32({10, 8})},
                       {{"starts", {5, 0}},
                        {"ends", {5, 8}},
                        {"steps", {1, std::numeric_limits<int64_t>::max()}}}),
            f32({0, 1}));
  EXPECT_EQ(
      flops("slice", {f32({10, 8})}, {{"starts", {2, 3}}, {"ends", {4, 8}}}),
      0);
}

TEST_F(SliceTest, Errors) {
  EXPECT_THAT(
      error("slice", {f32({10, 8})}, {{"starts", {0}}, {"ends", {4, 8}}}),
      HasSubstr("'slice' starts has 1 entries but operand 0 f32[10,8] "
                "has rank 2"));
  EXPECT_THAT(error("slice", {f32({10, 8})},
                    {{"starts", {0, 0}}, {"ends", {4, 8}}, {"steps", {1}}}),
              HasSubstr("'slice' steps has 1 entries"));
  EXPECT_THAT(
      error("slice", {f32({10, 8})}, {{"starts", {5, 0}}, {"ends", {4, 8}}}),
      HasSubstr("'slice' dim 0: start 5 and end 4 must satisfy "
                "0 <= start <= end <= 10"));
  EXPECT_THAT(
      error("slice", {f32({10, 8})}, {{"starts", {0, 0}}, {"ends", {4, 9}}}),
      HasSubstr("'slice' dim 1: start 0 and end 9 must satisfy "
                "0 <= start <= end <= 8"));
  EXPECT_THAT(
      error("slice", {f32({10, 8})}, {{"starts", {-1, 0}}, {"ends", {4, 8}}}),
      HasSubstr("'slice' dim 0: start -1 and end 4"));
  EXPECT_THAT(error("slice", {f32({10, 8})},
                    {{"starts", {0, 0}}, {"ends", {4, 8}}, {"steps", {1, 0}}}),
              HasSubstr("'slice' dim 1: step 0 must be >= 1"));
}

//===----------------------------------------------------------------------===//
// pad
//===----------------------------------------------------------------------===//

class PadTest : public OpsTest {};

TEST_F(PadTest, AddsLowAndHigh) {
  // [2 + 1 + 2, 3 + 0 + 4].
  EXPECT_EQ(
      resultType("pad", {f32({2, 3})}, {{"low", {1, 0}}, {"high", {2, 4}}}),
      f32({5, 7}));
  EXPECT_EQ(resultType("pad", {typeOf(DType::I32, {2})},
                       {{"low", {0}}, {"high", {0}}, {"value", 1}}),
            typeOf(DType::I32, {2}));
  EXPECT_EQ(flops("pad", {f32({2, 3})}, {{"low", {1, 0}}, {"high", {2, 4}}}),
            0);
}

TEST_F(PadTest, Errors) {
  EXPECT_THAT(error("pad", {f32({2, 3})}, {{"low", {1}}, {"high", {2, 4}}}),
              HasSubstr("'pad' low has 1 entries but operand 0 f32[2,3] has "
                        "rank 2"));
  EXPECT_THAT(error("pad", {f32({2, 3})}, {{"low", {1, 0}}, {"high", {0, -1}}}),
              HasSubstr("'pad' high [0,-1] has negative entry -1"));
  EXPECT_THAT(error("pad", {f32({2, 3})}, {{"low", {1, 0}}}),
              HasSubstr("'pad' needs attribute 'high'"));
  // 2^62 + 2^62 overflows int64.
  int64_t big = int64_t(1) << 62;
  EXPECT_THAT(
      error("pad", {Type(DType::I8, {big})}, {{"low", {big}}, {"high", {0}}}),
      HasSubstr("'pad' dim 0: 4611686018427387904 + 4611686018427387904 "
                "+ 0 overflows int64"));
}

TEST(ShapeOpsRegistryTest, EverySummaryIsWritten) {
  for (const char *kind : {"matmul", "transpose", "reshape", "broadcast",
                           "concat", "split", "slice", "pad"}) {
    const OpDef *def = OpRegistry::global().lookup(kind);
    ASSERT_NE(def, nullptr) << kind;
    EXPECT_FALSE(def->summary.empty()) << kind;
  }
}

} // namespace
} // namespace remat::test

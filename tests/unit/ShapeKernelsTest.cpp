//===- ShapeKernelsTest.cpp - Data-movement kernels -------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace remat::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

/// 0, 1, ..., n-1 as doubles.
std::vector<double> iota(int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

TEST(ShapeKernelsTest, Transpose2D) {
  // [[0,1,2],[3,4,5]]^T = [[0,3],[1,4],[2,5]].
  HostTensor y = runOne("transpose", {f32({2, 3}, iota(6))}, {{"perm", {1, 0}}});
  EXPECT_EQ(y.type(), Type(DType::F32, {3, 2}));
  EXPECT_THAT(toDoubles(y), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(ShapeKernelsTest, Transpose3DWithNegativePerm) {
  // x [2,3,4] with x[i,j,k] = 12i + 4j + k; perm [-1, 0, 1] = [2, 0, 1]
  // gives y [4,2,3] with y[k,i,j] = x[i,j,k].
  HostTensor y =
      runOne("transpose", {i64({2, 3, 4}, iota(24))}, {{"perm", {-1, 0, 1}}});
  ASSERT_EQ(y.type(), Type(DType::I64, {4, 2, 3}));
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(y.at((k * 2 + i) * 3 + j), 12 * i + 4 * j + k);
}

TEST(ShapeKernelsTest, Transpose4DEveryPermutation) {
  // x [2,3,1,4] = 0..23; y[i0..i3] = x at the index with x-dim perm[k] set
  // to i_k, for all 24 permutations.
  std::vector<int64_t> shape = {2, 3, 1, 4};
  HostTensor x = f32(shape, iota(24));
  std::vector<int64_t> perm = {0, 1, 2, 3};
  do {
    HostTensor y = runOne("transpose", {x}, {{"perm", perm}});
    std::vector<int64_t> yShape(y.type().shape().begin(),
                                y.type().shape().end());
    for (int64_t i = 0; i < y.numel(); ++i) {
      std::vector<int64_t> xIndex(4);
      int64_t rest = i;
      for (int k = 3; k >= 0; --k) {
        xIndex[perm[k]] = rest % yShape[k];
        rest /= yShape[k];
      }
      int64_t flat = ((xIndex[0] * 3 + xIndex[1]) * 1 + xIndex[2]) * 4 +
                     xIndex[3];
      ASSERT_EQ(y.at(i), flat) << "perm " << perm[0] << perm[1] << perm[2]
                               << perm[3] << " element " << i;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(ShapeKernelsTest, TransposeCopiesBools) {
  HostTensor x = makeTensor(DType::Bool, {2, 2}, {1, 0, 1, 1});
  EXPECT_THAT(toDoubles(runOne("transpose", {x}, {{"perm", {1, 0}}})),
              ElementsAre(1, 1, 0, 1));
}

TEST(ShapeKernelsTest, Broadcast) {
  // [3] -> [2,3] repeats the row; [2,1] -> [2,3] repeats each entry; a
  // scalar fills everything.
  EXPECT_THAT(toDoubles(runOne("broadcast", {f32({3}, {1, 2, 3})},
                               {{"shape", {2, 3}}})),
              ElementsAre(1, 2, 3, 1, 2, 3));
  EXPECT_THAT(toDoubles(runOne("broadcast", {i32({2, 1}, {7, 8})},
                               {{"shape", {2, 3}}})),
              ElementsAre(7, 7, 7, 8, 8, 8));
  EXPECT_THAT(
      toDoubles(runOne("broadcast", {f64({}, {5})}, {{"shape", {2, 2}}})),
      ElementsAre(5, 5, 5, 5));
  EXPECT_THAT(toDoubles(runOne("broadcast", {f64({1}, {5})}, {{"shape", {0}}})),
              IsEmpty());
}

TEST(ShapeKernelsTest, ConcatAlongEachAxis) {
  HostTensor a = f32({2, 2}, {1, 2, 3, 4});
  HostTensor b = f32({2, 1}, {5, 6});
  HostTensor c = f32({2, 3}, {7, 8, 9, 10, 11, 12});
  // Axis -1 (= 1): rows [1,2 | 5 | 7,8,9] and [3,4 | 6 | 10,11,12].
  HostTensor y = runOne("concat", {a, b, c}, {{"axis", -1}});
  EXPECT_EQ(y.type(), Type(DType::F32, {2, 6}));
  EXPECT_THAT(toDoubles(y),
              ElementsAre(1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12));
  // Axis 0: a's rows then a zero-row operand (nothing) then b^T's row.
  HostTensor none = f32({0, 2}, {});
  HostTensor d = f32({1, 2}, {5, 6});
  EXPECT_THAT(toDoubles(runOne("concat", {a, none, d}, {{"axis", 0}})),
              ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(ShapeKernelsTest, SplitInvertsConcat) {
  // x [2,5] split along axis 1 into sizes [2, 0, 3].
  absl::StatusOr<std::vector<HostTensor>> parts = runKernel(
      "split", {i32({2, 5}, iota(10))}, {{"axis", 1}, {"sizes", {2, 0, 3}}});
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_THAT(toDoubles((*parts)[0]), ElementsAre(0, 1, 5, 6));
  EXPECT_THAT(toDoubles((*parts)[1]), IsEmpty());
  EXPECT_THAT(toDoubles((*parts)[2]), ElementsAre(2, 3, 4, 7, 8, 9));
  HostTensor back = runOne("concat", *parts, {{"axis", 1}});
  EXPECT_EQ(toDoubles(back), iota(10));
}

TEST(ShapeKernelsTest, StridedSlice) {
  // x [3,5] = 0..14; rows 0..3 step 2 -> rows 0, 2; cols 1..5 step 2 -> 1, 3.
  // y = [[1, 3], [11, 13]].
  HostTensor y = runOne("slice", {f64({3, 5}, iota(15))},
                        {{"starts", {0, 1}}, {"ends", {3, 5}}, {"steps", {2, 2}}});
  EXPECT_EQ(y.type(), Type(DType::F64, {2, 2}));
  EXPECT_THAT(toDoubles(y), ElementsAre(1, 3, 11, 13));
  // Without steps: the block [1:2, 2:4] = [[7, 8]].
  EXPECT_THAT(toDoubles(runOne("slice", {f64({3, 5}, iota(15))},
                               {{"starts", {1, 2}}, {"ends", {2, 4}}})),
              ElementsAre(7, 8));
  // An empty window.
  EXPECT_THAT(toDoubles(runOne("slice", {f64({3, 5}, iota(15))},
                               {{"starts", {1, 2}}, {"ends", {1, 4}}})),
              IsEmpty());
}

TEST(ShapeKernelsTest, SliceGradScattersIntoZeros) {
  // dy [2,2] = [[1,2],[3,4]] into zeros [3,5] at rows 0, 2 and cols 1, 3.
  HostTensor dx =
      runOne("slice_grad", {f32({2, 2}, {1, 2, 3, 4})},
             {{"shape", {3, 5}}, {"starts", {0, 1}}, {"steps", {2, 2}}});
  EXPECT_EQ(dx.type(), Type(DType::F32, {3, 5}));
  EXPECT_THAT(toDoubles(dx), ElementsAre(0, 1, 0, 2, 0, //
                                         0, 0, 0, 0, 0, //
                                         0, 3, 0, 4, 0));
}

TEST(ShapeKernelsTest, SliceGradMatchesFiniteDifferences) {
  HostTensor x = randomTensor(DType::F64, {4, 6}, 11);
  AttrList slice = {{"starts", {1, 0}}, {"ends", {4, 5}}, {"steps", {2, 3}}};
  HostTensor y = runOne("slice", {x}, slice);
  HostTensor dy = randomTensor(DType::F64, {2, 2}, 12);
  HostTensor dx = runOne(
      "slice_grad", {dy},
      {{"shape", {4, 6}}, {"starts", {1, 0}}, {"steps", {2, 3}}});
  expectMatchesFiniteDifferences(dx, "slice", {x}, 0, dy, slice, "slice_grad");
}

TEST(ShapeKernelsTest, PadFillsWithValue) {
  // [[1,2]] padded by 1 row above, 1 col left and 2 cols right, with -1.
  HostTensor y = runOne("pad", {i32({1, 2}, {1, 2})},
                        {{"low", {1, 1}}, {"high", {0, 2}}, {"value", -1.0}});
  EXPECT_EQ(y.type(), Type(DType::I32, {2, 5}));
  EXPECT_THAT(toDoubles(y), ElementsAre(-1, -1, -1, -1, -1, //
                                        -1, 1, 2, -1, -1));
  // Padding an empty tensor gives just the fill (0 by default).
  EXPECT_THAT(toDoubles(runOne("pad", {f32({0}, {})},
                               {{"low", {1}}, {"high", {1}}})),
              ElementsAre(0, 0));
}

} // namespace
} // namespace remat::test

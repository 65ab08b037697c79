//===- ReductionKernelsTest.cpp - Reduction kernels -------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace remat::test {
namespace {

using ::testing::ElementsAre;

// x = [[1, 2, 3], [4, 5, 6]] throughout.
HostTensor x23(DType dtype = DType::F32) {
  return makeTensor(dtype, {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(ReductionKernelsTest, SumOverAxes) {
  // Columns: 1+4, 2+5, 3+6; rows: 1+2+3, 4+5+6; all: 21.
  EXPECT_THAT(toDoubles(runOne("reduce_sum", {x23()}, {{"axes", {0}}})),
              ElementsAre(5, 7, 9));
  EXPECT_THAT(toDoubles(runOne("reduce_sum", {x23()}, {{"axes", {-1}}})),
              ElementsAre(6, 15));
  HostTensor all = runOne("reduce_sum", {x23()});
  EXPECT_EQ(all.type(), Type::scalar(DType::F32));
  EXPECT_EQ(all.at(0), 21);
  HostTensor kept =
      runOne("reduce_sum", {x23()}, {{"axes", {1}}, {"keepdims", true}});
  EXPECT_EQ(kept.type(), Type(DType::F32, {2, 1}));
  EXPECT_THAT(toDoubles(kept), ElementsAre(6, 15));
}

TEST(ReductionKernelsTest, SumOverOuterAndInnerAxes) {
  // x [2,3,2] = 0..11, x[i,j,k] = 6i + 2j + k; summing axes {0, 2} leaves j:
  // sum over i,k of 6i + 2j + k = 6*(0+1)*2 + 2j*4 + (0+1)*2 = 14 + 8j.
  std::vector<double> values(12);
  for (int i = 0; i < 12; ++i)
    values[i] = i;
  EXPECT_THAT(toDoubles(runOne("reduce_sum", {f64({2, 3, 2}, values)},
                               {{"axes", {0, 2}}})),
              ElementsAre(14, 22, 30));
}

TEST(ReductionKernelsTest, F32SumsAccumulateInDouble) {
  // In f32, (1e8 + 1) rounds back to 1e8, so a float accumulator gives 0;
  // accumulating in double gives exactly 1.
  HostTensor x = f32({3}, {1e8, 1, -1e8});
  EXPECT_EQ(runOne("reduce_sum", {x}).at(0), 1);
}

TEST(ReductionKernelsTest, IntegerSumsWrap) {
  // i8: 100 + 100 = 200 = -56 mod 256.
  HostTensor x = makeTensor(DType::I8, {2}, {100, 100});
  EXPECT_EQ(runOne("reduce_sum", {x}).at(0), -56);
  EXPECT_THAT(toDoubles(runOne("reduce_sum", {x23(DType::I64)},
                               {{"axes", {1}}})),
              ElementsAre(6, 15));
}

TEST(ReductionKernelsTest, Mean) {
  // Rows: 6/3 = 2, 15/3 = 5; all: 21/6 = 3.5.
  EXPECT_THAT(toDoubles(runOne("reduce_mean", {x23()}, {{"axes", {1}}})),
              ElementsAre(2, 5));
  EXPECT_EQ(runOne("reduce_mean", {x23(DType::F64)}).at(0), 3.5);
}

TEST(ReductionKernelsTest, Max) {
  HostTensor x = f32({2, 3}, {1, 9, 3, -4, -5, -2});
  EXPECT_THAT(toDoubles(runOne("reduce_max", {x}, {{"axes", {1}}})),
              ElementsAre(9, -2));
  EXPECT_THAT(toDoubles(runOne("reduce_max", {x}, {{"axes", {0}}})),
              ElementsAre(1, 9, 3));
  EXPECT_EQ(runOne("reduce_max", {i32({3}, {-7, -3, -5})}).at(0), -3);
  // NaN wins.
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(runOne("reduce_max", {f64({3}, {1, nan, 2})}).at(0)));
}

TEST(ReductionKernelsTest, EmptyGroups) {
  // Reducing a zero-size dim: sums are 0, means 0/0 = NaN, maxima -inf.
  HostTensor x = f32({2, 0}, {});
  EXPECT_THAT(toDoubles(runOne("reduce_sum", {x}, {{"axes", {1}}})),
              ElementsAre(0, 0));
  EXPECT_TRUE(
      std::isnan(runOne("reduce_mean", {x}, {{"axes", {1}}}).at(0)));
  EXPECT_EQ(runOne("reduce_max", {x}, {{"axes", {1}}}).at(1),
            -std::numeric_limits<double>::infinity());
  // No groups at all.
  EXPECT_EQ(runOne("reduce_sum", {x}, {{"axes", {0}}}).numel(), 0);
}

TEST(ReductionKernelsTest, MaxGradSplitsTies) {
  // Row 0 = [1, 3, 3]: max 3 twice, dy 1 splits as 0, 1/2, 1/2. Row 1 =
  // [5, 2, 4]: max 5 once, dy 6 goes to it.
  HostTensor x = f32({2, 3}, {1, 3, 3, 5, 2, 4});
  AttrList attrs = {{"axes", {1}}};
  HostTensor y = runOne("reduce_max", {x}, attrs);
  HostTensor dy = f32({2}, {1, 6});
  EXPECT_THAT(toDoubles(runOne("reduce_max_grad", {x, y, dy}, attrs)),
              ElementsAre(0, 0.5, 0.5, 6, 0, 0));
}

TEST(ReductionKernelsTest, MaxGradMatchesFiniteDifferences) {
  // Distinct random values, so every max is unique and differentiable.
  HostTensor x = randomTensor(DType::F64, {3, 4, 2}, 7);
  for (AttrList attrs : {AttrList{{"axes", {1}}},
                         AttrList{{"axes", {0, 2}}, {"keepdims", true}},
                         AttrList{}}) {
    HostTensor y = runOne("reduce_max", {x}, attrs);
    HostTensor dy = randomTensor(DType::F64, y.type().shape().vec(), 8);
    expectMatchesFiniteDifferences(runOne("reduce_max_grad", {x, y, dy}, attrs),
                                   "reduce_max", {x}, 0, dy, attrs,
                                   "reduce_max_grad");
  }
}

} // namespace
} // namespace remat::test

//===- SoftmaxKernelsTest.cpp - Softmax-family kernels ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace remat::test {
namespace {

using ::testing::ElementsAre;

const double kLn2 = std::log(2.0);
const double kLn3 = std::log(3.0);

TEST(SoftmaxKernelsTest, SoftmaxOfLogs) {
  // softmax([0, ln 2, ln 3]) = [1, 2, 3] / 6.
  HostTensor y = runOne("softmax", {f64({3}, {0, kLn2, kLn3})});
  expectAllClose(y, {1.0 / 6, 2.0 / 6, 3.0 / 6}, 1e-15, "softmax");
}

TEST(SoftmaxKernelsTest, SoftmaxAlongAxis0) {
  // Columns of [[0, ln 3], [ln 3, 0]]: [1, 3] / 4 and [3, 1] / 4.
  HostTensor y = runOne("softmax", {f64({2, 2}, {0, kLn3, kLn3, 0})},
                        {{"axis", 0}});
  expectAllClose(y, {0.25, 0.75, 0.75, 0.25}, 1e-15, "softmax axis 0");
}

TEST(SoftmaxKernelsTest, SoftmaxIsStableForLargeLogits) {
  // exp(1000) overflows; subtracting the max first gives [1/2, 1/2].
  HostTensor y = runOne("softmax", {f32({2}, {1000, 1000})});
  EXPECT_THAT(toDoubles(y), ElementsAre(0.5, 0.5));
  HostTensor logY = runOne("log_softmax", {f32({2}, {1000, 1000})});
  expectAllClose(logY, {-kLn2, -kLn2}, 1e-7, "log_softmax");
}

TEST(SoftmaxKernelsTest, LogSoftmax) {
  // log([1, 2, 3] / 6).
  HostTensor y = runOne("log_softmax", {f64({3}, {0, kLn2, kLn3})});
  expectAllClose(y, {std::log(1.0 / 6), std::log(2.0 / 6), std::log(3.0 / 6)},
                 1e-15, "log_softmax");
}

TEST(SoftmaxKernelsTest, F32MatchesF64) {
  HostTensor x = randomTensor(DType::F64, {3, 4, 5}, 21, -4, 4);
  expectF32MatchesF64("softmax", {x}, {{"axis", 1}}, 1e-6);
  expectF32MatchesF64("log_softmax", {x}, {}, 1e-6);
}

TEST(SoftmaxKernelsTest, SoftmaxGradMatchesFiniteDifferences) {
  HostTensor x = randomTensor(DType::F64, {2, 3, 4}, 22, -2, 2);
  HostTensor dy = randomTensor(DType::F64, {2, 3, 4}, 23);
  for (int64_t axis : {-1, 1, 0}) {
    AttrList attrs = {{"axis", axis}};
    HostTensor y = runOne("softmax", {x}, attrs);
    expectMatchesFiniteDifferences(runOne("softmax_grad", {y, dy}, attrs),
                                   "softmax", {x}, 0, dy, attrs,
                                   "softmax_grad");
    HostTensor logY = runOne("log_softmax", {x}, attrs);
    expectMatchesFiniteDifferences(runOne("log_softmax_grad", {logY, dy}, attrs),
                                   "log_softmax", {x}, 0, dy, attrs,
                                   "log_softmax_grad");
  }
}

TEST(SoftmaxKernelsTest, SoftmaxGradByHand) {
  // y = [1/2, 1/2], dy = [1, 0]: sum(dy * y) = 1/2, so
  // dx = y * (dy - 1/2) = [1/4, -1/4].
  HostTensor dx =
      runOne("softmax_grad", {f64({2}, {0.5, 0.5}), f64({2}, {1, 0})});
  EXPECT_THAT(toDoubles(dx), ElementsAre(0.25, -0.25));
  // log_softmax: y = [ln 1/2, ln 1/2], dy = [1, 0]: sum(dy) = 1, so
  // dx = dy - exp(y) * 1 = [1/2, -1/2].
  HostTensor ldx =
      runOne("log_softmax_grad", {f64({2}, {-kLn2, -kLn2}), f64({2}, {1, 0})});
  expectAllClose(ldx, {0.5, -0.5}, 1e-15, "log_softmax_grad");
}

TEST(SoftmaxKernelsTest, CausalMaskDefaultValue) {
  // [2, 3] scores: entries with column > row are masked with -1e9.
  HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(toDoubles(runOne("causal_mask", {x})),
              ElementsAre(1, double(-1e9f), double(-1e9f), 4, 5,
                          double(-1e9f)));
}

TEST(SoftmaxKernelsTest, CausalMaskWithValueAndBatch) {
  // Two batches of [3, 2] with value 0 (the gradient's form): masked are
  // (0, 1) only, since rows 1 and 2 see both columns.
  HostTensor x = f64({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_THAT(toDoubles(runOne("causal_mask", {x}, {{"value", 0.0}})),
              ElementsAre(1, 0, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12));
}

TEST(SoftmaxKernelsTest, ZeroElementTensors) {
  EXPECT_EQ(runOne("softmax", {f32({0, 4}, {})}).numel(), 0);
  EXPECT_EQ(runOne("softmax", {f32({3, 0}, {})}).numel(), 0);
  EXPECT_EQ(runOne("causal_mask", {f32({0, 2}, {})}).numel(), 0);
}

} // namespace
} // namespace remat::test

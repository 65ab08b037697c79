//===- LossKernelsTest.cpp - Loss kernels -----------------------------------===//
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

const double kLn3 = std::log(3.0);

TEST(LossKernelsTest, SoftmaxCrossEntropyByHand) {
  // Row 0: logits [0, 0], label 0: softmax [1/2, 1/2], loss ln 2.
  // Row 1: logits [0, ln 3], label 1: softmax [1/4, 3/4], loss ln(4/3).
  // Mean: (ln 2 + ln(4/3)) / 2 = ln(8/3) / 2.
  HostTensor logits = f64({2, 2}, {0, 0, 0, kLn3});
  HostTensor loss =
      runOne("softmax_cross_entropy", {logits, i32({2}, {0, 1})});
  EXPECT_EQ(loss.type(), Type::scalar(DType::F64));
  EXPECT_NEAR(loss.at(0), std::log(8.0 / 3) / 2, 1e-15);
}

TEST(LossKernelsTest, SoftmaxCrossEntropyIsStable) {
  // logits [1000, 0], label 1: loss = logsumexp - 0 = 1000 (to f32).
  HostTensor loss = runOne("softmax_cross_entropy",
                           {f32({1, 2}, {1000, 0}), i64({1}, {1})});
  EXPECT_EQ(loss.at(0), 1000);
}

TEST(LossKernelsTest, SoftmaxCrossEntropyRejectsBadLabels) {
  HostTensor logits = f32({2, 2}, {0, 0, 0, 0});
  EXPECT_EQ(kernelError("softmax_cross_entropy", {logits, i32({2}, {0, 2})}),
            "softmax_cross_entropy label 2 is out of range [0, 2)");
  EXPECT_EQ(kernelError("softmax_cross_entropy_grad",
                        {logits, i32({2}, {-1, 0}), f32({}, {1})}),
            "softmax_cross_entropy_grad label -1 is out of range [0, 2)");
}

TEST(LossKernelsTest, SoftmaxCrossEntropyGradByHand) {
  // Same rows as above, dy = 2 over 2 positions scales by 1:
  // row 0: [1/2 - 1, 1/2]; row 1: [1/4, 3/4 - 1].
  HostTensor logits = f64({2, 2}, {0, 0, 0, kLn3});
  HostTensor dx = runOne("softmax_cross_entropy_grad",
                         {logits, i32({2}, {0, 1}), f64({}, {2})});
  expectAllClose(dx, {-0.5, 0.5, 0.25, -0.25}, 1e-15,
                 "softmax_cross_entropy_grad");
}

TEST(LossKernelsTest, SoftmaxCrossEntropyGradMatchesFiniteDifferences) {
  HostTensor logits = randomTensor(DType::F64, {2, 3, 5}, 41, -3, 3);
  HostTensor labels = i32({2, 3}, {4, 0, 2, 2, 1, 4});
  HostTensor dy = f64({}, {0.7});
  HostTensor dx =
      runOne("softmax_cross_entropy_grad", {logits, labels, dy});
  expectMatchesFiniteDifferences(dx, "softmax_cross_entropy", {logits, labels},
                                 0, dy, {}, "softmax_cross_entropy_grad");
}

TEST(LossKernelsTest, MseLoss) {
  // ((1-1)^2 + (2-0)^2 + (3-0)^2) / 3 = 13 / 3.
  HostTensor loss =
      runOne("mse_loss", {f64({3}, {1, 2, 3}), f64({3}, {1, 0, 0})});
  EXPECT_EQ(loss.type(), Type::scalar(DType::F64));
  EXPECT_DOUBLE_EQ(loss.at(0), 13.0 / 3);
  HostTensor single =
      runOne("mse_loss", {f32({2, 1}, {0.5, 1}), f32({2, 1}, {0, 0})});
  // (0.25 + 1) / 2 = 0.625, exact in f32.
  EXPECT_EQ(single.at(0), 0.625);
}

TEST(LossKernelsTest, MeansOverNoPositionsAreNaN) {
  EXPECT_TRUE(std::isnan(
      runOne("mse_loss", {f32({0}, {}), f32({0}, {})}).at(0)));
  EXPECT_TRUE(std::isnan(runOne("softmax_cross_entropy",
                                {f32({0, 3}, {}), i32({0}, {})})
                             .at(0)));
}

} // namespace
} // namespace remat::test

//===- NormalizationKernelsTest.cpp - Layer and batch norm kernels --------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace remat;
using namespace remat::test;

namespace {

TEST(NormalizationKernelsTest, LayerNormHandComputed) {
  // Row [1, 2, 3, 4]: mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25)
  // / 4 = 1.25, so xhat = [-1.5, -0.5, 0.5, 1.5] / sqrt(1.25) (eps = 0).
  // Row [2, 2, 2, 6]: mean 3, variance (1 + 1 + 1 + 9) / 4 = 3, xhat =
  // [-1, -1, -1, 3] / sqrt(3). y = xhat * gamma + beta with gamma = [1, 2, 3,
  // 4], beta = [0, 0, 1, 1].
  HostTensor x = f64({2, 4}, {1, 2, 3, 4, 2, 2, 2, 6});
  HostTensor gamma = f64({4}, {1, 2, 3, 4});
  HostTensor beta = f64({4}, {0, 0, 1, 1});
  double s1 = std::sqrt(1.25), s2 = std::sqrt(3.0);
  HostTensor y = runOne("layer_norm", {x, gamma, beta}, {{"eps", 0.0}});
  expectAllClose(y,
                 {-1.5 / s1, -1 / s1, 1.5 / s1 + 1, 6 / s1 + 1, //
                  -1 / s2, -2 / s2, -3 / s2 + 1, 12 / s2 + 1},
                 1e-15, "layer_norm");
}

TEST(NormalizationKernelsTest, BatchNormHandComputed) {
  // x [N=2, C=2] = [[1, 2], [3, 6]]: channel 0 holds {1, 3} (mean 2, biased
  // variance 1), channel 1 holds {2, 6} (mean 4, variance 4); both normalise
  // to [-1, 1]. gamma = [2, 3], beta = [0.5, -1]:
  //   channel 0: [-2 + 0.5, 2 + 0.5] = [-1.5, 2.5]
  //   channel 1: [-3 - 1, 3 - 1]     = [-4, 2]
  HostTensor x = f32({2, 2}, {1, 2, 3, 6});
  HostTensor gamma = f32({2}, {2, 3});
  HostTensor beta = f32({2}, {0.5, -1});
  absl::StatusOr<std::vector<HostTensor>> results =
      runKernel("batch_norm", {x, gamma, beta}, {{"eps", 0.0}});
  ASSERT_TRUE(results.ok()) << results.status();
  expectAllClose((*results)[0], {-1.5, -4, 2.5, 2}, 0, "y");
  expectAllClose((*results)[1], {2, 4}, 0, "mean");
  expectAllClose((*results)[2], {1, 4}, 0, "var");
}

TEST(NormalizationKernelsTest, BatchNormStatisticsSpanBatchAndSpace) {
  // x [N=2, C=1, 2]: the one channel holds {0, 2, 4, 10} across both images
  // and both positions: mean 4, variance (16 + 4 + 0 + 36) / 4 = 14.
  HostTensor x = f64({2, 1, 2}, {0, 2, 4, 10});
  HostTensor one = f64({1}, {1});
  HostTensor zero = f64({1}, {0});
  absl::StatusOr<std::vector<HostTensor>> results =
      runKernel("batch_norm", {x, one, zero}, {{"eps", 0.0}});
  ASSERT_TRUE(results.ok()) << results.status();
  expectAllClose((*results)[1], {4}, 0, "mean");
  expectAllClose((*results)[2], {14}, 0, "var");
  double s = std::sqrt(14.0);
  expectAllClose((*results)[0], {-4 / s, -2 / s, 0, 6 / s}, 1e-15, "y");
}

TEST(NormalizationKernelsTest, BatchNormInferenceUsesTheGivenStatistics) {
  // x [N=2, C=2, 1] = [[1, 2], [3, 6]], statistics not x's own: channel 0
  // mean 1, var 4 (s = 2), gamma 2, beta 0.5: (x - 1) / 2 * 2 + 0.5 over
  // {1, 3} is [0.5, 2.5]; channel 1 mean 0, var 1 (s = 1), gamma -1, beta 0:
  // over {2, 6} is [-2, -6].
  HostTensor x = f32({2, 2, 1}, {1, 2, 3, 6});
  HostTensor gamma = f32({2}, {2, -1});
  HostTensor beta = f32({2}, {0.5, 0});
  HostTensor mean = f32({2}, {1, 0});
  HostTensor var = f32({2}, {4, 1});
  HostTensor y = runOne("batch_norm_inference", {x, gamma, beta, mean, var},
                        {{"eps", 0.0}});
  expectAllClose(y, {0.5, -2, 2.5, -6}, 0, "y");
}

/// batch_norm by definition: channel c's statistics over N and the spatial
/// positions, then (x - mean) / sqrt(var + eps) * gamma + beta.
std::vector<double> directBatchNorm(const HostTensor &x,
                                    const HostTensor &gamma,
                                    const HostTensor &beta, double eps) {
  llvm::ArrayRef<int64_t> shape = x.type().shape();
  int64_t n = shape[0], channels = shape[1];
  int64_t spatial = x.numel() / (n * channels);
  std::vector<double> y(size_t(x.numel()));
  for (int64_t c = 0; c < channels; ++c) {
    auto at = [&](int64_t b, int64_t s) {
      return (b * channels + c) * spatial + s;
    };
    double sum = 0, squares = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t s = 0; s < spatial; ++s)
        sum += x.at(at(b, s));
    double mean = sum / double(n * spatial);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t s = 0; s < spatial; ++s)
        squares += (x.at(at(b, s)) - mean) * (x.at(at(b, s)) - mean);
    double invStd = 1 / std::sqrt(squares / double(n * spatial) + eps);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t s = 0; s < spatial; ++s)
        y[size_t(at(b, s))] =
            (x.at(at(b, s)) - mean) * invStd * gamma.at(c) + beta.at(c);
  }
  return y;
}

/// layer_norm by definition over the last dim.
std::vector<double> directLayerNorm(const HostTensor &x,
                                    const HostTensor &gamma,
                                    const HostTensor &beta, double eps) {
  int64_t features = gamma.numel();
  std::vector<double> y;
  for (int64_t row = 0; row < x.numel() / features; ++row) {
    double sum = 0, squares = 0;
    for (int64_t d = 0; d < features; ++d)
      sum += x.at(row * features + d);
    double mean = sum / double(features);
    for (int64_t d = 0; d < features; ++d)
      squares += std::pow(x.at(row * features + d) - mean, 2);
    double invStd = 1 / std::sqrt(squares / double(features) + eps);
    for (int64_t d = 0; d < features; ++d)
      y.push_back((x.at(row * features + d) - mean) * invStd * gamma.at(d) +
                  beta.at(d));
  }
  return y;
}

TEST(NormalizationKernelsTest, ForwardMatchesDirectLoop) {
  HostTensor x = randomTensor(DType::F64, {3, 4, 2, 5}, 1, -2, 3);
  HostTensor gamma4 = randomTensor(DType::F64, {4}, 2);
  HostTensor beta4 = randomTensor(DType::F64, {4}, 3);
  HostTensor gamma5 = randomTensor(DType::F64, {5}, 4);
  HostTensor beta5 = randomTensor(DType::F64, {5}, 5);
  expectAllClose(runOne("batch_norm", {x, gamma4, beta4}),
                 directBatchNorm(x, gamma4, beta4, 1e-5), 1e-12, "batch_norm");
  expectAllClose(runOne("layer_norm", {x, gamma5, beta5}, {{"eps", 1e-3}}),
                 directLayerNorm(x, gamma5, beta5, 1e-3), 1e-12, "layer_norm");
}

/// Checks the three results of `gradKind` (dx, dgamma, dbeta) against central
/// differences of `forwardKind`'s y with respect to x, gamma and beta.
void checkNormGradients(llvm::StringRef forwardKind, llvm::StringRef gradKind,
                        std::vector<int64_t> xShape, int64_t features) {
  SCOPED_TRACE(gradKind.str());
  HostTensor x = randomTensor(DType::F64, xShape, 11, -2, 2);
  HostTensor gamma = randomTensor(DType::F64, {features}, 12, 0.5, 1.5);
  HostTensor beta = randomTensor(DType::F64, {features}, 13);
  HostTensor dy = randomTensor(DType::F64, xShape, 14);
  AttrList attrs = {{"eps", 1e-3}};
  absl::StatusOr<std::vector<HostTensor>> grads =
      runKernel(gradKind, {x, gamma, dy}, attrs);
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 3u);
  const char *names[] = {"dx", "dgamma", "dbeta"};
  for (unsigned i = 0; i < 3; ++i)
    expectMatchesFiniteDifferences((*grads)[i], forwardKind, {x, gamma, beta},
                                   i, dy, attrs, names[i]);
}

TEST(NormalizationKernelsTest, LayerNormGradMatchesFiniteDifferences) {
  checkNormGradients("layer_norm", "layer_norm_grad", {3, 2, 5}, 5);
  checkNormGradients("layer_norm", "layer_norm_grad", {1, 7}, 7);
}

TEST(NormalizationKernelsTest, BatchNormGradMatchesFiniteDifferences) {
  checkNormGradients("batch_norm", "batch_norm_grad", {3, 4, 2, 3}, 4);
  checkNormGradients("batch_norm", "batch_norm_grad", {5, 3}, 3);
  checkNormGradients("batch_norm", "batch_norm_grad", {2, 2, 2, 1, 3}, 2);
}

TEST(NormalizationKernelsTest, GradientsOfConstantGroups) {
  // A constant group has xhat = 0 wherever eps > 0: dgamma = 0, dbeta =
  // sum dy, and dx = gamma / sqrt(eps) * (dy - mean dy). Here one layer_norm
  // row [5, 5] with gamma [2, 2], eps = 0.25 and dy = [1, 3]:
  //   dx = 2 / 0.5 * ([1, 3] - 2) = [-4, 4], dgamma = [0, 0], dbeta = [1, 3].
  HostTensor x = f64({1, 2}, {5, 5});
  HostTensor gamma = f64({2}, {2, 2});
  HostTensor dy = f64({1, 2}, {1, 3});
  absl::StatusOr<std::vector<HostTensor>> grads =
      runKernel("layer_norm_grad", {x, gamma, dy}, {{"eps", 0.25}});
  ASSERT_TRUE(grads.ok()) << grads.status();
  expectAllClose((*grads)[0], {-4, 4}, 0, "dx");
  expectAllClose((*grads)[1], {0, 0}, 0, "dgamma");
  expectAllClose((*grads)[2], {1, 3}, 0, "dbeta");
}

TEST(NormalizationKernelsTest, F32MatchesF64) {
  HostTensor x = randomTensor(DType::F64, {4, 3, 3, 3}, 21, -3, 3);
  HostTensor gamma3 = randomTensor(DType::F64, {3}, 22);
  HostTensor beta3 = randomTensor(DType::F64, {3}, 23);
  HostTensor dy = randomTensor(DType::F64, {4, 3, 3, 3}, 24);
  expectF32MatchesF64("batch_norm", {x, gamma3, beta3}, {}, 1e-5);
  expectF32MatchesF64("layer_norm", {x, gamma3, beta3}, {}, 1e-5);
  expectF32MatchesF64("batch_norm_grad", {x, gamma3, dy}, {}, 1e-5);
  expectF32MatchesF64("layer_norm_grad", {x, gamma3, dy}, {}, 1e-5);
}

TEST(NormalizationKernelsTest, HalfPrecisionIsAnError) {
  HostTensor x(Type(DType::F16, {2, 3}));
  HostTensor gamma(Type(DType::F16, {3}));
  EXPECT_EQ(kernelError("layer_norm", {x, gamma, gamma}),
            "'layer_norm' has no f16 kernel");
}

TEST(NormalizationKernelsTest, EmptyBatches) {
  // No elements per channel: the statistics are 0 / 0 and the parameter
  // gradients are empty sums.
  HostTensor x(Type(DType::F64, {0, 3}));
  HostTensor gamma = f64({3}, {1, 2, 3});
  absl::StatusOr<std::vector<HostTensor>> forward =
      runKernel("batch_norm", {x, gamma, gamma});
  ASSERT_TRUE(forward.ok()) << forward.status();
  for (int64_t c = 0; c < 3; ++c)
    EXPECT_TRUE(std::isnan((*forward)[1].at(c)) &&
                std::isnan((*forward)[2].at(c)));
  for (llvm::StringRef kind : {"batch_norm_grad", "layer_norm_grad"}) {
    absl::StatusOr<std::vector<HostTensor>> grads =
        runKernel(kind, {x, gamma, x});
    ASSERT_TRUE(grads.ok()) << grads.status();
    expectAllClose((*grads)[1], {0, 0, 0}, 0, kind.str() + " dgamma");
    expectAllClose((*grads)[2], {0, 0, 0}, 0, kind.str() + " dbeta");
  }
}

} // namespace

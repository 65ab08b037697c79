//===- PoolingKernelsTest.cpp - Pooling, upsampling and their backward ----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace remat;
using namespace remat::test;

namespace {

std::vector<double> iota(int64_t count, double first = 0) {
  std::vector<double> values(size_t(count), 0.0);
  std::iota(values.begin(), values.end(), first);
  return values;
}

TEST(PoolingKernelsTest, MaxPoolHandComputed) {
  // x = 0..15 as a 4x4 image; 2x2 windows with stride 2 keep each block's
  // bottom-right element: 5, 7, 13, 15.
  HostTensor x = f32({1, 1, 4, 4}, iota(16));
  expectAllClose(runOne("max_pool2d", {x}, {{"kernel", {2, 2}}}),
                 {5, 7, 13, 15}, 0, "max_pool2d");
}

TEST(PoolingKernelsTest, MaxPoolPaddingNeverWins) {
  // x = -1..-16; 3x3 windows, stride 2, padding 1. Window (0, 0) covers rows
  // and cols {-1, 0, 1}: its inputs are -1, -2, -5, -6, so the max is -1, not
  // the padding's 0. Likewise (0, 1) covers cols 1..3 -> x01 = -2,
  // (1, 0) rows 1..3 -> x10 = -5, (1, 1) -> x11 = -6.
  HostTensor x = f64({1, 1, 4, 4}, iota(16, 1));
  for (int64_t i = 0; i < 16; ++i)
    setElementFromDouble(x.view(), i, -x.at(i));
  AttrList attrs = {
      {"kernel", {3, 3}}, {"strides", {2, 2}}, {"padding", {1, 1}}};
  expectAllClose(runOne("max_pool2d", {x}, attrs), {-1, -2, -5, -6}, 0,
                 "max_pool2d");
}

TEST(PoolingKernelsTest, MaxPoolOfIntegers) {
  // Two planes of 2x2, one window each: max(3, -7, 12, 0) = 12 and
  // max(-5, -2, -9, -3) = -2.
  HostTensor x = i32({1, 2, 2, 2}, {3, -7, 12, 0, -5, -2, -9, -3});
  HostTensor y = runOne("max_pool2d", {x}, {{"kernel", {2, 2}}});
  EXPECT_EQ(y.dtype(), DType::I32);
  expectAllClose(y, {12, -2}, 0, "max_pool2d");
}

TEST(PoolingKernelsTest, MaxPoolOfBoolsIsAnyTrue) {
  HostTensor x =
      makeTensor(DType::Bool, {1, 1, 2, 4}, {0, 1, 0, 0, 0, 0, 0, 0});
  expectAllClose(runOne("max_pool2d", {x}, {{"kernel", {2, 2}}}), {1, 0}, 0,
                 "max_pool2d");
}

TEST(PoolingKernelsTest, MaxPoolPropagatesNaN) {
  // The first NaN of a window wins the max and takes the window's gradient.
  double nan = std::nan("");
  HostTensor x = f64({1, 1, 1, 3}, {1, nan, 5});
  AttrList attrs = {{"kernel", {1, 3}}};
  EXPECT_TRUE(std::isnan(runOne("max_pool2d", {x}, attrs).at(0)));
  HostTensor dy = f64({1, 1, 1, 1}, {7});
  expectAllClose(runOne("max_pool2d_grad", {x, dy}, attrs), {0, 7, 0}, 0,
                 "max_pool2d_grad");
}

TEST(PoolingKernelsTest, AvgPoolExcludesPaddingFromDivisor) {
  // x = 0..15 (4x4); 3x3 windows, stride 2, padding 1:
  //   (0,0): {0, 1, 4, 5}                    = 10 / 4 = 2.5
  //   (0,1): {1, 2, 3, 5, 6, 7}              = 24 / 6 = 4
  //   (1,0): {4, 5, 8, 9, 12, 13}            = 51 / 6 = 8.5
  //   (1,1): {5, 6, 7, 9, 10, 11, 13, 14, 15} = 90 / 9 = 10
  HostTensor x = f32({1, 1, 4, 4}, iota(16));
  AttrList attrs = {
      {"kernel", {3, 3}}, {"strides", {2, 2}}, {"padding", {1, 1}}};
  expectAllClose(runOne("avg_pool2d", {x}, attrs), {2.5, 4, 8.5, 10}, 0,
                 "avg_pool2d");
}

TEST(PoolingKernelsTest, MaxPoolGradGoesToFirstMaximum) {
  // Ties: one 2x2 window of equal values sends all of dy = 3 to the first
  // element in row-major order.
  HostTensor x = f64({1, 1, 2, 2}, {1, 1, 1, 1});
  HostTensor dy = f64({1, 1, 1, 1}, {3});
  expectAllClose(runOne("max_pool2d_grad", {x, dy}, {{"kernel", {2, 2}}}),
                 {3, 0, 0, 0}, 0, "max_pool2d_grad");
}

TEST(PoolingKernelsTest, MaxPoolGradSumsOverlappingWindows) {
  // x = [1, 5, 2] with 1x2 windows at stride 1: both windows pick the 5, so
  // it receives dy = 10 + 20 = 30.
  HostTensor x = f64({1, 1, 1, 3}, {1, 5, 2});
  HostTensor dy = f64({1, 1, 1, 2}, {10, 20});
  AttrList attrs = {{"kernel", {1, 2}}, {"strides", {1, 1}}};
  expectAllClose(runOne("max_pool2d_grad", {x, dy}, attrs), {0, 30, 0}, 0,
                 "max_pool2d_grad");
}

TEST(PoolingKernelsTest, AvgPoolGradSharesByValidCount) {
  // 4x4 input, 3x3 windows, stride 2, padding 1 (as above); dy = [4, 6, 12, 18]
  // and the windows hold 4, 6, 6 and 9 inputs, so each share is 1, 1, 2, 2.
  // x00 lies only in window (0,0): 1. x11 lies in all four: 1+1+2+2 = 6.
  // x13 lies in (0,1) and (1,1): 1 + 2 = 3. x33 only in (1,1): 2.
  HostTensor dy = f64({1, 1, 2, 2}, {4, 6, 12, 18});
  AttrList attrs = {{"kernel", {3, 3}},
                    {"strides", {2, 2}},
                    {"padding", {1, 1}},
                    {"input_shape", {1, 1, 4, 4}}};
  HostTensor dx = runOne("avg_pool2d_grad", {dy}, attrs);
  // Row by row: rows 0 and 1 are in window row 0 (and row 1 also in window
  // row 1); cols likewise.
  expectAllClose(dx,
                 {1, 2, 1, 1,  //
                  3, 6, 3, 3,  //
                  2, 4, 2, 2,  //
                  2, 4, 2, 2}, //
                 0, "avg_pool2d_grad");
}

TEST(PoolingKernelsTest, GlobalAvgPoolHandComputed) {
  // Plane means: (1 + 2 + 3 + 4) / 4 = 2.5 and (10 + 20 + 30 + 40) / 4 = 25.
  HostTensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  HostTensor y = runOne("global_avg_pool", {x});
  EXPECT_EQ(shapeOf(y), (std::vector<int64_t>{1, 2}));
  expectAllClose(y, {2.5, 25}, 0, "global_avg_pool");
}

TEST(PoolingKernelsTest, UpsampleNearestRepeatsPixels) {
  HostTensor x = i64({1, 1, 2, 2}, {1, 2, 3, 4});
  HostTensor y = runOne("upsample_nearest", {x});
  EXPECT_EQ(y.dtype(), DType::I64);
  expectAllClose(y,
                 {1, 1, 2, 2, //
                  1, 1, 2, 2, //
                  3, 3, 4, 4, //
                  3, 3, 4, 4},
                 0, "upsample_nearest");
  HostTensor wide = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  expectAllClose(runOne("upsample_nearest", {wide}, {{"scale", 3}}),
                 {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                  3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4},
                 0, "upsample_nearest scale 3");
}

/// One pooling window configuration over x [2, 3, H, W].
struct PoolCase {
  const char *name;
  int64_t height, width, kernelH, kernelW, strideH, strideW, padH, padW;

  int64_t outH() const { return (height + 2 * padH - kernelH) / strideH + 1; }
  int64_t outW() const { return (width + 2 * padW - kernelW) / strideW + 1; }
  std::vector<int64_t> xShape() const { return {2, 3, height, width}; }
  std::vector<int64_t> yShape() const { return {2, 3, outH(), outW()}; }
  AttrList attrs() const {
    return {{"kernel", {kernelH, kernelW}},
            {"strides", {strideH, strideW}},
            {"padding", {padH, padW}}};
  }
  AttrList avgGradAttrs() const {
    AttrList result = attrs();
    result.push_back({"input_shape", xShape()});
    return result;
  }
};

/// max_pool2d (`max`) or avg_pool2d by definition over the in-image part of
/// each window.
std::vector<double> directPool(const PoolCase &c, const HostTensor &x,
                               bool max) {
  std::vector<double> y;
  for (int64_t plane = 0; plane < 6; ++plane)
    for (int64_t i = 0; i < c.outH(); ++i)
      for (int64_t j = 0; j < c.outW(); ++j) {
        double best = -1e300, sum = 0;
        int count = 0;
        for (int64_t a = 0; a < c.kernelH; ++a)
          for (int64_t b = 0; b < c.kernelW; ++b) {
            int64_t row = i * c.strideH - c.padH + a;
            int64_t col = j * c.strideW - c.padW + b;
            if (row < 0 || row >= c.height || col < 0 || col >= c.width)
              continue;
            double v = x.at((plane * c.height + row) * c.width + col);
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        y.push_back(max ? best : sum / count);
      }
  return y;
}

class PoolingKernelsConfigTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolingKernelsConfigTest, ForwardMatchesDirectLoop) {
  const PoolCase &c = GetParam();
  HostTensor x = randomTensor(DType::F64, c.xShape(), 1);
  expectAllClose(runOne("max_pool2d", {x}, c.attrs()), directPool(c, x, true),
                 0, "max_pool2d");
  expectAllClose(runOne("avg_pool2d", {x}, c.attrs()), directPool(c, x, false),
                 1e-15, "avg_pool2d");
}

TEST_P(PoolingKernelsConfigTest, MaxPoolGradMatchesFiniteDifferences) {
  // Random values have no ties, so the max is differentiable at x.
  const PoolCase &c = GetParam();
  HostTensor x = randomTensor(DType::F64, c.xShape(), 2);
  HostTensor dy = randomTensor(DType::F64, c.yShape(), 3);
  HostTensor dx = runOne("max_pool2d_grad", {x, dy}, c.attrs());
  expectMatchesFiniteDifferences(dx, "max_pool2d", {x}, 0, dy, c.attrs(),
                                 "max_pool2d_grad");
}

TEST_P(PoolingKernelsConfigTest, AvgPoolGradMatchesFiniteDifferences) {
  const PoolCase &c = GetParam();
  HostTensor x = randomTensor(DType::F64, c.xShape(), 4);
  HostTensor dy = randomTensor(DType::F64, c.yShape(), 5);
  HostTensor dx = runOne("avg_pool2d_grad", {dy}, c.avgGradAttrs());
  expectMatchesFiniteDifferences(dx, "avg_pool2d", {x}, 0, dy, c.attrs(),
                                 "avg_pool2d_grad");
}

TEST_P(PoolingKernelsConfigTest, F32MatchesF64) {
  const PoolCase &c = GetParam();
  HostTensor x = randomTensor(DType::F64, c.xShape(), 6);
  HostTensor dy = randomTensor(DType::F64, c.yShape(), 7);
  expectF32MatchesF64("max_pool2d", {x}, c.attrs(), 1e-6);
  expectF32MatchesF64("avg_pool2d", {x}, c.attrs(), 1e-6);
  expectF32MatchesF64("max_pool2d_grad", {x, dy}, c.attrs(), 1e-6);
  expectF32MatchesF64("avg_pool2d_grad", {dy}, c.avgGradAttrs(), 1e-6);
}

// name, H, W, kh, kw, sh, sw, ph, pw
INSTANTIATE_TEST_SUITE_P(
    Configs, PoolingKernelsConfigTest,
    ::testing::Values(PoolCase{"Tiled2x2", 4, 6, 2, 2, 2, 2, 0, 0},
                      PoolCase{"Overlapping3x3", 7, 7, 3, 3, 2, 2, 1, 1},
                      PoolCase{"Asymmetric", 5, 8, 3, 2, 1, 3, 1, 1},
                      PoolCase{"RaggedEdge", 5, 5, 2, 2, 2, 2, 0, 0},
                      PoolCase{"WholeImage", 3, 4, 3, 4, 1, 1, 0, 0}),
    [](const ::testing::TestParamInfo<PoolCase> &info) {
      return std::string(info.param.name);
    });

TEST(PoolingKernelsTest, GlobalAvgPoolAndUpsampleF32MatchF64) {
  HostTensor x = randomTensor(DType::F64, {2, 3, 5, 4}, 8);
  expectF32MatchesF64("global_avg_pool", {x}, {}, 1e-6);
  expectF32MatchesF64("upsample_nearest", {x}, {{"scale", 2}}, 1e-7);
}

TEST(PoolingKernelsTest, EmptyImages) {
  // A padded window over a 0x0 image has nothing to pool.
  HostTensor x(Type(DType::F32, {1, 1, 0, 0}));
  AttrList attrs = {{"kernel", {2, 2}}, {"padding", {1, 1}}};
  EXPECT_EQ(kernelError("max_pool2d", {x}, attrs),
            "'max_pool2d' windows over an empty 0x0 image cover only padding");
  // The mean of no pixels is 0 / 0.
  HostTensor flat(Type(DType::F64, {1, 2, 0, 3}));
  HostTensor y = runOne("global_avg_pool", {flat});
  ASSERT_EQ(y.numel(), 2);
  EXPECT_TRUE(std::isnan(y.at(0)) && std::isnan(y.at(1)));
}

} // namespace

//===- ConvolutionKernelsTest.cpp - conv2d and its backward kernels -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

using namespace remat;
using namespace remat::test;

namespace {

/// One convolution configuration.
struct ConvCase {
  const char *name;
  int64_t batch, inChannels, height, width, outChannels, kernelH, kernelW;
  int64_t strideH, strideW, padH, padW, dilationH, dilationW, groups;

  int64_t outH() const {
    return (height + 2 * padH - dilationH * (kernelH - 1) - 1) / strideH + 1;
  }
  int64_t outW() const {
    return (width + 2 * padW - dilationW * (kernelW - 1) - 1) / strideW + 1;
  }
  std::vector<int64_t> xShape() const {
    return {batch, inChannels, height, width};
  }
  std::vector<int64_t> wShape() const {
    return {outChannels, inChannels / groups, kernelH, kernelW};
  }
  std::vector<int64_t> yShape() const {
    return {batch, outChannels, outH(), outW()};
  }
  AttrList attrs() const {
    return {{"strides", {strideH, strideW}},
            {"padding", {padH, padW}},
            {"dilation", {dilationH, dilationW}},
            {"groups", groups}};
  }
  AttrList gradInputAttrs() const {
    AttrList result = attrs();
    result.push_back({"input_shape", xShape()});
    return result;
  }
  AttrList gradFilterAttrs() const {
    AttrList result = attrs();
    result.push_back({"filter_shape", wShape()});
    return result;
  }
};

/// conv2d by its definition: y[n, o, i, j] = sum over the group's input
/// channels c and kernel taps (a, b) of
/// x[n, g*Cin/g + c, i*sh - ph + a*dh, j*sw - pw + b*dw] * w[o, c, a, b],
/// taps outside the image contributing nothing.
std::vector<double> directConv2d(const ConvCase &c, const HostTensor &x,
                                 const HostTensor &w) {
  int64_t groupIn = c.inChannels / c.groups;
  int64_t groupOut = c.outChannels / c.groups;
  std::vector<double> y;
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t o = 0; o < c.outChannels; ++o)
      for (int64_t i = 0; i < c.outH(); ++i)
        for (int64_t j = 0; j < c.outW(); ++j) {
          double sum = 0;
          int64_t group = o / groupOut;
          for (int64_t ci = 0; ci < groupIn; ++ci)
            for (int64_t a = 0; a < c.kernelH; ++a)
              for (int64_t b = 0; b < c.kernelW; ++b) {
                int64_t row = i * c.strideH - c.padH + a * c.dilationH;
                int64_t col = j * c.strideW - c.padW + b * c.dilationW;
                if (row < 0 || row >= c.height || col < 0 || col >= c.width)
                  continue;
                int64_t channel = group * groupIn + ci;
                int64_t xIndex =
                    ((n * c.inChannels + channel) * c.height + row) * c.width +
                    col;
                int64_t wIndex =
                    ((o * groupIn + ci) * c.kernelH + a) * c.kernelW + b;
                sum += x.at(xIndex) * w.at(wIndex);
              }
          y.push_back(sum);
        }
  return y;
}

class ConvolutionKernelsTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvolutionKernelsTest, ForwardMatchesDirectLoop) {
  const ConvCase &c = GetParam();
  HostTensor x = randomTensor(DType::F64, c.xShape(), 1);
  HostTensor w = randomTensor(DType::F64, c.wShape(), 2);
  HostTensor y = runOne("conv2d", {x, w}, c.attrs());
  EXPECT_EQ(shapeOf(y), c.yShape());
  expectAllClose(y, directConv2d(c, x, w), 1e-12, "conv2d");
}

TEST_P(ConvolutionKernelsTest, GradInputMatchesFiniteDifferences) {
  const ConvCase &c = GetParam();
  HostTensor x = randomTensor(DType::F64, c.xShape(), 3);
  HostTensor w = randomTensor(DType::F64, c.wShape(), 4);
  HostTensor dy = randomTensor(DType::F64, c.yShape(), 5);
  HostTensor dx = runOne("conv2d_grad_input", {dy, w}, c.gradInputAttrs());
  EXPECT_EQ(shapeOf(dx), c.xShape());
  expectMatchesFiniteDifferences(dx, "conv2d", {x, w}, 0, dy, c.attrs(),
                                 "conv2d_grad_input");
}

TEST_P(ConvolutionKernelsTest, GradFilterMatchesFiniteDifferences) {
  const ConvCase &c = GetParam();
  HostTensor x = randomTensor(DType::F64, c.xShape(), 6);
  HostTensor w = randomTensor(DType::F64, c.wShape(), 7);
  HostTensor dy = randomTensor(DType::F64, c.yShape(), 8);
  HostTensor dw = runOne("conv2d_grad_filter", {x, dy}, c.gradFilterAttrs());
  EXPECT_EQ(shapeOf(dw), c.wShape());
  expectMatchesFiniteDifferences(dw, "conv2d", {x, w}, 1, dy, c.attrs(),
                                 "conv2d_grad_filter");
}

TEST_P(ConvolutionKernelsTest, F32MatchesF64) {
  const ConvCase &c = GetParam();
  HostTensor x = randomTensor(DType::F64, c.xShape(), 9);
  HostTensor w = randomTensor(DType::F64, c.wShape(), 10);
  HostTensor dy = randomTensor(DType::F64, c.yShape(), 11);
  expectF32MatchesF64("conv2d", {x, w}, c.attrs(), 1e-5);
  expectF32MatchesF64("conv2d_grad_input", {dy, w}, c.gradInputAttrs(), 1e-5);
  expectF32MatchesF64("conv2d_grad_filter", {x, dy}, c.gradFilterAttrs(), 1e-5);
}

// name, N, Cin, H, W, Cout, kh, kw, sh, sw, ph, pw, dh, dw, groups
INSTANTIATE_TEST_SUITE_P(
    Configs, ConvolutionKernelsTest,
    ::testing::Values(
        ConvCase{"Same3x3", 2, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1},
        ConvCase{"StridedAsymmetric", 1, 2, 7, 5, 3, 3, 2, 2, 1, 1, 0, 1, 1, 1},
        ConvCase{"Dilated", 2, 2, 7, 8, 2, 3, 3, 1, 1, 2, 1, 2, 3, 1},
        ConvCase{"StridedDilatedPadded", 1, 2, 9, 9, 3, 3, 3, 2, 3, 2, 2, 2, 2,
                 1},
        ConvCase{"Grouped", 1, 4, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2},
        ConvCase{"Depthwise", 2, 3, 6, 6, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3},
        ConvCase{"DepthwiseMultiplier", 1, 3, 5, 4, 6, 3, 3, 1, 1, 1, 1, 1, 1,
                 3},
        ConvCase{"DepthwiseStridedDilated", 2, 2, 8, 7, 2, 3, 2, 2, 3, 2, 1, 2,
                 2, 2},
        ConvCase{"SingleInputChannel", 2, 1, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1,
                 1},
        ConvCase{"Pointwise", 2, 3, 4, 4, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1},
        ConvCase{"PointwiseStrided", 1, 3, 5, 5, 2, 1, 1, 2, 2, 0, 0, 1, 1, 1},
        ConvCase{"PaddingWiderThanKernel", 1, 1, 2, 3, 2, 3, 3, 1, 1, 2, 2, 1,
                 1, 1},
        ConvCase{"KernelCoversImage", 2, 2, 3, 3, 2, 3, 3, 1, 1, 0, 0, 1, 1,
                 1}),
    [](const ::testing::TestParamInfo<ConvCase> &info) {
      return std::string(info.param.name);
    });

TEST(ConvolutionKernelsHandTest, ValidConvolution) {
  // x = 1..9 as a 3x3 image, w = [[1, 2], [3, 4]]. Each output is the
  // window's dot product with w:
  //   y00 = 1*1 + 2*2 + 4*3 + 5*4 = 37    y01 = 2 + 6 + 15 + 24 = 47
  //   y10 = 4 + 10 + 21 + 32 = 67         y11 = 5 + 12 + 24 + 36 = 77
  HostTensor x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  HostTensor w = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  expectAllClose(runOne("conv2d", {x, w}), {37, 47, 67, 77}, 0, "conv2d");
}

TEST(ConvolutionKernelsHandTest, PaddedStridedConvolution) {
  // Same x and w, padding 1 and strides 2: windows start at -1 and 1.
  //   (0,0) sees only x00 = 1 under w11 = 4                  ->  4
  //   (0,1) sees x01 = 2, x02 = 3 under w10 = 3, w11 = 4     ->  6 + 12 = 18
  //   (1,0) sees x10 = 4, x20 = 7 under w01 = 2, w11 = 4     ->  8 + 28 = 36
  //   (1,1) sees the full window 5, 6, 8, 9                  ->  77
  HostTensor x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  HostTensor w = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  AttrList attrs = {{"strides", {2, 2}}, {"padding", {1, 1}}};
  expectAllClose(runOne("conv2d", {x, w}, attrs), {4, 18, 36, 77}, 0, "conv2d");
}

TEST(ConvolutionKernelsHandTest, GradInputScattersThroughWindows) {
  // A 2x2 all-ones filter over a 3x3 image gives a 2x2 output; with dy all
  // ones each input element receives one per window covering it: corners 1,
  // edges 2, the centre 4.
  HostTensor dy = f64({1, 1, 2, 2}, {1, 1, 1, 1});
  HostTensor w = f64({1, 1, 2, 2}, {1, 1, 1, 1});
  HostTensor dx =
      runOne("conv2d_grad_input", {dy, w}, {{"input_shape", {1, 1, 3, 3}}});
  expectAllClose(dx, {1, 2, 1, 2, 4, 2, 1, 2, 1}, 0, "conv2d_grad_input");
}

TEST(ConvolutionKernelsHandTest, GradFilterSumsOverImages) {
  // x = 1..9 (3x3) in both images of the batch, dy all ones over the 2x2
  // output: dw[a][b] is twice the sum of the 2x2 block at offset (a, b):
  //   (1+2+4+5)*2 = 24, (2+3+5+6)*2 = 32, (4+5+7+8)*2 = 48, (5+6+8+9)*2 = 56.
  HostTensor x =
      f64({2, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  HostTensor dy = f64({2, 1, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
  HostTensor dw =
      runOne("conv2d_grad_filter", {x, dy}, {{"filter_shape", {1, 1, 2, 2}}});
  expectAllClose(dw, {24, 32, 48, 56}, 0, "conv2d_grad_filter");
}

TEST(ConvolutionKernelsHandTest, HalfPrecisionIsAnError) {
  HostTensor x(Type(DType::F16, {1, 1, 3, 3}));
  HostTensor w(Type(DType::F16, {1, 1, 2, 2}));
  EXPECT_EQ(kernelError("conv2d", {x, w}), "'conv2d' has no f16 kernel");
}

TEST(ConvolutionKernelsHandTest, EmptyTensors) {
  // An empty batch gives an empty y and a zero filter gradient.
  HostTensor x(Type(DType::F32, {0, 2, 4, 4}));
  HostTensor w = randomTensor(DType::F32, {3, 2, 3, 3}, 1);
  HostTensor dy(Type(DType::F32, {0, 3, 4, 4}));
  AttrList attrs = {{"padding", {1, 1}}};
  EXPECT_EQ(runOne("conv2d", {x, w}, attrs).numel(), 0);
  AttrList filterAttrs = {{"padding", {1, 1}}, {"filter_shape", {3, 2, 3, 3}}};
  expectAllClose(runOne("conv2d_grad_filter", {x, dy}, filterAttrs),
                 std::vector<double>(54, 0.0), 0, "conv2d_grad_filter");
  // A 0x0 image padded by 1 under a 1x1 filter: every window is padding.
  HostTensor empty(Type(DType::F64, {1, 1, 0, 0}));
  HostTensor one = f64({1, 1, 1, 1}, {1});
  expectAllClose(runOne("conv2d", {empty, one}, attrs), {0, 0, 0, 0}, 0,
                 "conv2d");
}

} // namespace

//===- Pooling.cpp - Kernels of the Pooling family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Window pooling over NCHW planes and its backward ops, global average
/// pooling and nearest upsampling. A window is clipped to the input: padding
/// never wins a max and never counts in an average (shape inference keeps
/// padding below the kernel, so every window holds an input element). Sums
/// accumulate in double. max_pool2d and upsample_nearest take f32, f64, i8,
/// i32, i64 and bool; the others are float only.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "remat/Runtime/Kernel.h"
#include "remat/Support/Status.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace remat {
using namespace kernels;

namespace {
/// The sizes of one pooling op over [N, C, H, W] planes.
struct PoolGeometry {
  int64_t planes, height, width, outH, outW;
  int64_t kernelH, kernelW, strideH, strideW, padH, padW;

  int64_t inPixels() const { return height * width; }
  int64_t outPixels() const { return outH * outW; }
};

/// The input rows and columns that window (oh, ow) covers, clipped.
struct Window {
  int64_t rowBegin, rowEnd, colBegin, colEnd;

  int64_t size() const { return (rowEnd - rowBegin) * (colEnd - colBegin); }
};
} // namespace

static Window windowAt(const PoolGeometry &g, int64_t oh, int64_t ow) {
  int64_t row = oh * g.strideH - g.padH;
  int64_t col = ow * g.strideW - g.padW;
  return {std::max<int64_t>(row, 0), std::min(row + g.kernelH, g.height),
          std::max<int64_t>(col, 0), std::min(col + g.kernelW, g.width)};
}

/// Reads the window attributes; `input` is [N, C, H, W], `output` the pooled
/// [N, C, Ho, Wo].
static absl::StatusOr<PoolGeometry>
poolGeometry(const KernelContext &ctx, llvm::ArrayRef<int64_t> input,
             llvm::ArrayRef<int64_t> output) {
  std::string kind = ctx.op().kind().str();
  if (input.size() != 4 || output.size() != 4)
    return invalidArgument("'{}' needs rank-4 images", kind);
  const OpSignature &sig = ctx.signature();
  llvm::ArrayRef<int64_t> kernel = sig.getIntList("kernel");
  llvm::ArrayRef<int64_t> strides = sig.getIntList("strides");
  llvm::ArrayRef<int64_t> padding = sig.getIntList("padding");
  if (strides.empty())
    strides = kernel;
  if (kernel.size() != 2 || strides.size() != 2 || padding.size() != 2)
    return invalidArgument("'{}' kernel, strides and padding need 2 entries",
                           kind);
  PoolGeometry g{.planes = input[0] * input[1],
                 .height = input[2],
                 .width = input[3],
                 .outH = output[2],
                 .outW = output[3],
                 .kernelH = kernel[0],
                 .kernelW = kernel[1],
                 .strideH = strides[0],
                 .strideW = strides[1],
                 .padH = padding[0],
                 .padW = padding[1]};
  if (g.strideH < 1 || g.strideW < 1 || g.padH < 0 || g.padW < 0 ||
      g.padH >= g.kernelH || g.padW >= g.kernelW ||
      output[0] * output[1] != g.planes)
    return invalidArgument("'{}' has inconsistent shapes or attributes", kind);
  if (g.inPixels() == 0 && g.planes != 0 && g.outPixels() != 0)
    return invalidArgument("'{}' windows over an empty {}x{} image cover only "
                           "padding",
                           kind, g.height, g.width);
  return g;
}

/// True if `value` beats the running maximum `best`: greater, or the first
/// NaN, which then propagates.
template <typename T> static bool beats(T value, T best) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(value))
      return !std::isnan(best);
  return value > best;
}

/// The plane offset of the first maximal element of window `w`, row-major.
template <typename T>
static int64_t windowArgmax(const PoolGeometry &g, const T *plane,
                            const Window &w) {
  int64_t best = w.rowBegin * g.width + w.colBegin;
  for (int64_t r = w.rowBegin; r < w.rowEnd; ++r)
    for (int64_t c = w.colBegin; c < w.colEnd; ++c)
      if (beats(plane[r * g.width + c], plane[best]))
        best = r * g.width + c;
  return best;
}

template <typename T>
static void maxPool2d(const PoolGeometry &g, const T *x, T *y) {
  for (int64_t p = 0; p < g.planes; ++p) {
    const T *plane = x + p * g.inPixels();
    T *out = y + p * g.outPixels();
    for (int64_t oh = 0; oh < g.outH; ++oh)
      for (int64_t ow = 0; ow < g.outW; ++ow)
        out[oh * g.outW + ow] =
            plane[windowArgmax(g, plane, windowAt(g, oh, ow))];
  }
}

template <typename T>
static void maxPool2dGrad(const PoolGeometry &g, const T *x, const T *dy,
                          T *dx) {
  std::fill(dx, dx + g.planes * g.inPixels(), T(0));
  for (int64_t p = 0; p < g.planes; ++p) {
    const T *plane = x + p * g.inPixels();
    const T *grad = dy + p * g.outPixels();
    T *gradIn = dx + p * g.inPixels();
    for (int64_t oh = 0; oh < g.outH; ++oh)
      for (int64_t ow = 0; ow < g.outW; ++ow)
        gradIn[windowArgmax(g, plane, windowAt(g, oh, ow))] +=
            grad[oh * g.outW + ow];
  }
}

template <typename T>
static void avgPool2d(const PoolGeometry &g, const T *x, T *y) {
  for (int64_t p = 0; p < g.planes; ++p) {
    const T *plane = x + p * g.inPixels();
    T *out = y + p * g.outPixels();
    for (int64_t oh = 0; oh < g.outH; ++oh) {
      for (int64_t ow = 0; ow < g.outW; ++ow) {
        Window w = windowAt(g, oh, ow);
        double sum = 0;
        for (int64_t r = w.rowBegin; r < w.rowEnd; ++r)
          for (int64_t c = w.colBegin; c < w.colEnd; ++c)
            sum += double(plane[r * g.width + c]);
        out[oh * g.outW + ow] = T(sum / double(w.size()));
      }
    }
  }
}

template <typename T>
static void avgPool2dGrad(const PoolGeometry &g, const T *dy, T *dx) {
  std::fill(dx, dx + g.planes * g.inPixels(), T(0));
  for (int64_t p = 0; p < g.planes; ++p) {
    const T *grad = dy + p * g.outPixels();
    T *gradIn = dx + p * g.inPixels();
    for (int64_t oh = 0; oh < g.outH; ++oh) {
      for (int64_t ow = 0; ow < g.outW; ++ow) {
        Window w = windowAt(g, oh, ow);
        T share = T(double(grad[oh * g.outW + ow]) / double(w.size()));
        for (int64_t r = w.rowBegin; r < w.rowEnd; ++r)
          for (int64_t c = w.colBegin; c < w.colEnd; ++c)
            gradIn[r * g.width + c] += share;
      }
    }
  }
}

static absl::Status runMaxPool2d(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType("max_pool2d", x.dtype(), {y}));
  REMAT_ASSIGN_OR_RETURN(auto g, poolGeometry(ctx, x.shape(), y.shape()));
  return dispatchAny(x.dtype(), "max_pool2d", [&]<typename T>() {
    if (y.numel() != 0)
      maxPool2d(g, x.data<T>(), y.data<T>());
  });
}

static absl::Status runMaxPool2dGrad(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &dy = ctx.operand(1);
  const Tensor &dx = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType("max_pool2d_grad", x.dtype(), {dy, dx}));
  REMAT_ASSIGN_OR_RETURN(auto g, poolGeometry(ctx, x.shape(), dy.shape()));
  return dispatchFloat(x.dtype(), "max_pool2d_grad", [&]<typename T>() {
    if (dx.numel() != 0)
      maxPool2dGrad(g, x.data<T>(), dy.data<T>(), dx.data<T>());
  });
}

static absl::Status runAvgPool2d(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType("avg_pool2d", x.dtype(), {y}));
  REMAT_ASSIGN_OR_RETURN(auto g, poolGeometry(ctx, x.shape(), y.shape()));
  return dispatchFloat(x.dtype(), "avg_pool2d", [&]<typename T>() {
    if (y.numel() != 0)
      avgPool2d(g, x.data<T>(), y.data<T>());
  });
}

static absl::Status runAvgPool2dGrad(const KernelContext &ctx) {
  const Tensor &dy = ctx.operand(0);
  const Tensor &dx = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType("avg_pool2d_grad", dy.dtype(), {dx}));
  REMAT_ASSIGN_OR_RETURN(auto g, poolGeometry(ctx, dx.shape(), dy.shape()));
  return dispatchFloat(dy.dtype(), "avg_pool2d_grad", [&]<typename T>() {
    if (dx.numel() != 0)
      avgPool2dGrad(g, dy.data<T>(), dx.data<T>());
  });
}

/// The mean of each [H, W] plane; an empty plane gives NaN (0 / 0).
static absl::Status runGlobalAvgPool(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType("global_avg_pool", x.dtype(), {y}));
  if (x.shape().size() != 4)
    return invalidArgument("'global_avg_pool' needs a rank-4 image");
  int64_t pixels = x.shape()[2] * x.shape()[3];
  return dispatchFloat(x.dtype(), "global_avg_pool", [&]<typename T>() {
    T *out = y.numel() == 0 ? nullptr : y.data<T>();
    const T *in = x.numel() == 0 ? nullptr : x.data<T>();
    for (int64_t p = 0; p < y.numel(); ++p) {
      double sum = 0;
      for (int64_t i = 0; i < pixels; ++i)
        sum += double(in[p * pixels + i]);
      out[p] = T(sum / double(pixels));
    }
  });
}

static absl::Status runUpsampleNearest(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType("upsample_nearest", x.dtype(), {y}));
  int64_t scale = ctx.signature().getInt("scale");
  if (x.shape().size() != 4 || scale < 1)
    return invalidArgument("'upsample_nearest' needs a rank-4 image and a "
                           "positive scale");
  int64_t planes = x.shape()[0] * x.shape()[1];
  int64_t height = x.shape()[2], width = x.shape()[3];
  return dispatchAny(x.dtype(), "upsample_nearest", [&]<typename T>() {
    if (y.numel() == 0)
      return;
    const T *in = x.data<T>();
    T *out = y.data<T>();
    int64_t outW = width * scale;
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t h = 0; h < height; ++h) {
        const T *src = in + (p * height + h) * width;
        T *row = out + (p * height + h) * scale * outW;
        for (int64_t w = 0; w < width; ++w)
          std::fill(row + w * scale, row + (w + 1) * scale, src[w]);
        for (int64_t copy = 1; copy < scale; ++copy)
          std::copy(row, row + outW, row + copy * outW);
      }
    }
  });
}

void registerPoolingKernels(OpRegistry &registry) {
  registry.setKernel("max_pool2d", {runMaxPool2d});
  registry.setKernel("avg_pool2d", {runAvgPool2d});
  registry.setKernel("global_avg_pool", {runGlobalAvgPool});
  registry.setKernel("upsample_nearest", {runUpsampleNearest});
  registry.setKernel("max_pool2d_grad", {runMaxPool2dGrad});
  registry.setKernel("avg_pool2d_grad", {runAvgPool2dGrad});
}

} // namespace remat

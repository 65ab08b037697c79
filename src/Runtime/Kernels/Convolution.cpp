//===- Convolution.cpp - Kernels of the Convolution family ----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// conv2d and its two backward ops, by im2col and one Eigen matrix product per
/// (image, group):
///
///   y[g]  [Cout/g, Ho*Wo]        = w[g] [Cout/g, K] * col [K, Ho*Wo]
///   dcol  [K, Ho*Wo]             = w[g]^T * dy[g]        (col2im adds to dx)
///   dw[g] [Cout/g, K]           += dy[g] * col^T         (summed over images)
///
/// with K = Cin/g * kh * kw. A 1x1 convolution with unit strides and no
/// padding reads the image itself as its column matrix; a depthwise one (one
/// input channel per group) runs direct loops over the kernel taps instead.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "remat/Runtime/Kernel.h"
#include "remat/Support/Status.h"

#include <Eigen/Core>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace remat {
using namespace kernels;

namespace {

template <typename T>
using RowMatrix =
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T> using MatrixView = Eigen::Map<RowMatrix<T>>;
template <typename T> using ConstMatrixView = Eigen::Map<const RowMatrix<T>>;

/// The sizes of one convolution, from its tensors' shapes and attributes.
struct ConvGeometry {
  int64_t batch, inChannels, height, width;
  int64_t outChannels, kernelH, kernelW, outH, outW;
  int64_t strideH, strideW, padH, padW, dilationH, dilationW, groups;

  int64_t groupIn() const { return inChannels / groups; }
  int64_t groupOut() const { return outChannels / groups; }
  /// Rows of the column matrix: one per (channel, kernel row, kernel col).
  int64_t patch() const { return groupIn() * kernelH * kernelW; }
  int64_t outPixels() const { return outH * outW; }
  int64_t inPixels() const { return height * width; }
  /// The image is its own column matrix.
  bool isPointwise() const {
    return kernelH == 1 && kernelW == 1 && strideH == 1 && strideW == 1 &&
           padH == 0 && padW == 0;
  }
  /// One input channel per group: direct loops beat a GEMM of one row.
  bool isDepthwise() const { return groups > 1 && groupIn() == 1; }
};

/// The positions `o` in [0, count) whose input index `o * stride + offset`
/// lies in [0, size), as a half-open range.
struct ValidRange {
  int64_t begin, end;
};

ValidRange validRange(int64_t offset, int64_t stride, int64_t size,
                      int64_t count) {
  int64_t begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last = size - 1 - offset;
  int64_t end = last < 0 ? 0 : last / stride + 1;
  begin = std::min(begin, count);
  end = std::clamp(end, begin, count);
  return {begin, end};
}

} // namespace

static llvm::StringRef kind(const KernelContext &ctx) {
  return ctx.op().kind();
}

static absl::StatusOr<std::array<int64_t, 2>> pairAttr(const KernelContext &ctx,
                                                       llvm::StringRef name) {
  llvm::ArrayRef<int64_t> values = ctx.signature().getIntList(name);
  if (values.size() != 2)
    return invalidArgument("'{}' {} must have 2 entries, got {}",
                           kind(ctx).str(), name.str(), values.size());
  return std::array<int64_t, 2>{values[0], values[1]};
}

/// Reads the geometry from x [N, Cin, H, W], w [Cout, Cin/g, kh, kw] and
/// y [N, Cout, Ho, Wo], whichever of them are operands or the result.
static absl::StatusOr<ConvGeometry> convGeometry(const KernelContext &ctx,
                                                 llvm::ArrayRef<int64_t> x,
                                                 llvm::ArrayRef<int64_t> w,
                                                 llvm::ArrayRef<int64_t> y) {
  if (x.size() != 4 || w.size() != 4 || y.size() != 4)
    return invalidArgument("'{}' needs rank-4 images and filters",
                           kind(ctx).str());
  REMAT_ASSIGN_OR_RETURN(auto strides, pairAttr(ctx, "strides"));
  REMAT_ASSIGN_OR_RETURN(auto padding, pairAttr(ctx, "padding"));
  REMAT_ASSIGN_OR_RETURN(auto dilation, pairAttr(ctx, "dilation"));
  ConvGeometry g{.batch = x[0],
                 .inChannels = x[1],
                 .height = x[2],
                 .width = x[3],
                 .outChannels = w[0],
                 .kernelH = w[2],
                 .kernelW = w[3],
                 .outH = y[2],
                 .outW = y[3],
                 .strideH = strides[0],
                 .strideW = strides[1],
                 .padH = padding[0],
                 .padW = padding[1],
                 .dilationH = dilation[0],
                 .dilationW = dilation[1],
                 .groups = ctx.signature().getInt("groups")};
  if (g.groups < 1 || g.inChannels % g.groups != 0 ||
      g.outChannels % g.groups != 0 || w[1] != g.groupIn() || y[0] != x[0] ||
      y[1] != g.outChannels || g.strideH < 1 || g.strideW < 1 ||
      g.dilationH < 1 || g.dilationW < 1 || g.padH < 0 || g.padW < 0)
    return invalidArgument("'{}' has inconsistent shapes or attributes",
                           kind(ctx).str());
  return g;
}

/// Copies the windows of one group's image [Cin/g, H, W] into the column
/// matrix [K, Ho*Wo], zeros where a window covers padding.
template <typename T>
static void im2col(const ConvGeometry &g, const T *image, T *col) {
  int64_t outPixels = g.outPixels();
  for (int64_t c = 0; c < g.groupIn(); ++c) {
    const T *channel = image + c * g.inPixels();
    for (int64_t ki = 0; ki < g.kernelH; ++ki) {
      int64_t offsetH = ki * g.dilationH - g.padH;
      for (int64_t kj = 0; kj < g.kernelW; ++kj) {
        int64_t offsetW = kj * g.dilationW - g.padW;
        ValidRange cols = validRange(offsetW, g.strideW, g.width, g.outW);
        T *row = col + ((c * g.kernelH + ki) * g.kernelW + kj) * outPixels;
        for (int64_t oh = 0; oh < g.outH; ++oh) {
          T *dst = row + oh * g.outW;
          int64_t ih = oh * g.strideH + offsetH;
          if (ih < 0 || ih >= g.height) {
            std::fill(dst, dst + g.outW, T(0));
            continue;
          }
          const T *src = channel + ih * g.width;
          std::fill(dst, dst + cols.begin, T(0));
          if (g.strideW == 1) {
            std::copy(src + cols.begin + offsetW, src + cols.end + offsetW,
                      dst + cols.begin);
          } else {
            for (int64_t ow = cols.begin; ow < cols.end; ++ow)
              dst[ow] = src[ow * g.strideW + offsetW];
          }
          std::fill(dst + cols.end, dst + g.outW, T(0));
        }
      }
    }
  }
}

/// The adjoint of im2col: adds each column-matrix entry to the image element
/// it was copied from; padding entries are dropped.
template <typename T>
static void col2imAdd(const ConvGeometry &g, const T *col, T *image) {
  int64_t outPixels = g.outPixels();
  for (int64_t c = 0; c < g.groupIn(); ++c) {
    T *channel = image + c * g.inPixels();
    for (int64_t ki = 0; ki < g.kernelH; ++ki) {
      int64_t offsetH = ki * g.dilationH - g.padH;
      ValidRange rows = validRange(offsetH, g.strideH, g.height, g.outH);
      for (int64_t kj = 0; kj < g.kernelW; ++kj) {
        int64_t offsetW = kj * g.dilationW - g.padW;
        ValidRange cols = validRange(offsetW, g.strideW, g.width, g.outW);
        const T *row =
            col + ((c * g.kernelH + ki) * g.kernelW + kj) * outPixels;
        for (int64_t oh = rows.begin; oh < rows.end; ++oh) {
          const T *src = row + oh * g.outW;
          T *dst = channel + (oh * g.strideH + offsetH) * g.width;
          for (int64_t ow = cols.begin; ow < cols.end; ++ow)
            dst[ow * g.strideW + offsetW] += src[ow];
        }
      }
    }
  }
}

/// The output pixels of one kernel tap whose input pixels lie inside the
/// image: a `rows` x `cols` block at `outOffset` of an output plane (row
/// stride Wo) reading the block at `inOffset` of the input plane (row stride
/// sh*W, column stride sw).
struct TapBlock {
  int64_t outOffset, inOffset, rows, cols;
};

static TapBlock tapBlock(const ConvGeometry &g, int64_t ki, int64_t kj) {
  int64_t offsetH = ki * g.dilationH - g.padH;
  int64_t offsetW = kj * g.dilationW - g.padW;
  ValidRange rows = validRange(offsetH, g.strideH, g.height, g.outH);
  ValidRange cols = validRange(offsetW, g.strideW, g.width, g.outW);
  return {.outOffset = rows.begin * g.outW + cols.begin,
          .inOffset = (rows.begin * g.strideH + offsetH) * g.width + offsetW +
                      cols.begin * g.strideW,
          .rows = rows.end - rows.begin,
          .cols = cols.end - cols.begin};
}

template <typename T>
using RowArray = Eigen::Array<std::remove_const_t<T>, Eigen::Dynamic,
                              Eigen::Dynamic, Eigen::RowMajor>;
/// A block of a plane whose rows lie a dynamic stride apart, as an Eigen
/// array; const if T is.
template <typename T>
using BlockView = Eigen::Map<
    std::conditional_t<std::is_const_v<T>, const RowArray<T>, RowArray<T>>, 0,
    Eigen::OuterStride<>>;

template <typename T>
static BlockView<T> outBlock(const ConvGeometry &g, T *plane,
                             const TapBlock &b) {
  return BlockView<T>(plane + b.outOffset, b.rows, b.cols,
                      Eigen::OuterStride<>(g.outW));
}

/// Calls `fn` with an Eigen view of the input block of `b` in `plane`: a
/// vectorisable one when the column stride is 1.
template <typename T, typename Fn>
static void withInBlock(const ConvGeometry &g, T *plane, const TapBlock &b,
                        Fn &&fn) {
  using Array =
      std::conditional_t<std::is_const_v<T>, const RowArray<T>, RowArray<T>>;
  int64_t rowStride = g.strideH * g.width;
  if (g.strideW == 1) {
    fn(BlockView<T>(plane + b.inOffset, b.rows, b.cols,
                    Eigen::OuterStride<>(rowStride)));
    return;
  }
  using Strides = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
  fn(Eigen::Map<Array, 0, Strides>(plane + b.inOffset, b.rows, b.cols,
                                   Strides(rowStride, g.strideW)));
}

/// The three depthwise kernels walk (image, output channel, tap); output
/// channel o reads input channel o / (Cout/g).
template <typename T>
static void depthwiseConv2d(const ConvGeometry &g, const T *x, const T *w,
                            T *y) {
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < g.outChannels; ++o) {
      const T *in = x + (n * g.inChannels + o / g.groupOut()) * g.inPixels();
      T *out = y + (n * g.outChannels + o) * g.outPixels();
      std::fill(out, out + g.outPixels(), T(0));
      for (int64_t ki = 0; ki < g.kernelH; ++ki)
        for (int64_t kj = 0; kj < g.kernelW; ++kj) {
          T weight = w[(o * g.kernelH + ki) * g.kernelW + kj];
          TapBlock b = tapBlock(g, ki, kj);
          if (b.rows == 0 || b.cols == 0)
            continue;
          withInBlock(g, in, b,
                      [&](auto src) { outBlock(g, out, b) += weight * src; });
        }
    }
  }
}

template <typename T>
static void depthwiseConv2dGradInput(const ConvGeometry &g, const T *dy,
                                     const T *w, T *dx) {
  std::fill(dx, dx + g.batch * g.inChannels * g.inPixels(), T(0));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < g.outChannels; ++o) {
      T *gradIn = dx + (n * g.inChannels + o / g.groupOut()) * g.inPixels();
      const T *grad = dy + (n * g.outChannels + o) * g.outPixels();
      for (int64_t ki = 0; ki < g.kernelH; ++ki)
        for (int64_t kj = 0; kj < g.kernelW; ++kj) {
          T weight = w[(o * g.kernelH + ki) * g.kernelW + kj];
          TapBlock b = tapBlock(g, ki, kj);
          if (b.rows == 0 || b.cols == 0)
            continue;
          withInBlock(g, gradIn, b,
                      [&](auto dst) { dst += weight * outBlock(g, grad, b); });
        }
    }
  }
}

template <typename T>
static void depthwiseConv2dGradFilter(const ConvGeometry &g, const T *x,
                                      const T *dy, T *dw) {
  for (int64_t o = 0; o < g.outChannels; ++o) {
    for (int64_t ki = 0; ki < g.kernelH; ++ki) {
      for (int64_t kj = 0; kj < g.kernelW; ++kj) {
        TapBlock b = tapBlock(g, ki, kj);
        T sum = 0;
        for (int64_t n = 0; b.rows > 0 && b.cols > 0 && n < g.batch; ++n) {
          const T *in =
              x + (n * g.inChannels + o / g.groupOut()) * g.inPixels();
          const T *grad = dy + (n * g.outChannels + o) * g.outPixels();
          withInBlock(g, in, b, [&](auto src) {
            sum += (outBlock(g, grad, b) * src).sum();
          });
        }
        dw[(o * g.kernelH + ki) * g.kernelW + kj] = sum;
      }
    }
  }
}

template <typename T>
static void conv2d(const ConvGeometry &g, const T *x, const T *w, T *y) {
  int64_t outPixels = g.outPixels();
  if (g.patch() == 0 || g.inPixels() == 0) {
    std::fill(y, y + g.batch * g.outChannels * outPixels, T(0));
    return;
  }
  if (g.isDepthwise())
    return depthwiseConv2d(g, x, w, y);
  std::vector<T> col(g.isPointwise() ? 0 : g.patch() * outPixels);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T *image =
          x + (n * g.inChannels + grp * g.groupIn()) * g.inPixels();
      const T *colData = image;
      if (!g.isPointwise()) {
        im2col(g, image, col.data());
        colData = col.data();
      }
      ConstMatrixView<T> filter(w + grp * g.groupOut() * g.patch(),
                                g.groupOut(), g.patch());
      ConstMatrixView<T> columns(colData, g.patch(), outPixels);
      MatrixView<T> out(y + (n * g.outChannels + grp * g.groupOut()) *
                                outPixels,
                        g.groupOut(), outPixels);
      out.noalias() = filter * columns;
    }
  }
}

template <typename T>
static void conv2dGradInput(const ConvGeometry &g, const T *dy, const T *w,
                            T *dx) {
  int64_t outPixels = g.outPixels();
  std::fill(dx, dx + g.batch * g.inChannels * g.inPixels(), T(0));
  if (g.groupOut() == 0 || outPixels == 0)
    return;
  if (g.isDepthwise())
    return depthwiseConv2dGradInput(g, dy, w, dx);
  std::vector<T> dcol(g.isPointwise() ? 0 : g.patch() * outPixels);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      T *image = dx + (n * g.inChannels + grp * g.groupIn()) * g.inPixels();
      ConstMatrixView<T> filter(w + grp * g.groupOut() * g.patch(),
                                g.groupOut(), g.patch());
      ConstMatrixView<T> grad(dy + (n * g.outChannels + grp * g.groupOut()) *
                                       outPixels,
                              g.groupOut(), outPixels);
      if (g.isPointwise()) {
        MatrixView<T>(image, g.patch(), outPixels).noalias() =
            filter.transpose() * grad;
        continue;
      }
      MatrixView<T>(dcol.data(), g.patch(), outPixels).noalias() =
          filter.transpose() * grad;
      col2imAdd(g, dcol.data(), image);
    }
  }
}

template <typename T>
static void conv2dGradFilter(const ConvGeometry &g, const T *x, const T *dy,
                             T *dw) {
  int64_t outPixels = g.outPixels();
  std::fill(dw, dw + g.outChannels * g.patch(), T(0));
  if (g.batch == 0 || outPixels == 0 || g.inPixels() == 0)
    return;
  if (g.isDepthwise())
    return depthwiseConv2dGradFilter(g, x, dy, dw);
  std::vector<T> col(g.isPointwise() ? 0 : g.patch() * outPixels);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T *image =
          x + (n * g.inChannels + grp * g.groupIn()) * g.inPixels();
      const T *colData = image;
      if (!g.isPointwise()) {
        im2col(g, image, col.data());
        colData = col.data();
      }
      ConstMatrixView<T> columns(colData, g.patch(), outPixels);
      ConstMatrixView<T> grad(dy + (n * g.outChannels + grp * g.groupOut()) *
                                       outPixels,
                              g.groupOut(), outPixels);
      MatrixView<T> filterGrad(dw + grp * g.groupOut() * g.patch(),
                               g.groupOut(), g.patch());
      filterGrad.noalias() += grad * columns.transpose();
    }
  }
}

/// The shared frame of the three convolution kernels: every operand and the
/// result have operand 0's dtype, the geometry comes from the image, filter
/// and output tensors (whichever are operands or the result), and
/// `compute.template operator()<T>(geometry)` runs unless the result is empty.
template <typename Compute>
static absl::Status runConvolution(const KernelContext &ctx,
                                   const Tensor &image, const Tensor &filter,
                                   const Tensor &output, Compute &&compute) {
  DType dtype = ctx.operand(0).dtype();
  REMAT_RETURN_IF_ERROR(
      expectDType(kind(ctx), dtype, {ctx.operand(1), ctx.result()}));
  REMAT_ASSIGN_OR_RETURN(
      auto g, convGeometry(ctx, image.shape(), filter.shape(), output.shape()));
  return dispatchFloat(dtype, kind(ctx), [&]<typename T>() {
    if (ctx.result().numel() != 0)
      compute.template operator()<T>(g);
  });
}

static absl::Status runConv2d(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &w = ctx.operand(1);
  const Tensor &y = ctx.result();
  return runConvolution(ctx, x, w, y, [&]<typename T>(const ConvGeometry &g) {
    conv2d(g, x.data<T>(), w.data<T>(), y.data<T>());
  });
}

static absl::Status runConv2dGradInput(const KernelContext &ctx) {
  const Tensor &dy = ctx.operand(0);
  const Tensor &w = ctx.operand(1);
  const Tensor &dx = ctx.result();
  return runConvolution(ctx, dx, w, dy, [&]<typename T>(const ConvGeometry &g) {
    conv2dGradInput(g, dy.data<T>(), w.data<T>(), dx.data<T>());
  });
}

static absl::Status runConv2dGradFilter(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &dy = ctx.operand(1);
  const Tensor &dw = ctx.result();
  return runConvolution(ctx, x, dw, dy, [&]<typename T>(const ConvGeometry &g) {
    conv2dGradFilter(g, x.data<T>(), dy.data<T>(), dw.data<T>());
  });
}

void registerConvolutionKernels(OpRegistry &registry) {
  registry.setKernel("conv2d", {runConv2d});
  registry.setKernel("conv2d_grad_input", {runConv2dGradInput});
  registry.setKernel("conv2d_grad_filter", {runConv2dGradFilter});
}

} // namespace remat

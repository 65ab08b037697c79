//===- Softmax.cpp - Kernels of the Softmax family -------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// softmax, log_softmax, their backward ops and causal_mask. Each line along
/// the axis is computed in double (exponentials, sums, the final division)
/// and rounded once into the result dtype. softmax subtracts the line's max
/// first, so large logits do not overflow. Along an inner axis, the lines of
/// one [axis, inner] block advance together so memory is read in order.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace remat {
using namespace kernels;

namespace {

unsigned axisOf(const KernelContext &ctx) {
  return normalizeAxis(ctx.signature().getInt("axis"),
                       ctx.operand(0).type().rank());
}

/// softmax or log_softmax of one contiguous line of `length` elements.
template <typename T>
void softmaxLine(const T *x, T *y, int64_t length, bool log,
                 std::vector<double> &exps) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < length; ++k)
    max = std::max(max, double(x[k]));
  double sum = 0;
  for (int64_t k = 0; k < length; ++k) {
    exps[k] = std::exp(double(x[k]) - max);
    sum += exps[k];
  }
  if (log) {
    double shift = max + std::log(sum);
    for (int64_t k = 0; k < length; ++k)
      y[k] = T(double(x[k]) - shift);
  } else {
    for (int64_t k = 0; k < length; ++k)
      y[k] = T(exps[k] / sum);
  }
}

/// softmax or log_softmax along dim 0 of a dense [length, inner] block: the
/// `inner` lines advance together, so every pass reads memory in order. Each
/// line sees the same operations in the same order as in `softmaxLine`.
template <typename T>
void softmaxBlock(const T *x, T *y, int64_t length, int64_t inner, bool log,
                  std::vector<double> &max, std::vector<double> &sum) {
  std::fill(max.begin(), max.end(), -std::numeric_limits<double>::infinity());
  std::fill(sum.begin(), sum.end(), 0.0);
  for (int64_t k = 0; k < length; ++k)
    for (int64_t i = 0; i < inner; ++i)
      max[i] = std::max(max[i], double(x[k * inner + i]));
  for (int64_t k = 0; k < length; ++k)
    for (int64_t i = 0; i < inner; ++i)
      sum[i] += std::exp(double(x[k * inner + i]) - max[i]);
  if (log) {
    for (int64_t i = 0; i < inner; ++i)
      max[i] += std::log(sum[i]);
    for (int64_t k = 0; k < length; ++k)
      for (int64_t i = 0; i < inner; ++i)
        y[k * inner + i] = T(double(x[k * inner + i]) - max[i]);
  } else {
    for (int64_t k = 0; k < length; ++k)
      for (int64_t i = 0; i < inner; ++i)
        y[k * inner + i] =
            T(std::exp(double(x[k * inner + i]) - max[i]) / sum[i]);
  }
}

absl::Status softmaxKernel(const KernelContext &ctx, bool log) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
  AxisSplit split = splitAtAxis(x.shape(), axisOf(ctx));
  return dispatchFloat(x.dtype(), ctx.op().kind(), [&]<typename T>() {
    if (x.numel() == 0)
      return;
    const T *px = x.data<T>();
    T *py = y.data<T>();
    int64_t block = split.axis * split.inner;
    if (split.inner == 1) {
      std::vector<double> exps(static_cast<size_t>(split.axis));
      for (int64_t o = 0; o < split.outer; ++o)
        softmaxLine(px + o * block, py + o * block, split.axis, log, exps);
      return;
    }
    std::vector<double> max(static_cast<size_t>(split.inner));
    std::vector<double> sum(static_cast<size_t>(split.inner));
    for (int64_t o = 0; o < split.outer; ++o)
      softmaxBlock(px + o * block, py + o * block, split.axis, split.inner, log,
                   max, sum);
  });
}

/// softmax_grad: dx = y * (dy - sum(dy * y)); log_softmax_grad:
/// dx = dy - exp(y) * sum(dy). Sums run along dim 0 of each [axis, inner]
/// block, all `inner` lines together.
absl::Status softmaxGradKernel(const KernelContext &ctx, bool log) {
  const Tensor &y = ctx.operand(0);
  const Tensor &dy = ctx.operand(1);
  const Tensor &dx = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), y.dtype(), {dy, dx}));
  AxisSplit split = splitAtAxis(y.shape(), axisOf(ctx));
  return dispatchFloat(y.dtype(), ctx.op().kind(), [&]<typename T>() {
    if (y.numel() == 0)
      return;
    int64_t length = split.axis, inner = split.inner;
    std::vector<double> sum(static_cast<size_t>(inner));
    for (int64_t o = 0; o < split.outer; ++o) {
      int64_t base = o * length * inner;
      const T *py = y.data<T>() + base;
      const T *pdy = dy.data<T>() + base;
      T *pdx = dx.data<T>() + base;
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int64_t k = 0; k < length; ++k)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t e = k * inner + i;
          sum[i] += log ? double(pdy[e]) : double(pdy[e]) * double(py[e]);
        }
      for (int64_t k = 0; k < length; ++k)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t e = k * inner + i;
          double ye = py[e], dye = pdy[e];
          pdx[e] = T(log ? dye - std::exp(ye) * sum[i] : ye * (dye - sum[i]));
        }
    }
  });
}

/// Entries [..., i, j] with j > i become `value`; the rest are copied.
absl::Status causalMask(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
  double value = ctx.signature().getFloat("value");
  llvm::ArrayRef<int64_t> shape = x.shape();
  int64_t rows = shape[shape.size() - 2];
  int64_t cols = shape.back();
  int64_t batches = product(shape.drop_back(2));
  return dispatchFloat(x.dtype(), ctx.op().kind(), [&]<typename T>() {
    const T *px = x.data<T>();
    T *py = y.data<T>();
    T fill = fromDouble<T>(value);
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < rows; ++i) {
        int64_t row = (b * rows + i) * cols;
        int64_t kept = std::min(cols, i + 1);
        for (int64_t j = 0; j < kept; ++j)
          py[row + j] = px[row + j];
        for (int64_t j = kept; j < cols; ++j)
          py[row + j] = fill;
      }
    }
  });
}

} // namespace

void registerSoftmaxKernels(OpRegistry &registry) {
  registry.setKernel("softmax", {[](const KernelContext &ctx) {
                       return softmaxKernel(ctx, /*log=*/false);
                     }});
  registry.setKernel("log_softmax", {[](const KernelContext &ctx) {
                       return softmaxKernel(ctx, /*log=*/true);
                     }});
  registry.setKernel("softmax_grad", {[](const KernelContext &ctx) {
                       return softmaxGradKernel(ctx, /*log=*/false);
                     }});
  registry.setKernel("log_softmax_grad", {[](const KernelContext &ctx) {
                       return softmaxGradKernel(ctx, /*log=*/true);
                     }});
  registry.setKernel("causal_mask", {causalMask});
}

} // namespace remat

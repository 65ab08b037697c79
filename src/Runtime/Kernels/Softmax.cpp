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
/// first, so large logits do not overflow.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>
#include <limits>
#include <vector>

namespace remat {
using namespace kernels;

namespace {

/// Calls `fn(base, stride)` for every line along `axis` of a dense tensor of
/// `shape`: the line's elements are at base + k * stride, k < shape[axis].
template <typename Fn>
void forEachLine(llvm::ArrayRef<int64_t> shape, unsigned axis, Fn fn) {
  AxisSplit split = splitAtAxis(shape, axis);
  if (split.axis == 0)
    return;
  for (int64_t o = 0; o < split.outer; ++o)
    for (int64_t i = 0; i < split.inner; ++i)
      fn(o * split.axis * split.inner + i, split.inner);
}

unsigned axisOf(const KernelContext &ctx) {
  return normalizeAxis(ctx.signature().getInt("axis"),
                       ctx.operand(0).type().rank());
}

absl::Status softmaxKernel(const KernelContext &ctx, bool log) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
  unsigned axis = axisOf(ctx);
  return dispatchFloat(x.dtype(), ctx.op().kind(), [&]<typename T>() {
    const T *px = x.data<T>();
    T *py = y.data<T>();
    int64_t length = x.shape()[axis];
    std::vector<double> exps(static_cast<size_t>(length));
    forEachLine(x.shape(), axis, [&](int64_t base, int64_t stride) {
      const T *line = px + base;
      T *out = py + base;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < length; ++k)
        max = std::max(max, double(line[k * stride]));
      double sum = 0;
      for (int64_t k = 0; k < length; ++k) {
        exps[k] = std::exp(double(line[k * stride]) - max);
        sum += exps[k];
      }
      if (log) {
        double shift = max + std::log(sum);
        for (int64_t k = 0; k < length; ++k)
          out[k * stride] = T(double(line[k * stride]) - shift);
      } else {
        for (int64_t k = 0; k < length; ++k)
          out[k * stride] = T(exps[k] / sum);
      }
    });
  });
}

/// softmax_grad: dx = y * (dy - sum(dy * y)); log_softmax_grad:
/// dx = dy - exp(y) * sum(dy).
absl::Status softmaxGradKernel(const KernelContext &ctx, bool log) {
  const Tensor &y = ctx.operand(0);
  const Tensor &dy = ctx.operand(1);
  const Tensor &dx = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), y.dtype(), {dy, dx}));
  unsigned axis = axisOf(ctx);
  return dispatchFloat(y.dtype(), ctx.op().kind(), [&]<typename T>() {
    const T *py = y.data<T>();
    const T *pdy = dy.data<T>();
    T *pdx = dx.data<T>();
    int64_t length = y.shape()[axis];
    forEachLine(y.shape(), axis, [&](int64_t base, int64_t stride) {
      double sum = 0;
      for (int64_t k = 0, i = base; k < length; ++k, i += stride)
        sum += log ? double(pdy[i]) : double(pdy[i]) * double(py[i]);
      for (int64_t k = 0, i = base; k < length; ++k, i += stride) {
        double yi = py[i], dyi = pdy[i];
        pdx[i] = T(log ? dyi - std::exp(yi) * sum : yi * (dyi - sum));
      }
    });
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

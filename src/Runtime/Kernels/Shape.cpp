//===- Shape.cpp - Kernels of the Shape family -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Data movement: transpose, broadcast, concat, split, slice, slice_grad and
/// pad. Each is one or more strided copies between dense row-major buffers,
/// on any dtype including bool. reshape is a view and has no kernel.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>

namespace remat {
using namespace kernels;

namespace {

/// Copies the elements of a region of `shape` from `src` (element at index i
/// is `srcBase + sum i[d] * srcStrides[d]`) to `dst` likewise.
template <typename T>
void copyStrided(llvm::ArrayRef<int64_t> shape, const T *src,
                 llvm::ArrayRef<int64_t> srcStrides, int64_t srcBase, T *dst,
                 llvm::ArrayRef<int64_t> dstStrides, int64_t dstBase) {
  forEachRow<2>(shape, {srcStrides, dstStrides}, {srcBase, dstBase},
                [&](std::array<int64_t, 2> offsets, int64_t n,
                    std::array<int64_t, 2> strides) {
                  const T *from = src + offsets[0];
                  T *to = dst + offsets[1];
                  if (strides[0] == 1 && strides[1] == 1) {
                    std::copy_n(from, n, to);
                  } else if (strides[0] == 0) {
                    std::fill_n(to, n, *from);
                  } else {
                    for (int64_t i = 0; i < n; ++i)
                      to[i * strides[1]] = from[i * strides[0]];
                  }
                });
}

/// A kernel running `body.template operator()<T>()` for operand 0's dtype,
/// after checking that every operand and result has that dtype.
template <typename Body> absl::Status movement(const KernelContext &ctx, Body body) {
  DType dtype = ctx.operand(0).dtype();
  for (unsigned i = 0; i < ctx.numOperands(); ++i)
    REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), dtype, {ctx.operand(i)}));
  for (unsigned i = 0; i < ctx.numResults(); ++i)
    REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), dtype, {ctx.result(i)}));
  return dispatchAny(dtype, ctx.op().kind(), body);
}

absl::Status transpose(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  llvm::ArrayRef<int64_t> perm = ctx.signature().getIntList("perm");
  Dims xStrides = rowMajorStrides(x.shape());
  Dims srcStrides;
  for (int64_t p : perm)
    srcStrides.push_back(xStrides[normalizeAxis(p, x.type().rank())]);
  Dims dstStrides = rowMajorStrides(y.shape());
  return movement(ctx, [&]<typename T>() {
    copyStrided(y.shape(), x.data<T>(), srcStrides, 0, y.data<T>(), dstStrides,
                0);
  });
}

absl::Status broadcast(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  Dims srcStrides = broadcastStrides(x.shape(), y.shape());
  Dims dstStrides = rowMajorStrides(y.shape());
  return movement(ctx, [&]<typename T>() {
    copyStrided(y.shape(), x.data<T>(), srcStrides, 0, y.data<T>(), dstStrides,
                0);
  });
}

absl::Status concat(const KernelContext &ctx) {
  const Tensor &y = ctx.result();
  unsigned axis = normalizeAxis(ctx.signature().getInt("axis"), y.type().rank());
  Dims yStrides = rowMajorStrides(y.shape());
  return movement(ctx, [&]<typename T>() {
    int64_t start = 0;
    for (unsigned k = 0; k < ctx.numOperands(); ++k) {
      const Tensor &x = ctx.operand(k);
      copyStrided(x.shape(), x.data<T>(), rowMajorStrides(x.shape()), 0,
                  y.data<T>(), yStrides, start * yStrides[axis]);
      start += x.shape()[axis];
    }
  });
}

absl::Status split(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  unsigned axis = normalizeAxis(ctx.signature().getInt("axis"), x.type().rank());
  Dims xStrides = rowMajorStrides(x.shape());
  return movement(ctx, [&]<typename T>() {
    int64_t start = 0;
    for (unsigned k = 0; k < ctx.numResults(); ++k) {
      const Tensor &y = ctx.result(k);
      copyStrided(y.shape(), x.data<T>(), xStrides, start * xStrides[axis],
                  y.data<T>(), rowMajorStrides(y.shape()), 0);
      start += y.shape()[axis];
    }
  });
}

/// The strides and base offset of a strided window of a dense tensor of
/// `shape`: per dim, `starts[d]` then every `steps[d]`-th element (all 1 when
/// `steps` is empty).
struct Window {
  Dims strides;
  int64_t base = 0;
};
Window stridedWindow(llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> starts,
                     llvm::ArrayRef<int64_t> steps) {
  Window window;
  window.strides = rowMajorStrides(shape);
  for (unsigned d = 0; d < shape.size(); ++d) {
    window.base += starts[d] * window.strides[d];
    window.strides[d] *= steps.empty() ? 1 : steps[d];
  }
  return window;
}

absl::Status slice(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  Window window = stridedWindow(x.shape(), ctx.signature().getIntList("starts"),
                                ctx.signature().getIntList("steps"));
  Dims yStrides = rowMajorStrides(y.shape());
  return movement(ctx, [&]<typename T>() {
    copyStrided(y.shape(), x.data<T>(), window.strides, window.base,
                y.data<T>(), yStrides, 0);
  });
}

absl::Status sliceGrad(const KernelContext &ctx) {
  const Tensor &dy = ctx.operand(0);
  const Tensor &dx = ctx.result();
  Window window =
      stridedWindow(dx.shape(), ctx.signature().getIntList("starts"),
                    ctx.signature().getIntList("steps"));
  Dims dyStrides = rowMajorStrides(dy.shape());
  return movement(ctx, [&]<typename T>() {
    std::fill_n(dx.data<T>(), dx.numel(), T(0));
    copyStrided(dy.shape(), dy.data<T>(), dyStrides, 0, dx.data<T>(),
                window.strides, window.base);
  });
}

absl::Status pad(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  double value = ctx.signature().getFloat("value");
  Window window = stridedWindow(y.shape(), ctx.signature().getIntList("low"),
                                /*steps=*/{});
  Dims xStrides = rowMajorStrides(x.shape());
  return movement(ctx, [&]<typename T>() {
    std::fill_n(y.data<T>(), y.numel(), fromDouble<T>(value));
    copyStrided(x.shape(), x.data<T>(), xStrides, 0, y.data<T>(),
                window.strides, window.base);
  });
}

} // namespace

void registerShapeKernels(OpRegistry &registry) {
  registry.setKernel("transpose", {transpose});
  registry.setKernel("broadcast", {broadcast});
  registry.setKernel("concat", {concat});
  registry.setKernel("split", {split});
  registry.setKernel("slice", {slice});
  registry.setKernel("slice_grad", {sliceGrad});
  registry.setKernel("pad", {pad});
}

} // namespace remat

//===- Indexing.cpp - Kernels of the Indexing family -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// embedding, gather and gather_grad. Every index is checked against its
/// range before use; a bad one fails the op ("embedding id 57 is out of
/// range [0, 50)"). gather_grad adds dy's slices into the result in index
/// order, accumulating f32 in double and rounding once.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <vector>

namespace remat {
using namespace kernels;

namespace {

/// The indices as int64, or an error naming `what` ("embedding id") for the
/// first one outside [0, bound).
absl::StatusOr<std::vector<int64_t>> readIndices(const KernelContext &ctx,
                                                 const Tensor &indices,
                                                 int64_t bound,
                                                 llvm::StringRef what) {
  std::vector<int64_t> result(size_t(indices.numel()));
  REMAT_RETURN_IF_ERROR(
      dispatchIndex(indices.dtype(), ctx.op().kind(), [&]<typename I>() {
        const I *p = indices.data<I>();
        for (size_t k = 0; k < result.size(); ++k)
          result[k] = int64_t(p[k]);
      }));
  for (int64_t index : result)
    if (index < 0 || index >= bound)
      return invalidArgument("{} {} is out of range [0, {})", what.str(), index,
                             bound);
  return result;
}

/// y[o, k, :] = x[o, indices[k], :] with x viewed as [outer, axis, inner].
absl::Status gatherSlices(const KernelContext &ctx, const Tensor &x,
                          unsigned axis, const Tensor &indicesTensor,
                          llvm::StringRef what) {
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
  AxisSplit split = splitAtAxis(x.shape(), axis);
  REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> indices,
                         readIndices(ctx, indicesTensor, split.axis, what));
  int64_t count = int64_t(indices.size());
  return dispatchAny(x.dtype(), ctx.op().kind(), [&]<typename T>() {
    if (y.numel() == 0)
      return;
    const T *px = x.data<T>();
    T *py = y.data<T>();
    for (int64_t o = 0; o < split.outer; ++o)
      for (int64_t k = 0; k < count; ++k)
        std::copy_n(px + (o * split.axis + indices[k]) * split.inner,
                    split.inner, py + (o * count + k) * split.inner);
  });
}

absl::Status embedding(const KernelContext &ctx) {
  return gatherSlices(ctx, ctx.operand(0), /*axis=*/0, ctx.operand(1),
                      "embedding id");
}

absl::Status gather(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  unsigned axis = normalizeAxis(ctx.signature().getInt("axis"), x.type().rank());
  return gatherSlices(ctx, x, axis, ctx.operand(1), "gather index");
}

/// dx = zeros of [outer, size, inner]; dx[o, indices[k], :] += dy[o, k, :].
absl::Status gatherGrad(const KernelContext &ctx) {
  const Tensor &indicesTensor = ctx.operand(0);
  const Tensor &dy = ctx.operand(1);
  const Tensor &dx = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), dy.dtype(), {dx}));
  unsigned axis = normalizeAxis(ctx.signature().getInt("axis"), dx.type().rank());
  AxisSplit split = splitAtAxis(dx.shape(), axis);
  REMAT_ASSIGN_OR_RETURN(
      std::vector<int64_t> indices,
      readIndices(ctx, indicesTensor, split.axis, "gather_grad index"));
  int64_t count = int64_t(indices.size());
  return dispatchFloat(dy.dtype(), ctx.op().kind(), [&]<typename T>() {
    std::vector<double> acc(size_t(dx.numel()), 0.0);
    const T *pdy = dy.data<T>();
    for (int64_t o = 0; o < split.outer; ++o) {
      for (int64_t k = 0; k < count; ++k) {
        double *to = acc.data() + (o * split.axis + indices[k]) * split.inner;
        const T *from = pdy + (o * count + k) * split.inner;
        for (int64_t i = 0; i < split.inner; ++i)
          to[i] += double(from[i]);
      }
    }
    T *pdx = dx.data<T>();
    for (size_t i = 0; i < acc.size(); ++i)
      pdx[i] = T(acc[i]);
  });
}

} // namespace

void registerIndexingKernels(OpRegistry &registry) {
  registry.setKernel("embedding", {embedding});
  registry.setKernel("gather", {gather});
  registry.setKernel("gather_grad", {gatherGrad});
}

} // namespace remat

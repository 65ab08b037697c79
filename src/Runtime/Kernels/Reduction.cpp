//===- Reduction.cpp - Kernels of the Reduction family ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// reduce_sum, reduce_mean, reduce_max and reduce_max_grad. x is walked once
/// in row-major order, each element folded into its group's accumulator, so
/// every group sums its elements in increasing index order whatever the axes.
/// Float sums accumulate in double and round once; integer sums wrap. The
/// mean of an empty group is NaN and its max is -inf (the integer minimum
/// for integers).
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "llvm/ADT/BitVector.h"

#include <limits>
#include <vector>

namespace remat {
using namespace kernels;

namespace {

/// Where each element of x goes: x's row-major strides, and strides into the
/// dense result that are 0 along reduced dims.
struct ReductionLayout {
  Dims xStrides;
  Dims groupStrides;
  int64_t groups;
  /// Elements per group.
  int64_t groupSize;
};

ReductionLayout reductionLayout(const KernelContext &ctx) {
  llvm::ArrayRef<int64_t> shape = ctx.operand(0).shape();
  unsigned rank = shape.size();
  llvm::ArrayRef<int64_t> axes = ctx.signature().getIntList("axes");
  llvm::BitVector reduced(rank, axes.empty());
  for (int64_t axis : axes)
    reduced.set(normalizeAxis(axis, rank));
  ReductionLayout layout;
  layout.xStrides = rowMajorStrides(shape);
  layout.groupStrides.assign(rank, 0);
  layout.groups = 1;
  layout.groupSize = 1;
  for (unsigned d = rank; d-- > 0;) {
    if (reduced.test(d)) {
      layout.groupSize *= shape[d];
    } else {
      layout.groupStrides[d] = layout.groups;
      layout.groups *= shape[d];
    }
  }
  return layout;
}

/// Calls `fold(A &acc, T value)` for every element of x, in row-major order,
/// with its group's accumulator in `acc` (one per group).
template <typename T, typename A, typename Fold>
void foldGroups(const Tensor &x, const ReductionLayout &layout,
                std::vector<A> &acc, Fold fold) {
  const T *px = x.data<T>();
  forEachRow<2>(x.shape(), {layout.xStrides, layout.groupStrides}, {0, 0},
                [&](std::array<int64_t, 2> offsets, int64_t n,
                    std::array<int64_t, 2> strides) {
                  const T *row = px + offsets[0];
                  A *groups = acc.data() + offsets[1];
                  if (strides[1] == 0) {
                    A a = *groups;
                    for (int64_t i = 0; i < n; ++i)
                      fold(a, row[i * strides[0]]);
                    *groups = a;
                  } else {
                    for (int64_t i = 0; i < n; ++i)
                      fold(groups[i * strides[1]], row[i * strides[0]]);
                  }
                });
}

absl::Status reduceSumOrMean(const KernelContext &ctx, bool mean) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
  ReductionLayout layout = reductionLayout(ctx);
  auto body = [&]<typename T>() {
    using A = AccumulatorT<T>;
    std::vector<A> acc(size_t(layout.groups), A(0));
    foldGroups<T>(x, layout, acc, [](A &a, T v) { a += A(v); });
    T *out = y.data<T>();
    for (int64_t g = 0; g < layout.groups; ++g) {
      if constexpr (std::is_integral_v<T>)
        out[g] = T(acc[g]);
      else
        out[g] = T(mean ? acc[g] / double(layout.groupSize) : acc[g]);
    }
  };
  if (mean)
    return dispatchFloat(x.dtype(), ctx.op().kind(), body);
  return dispatchNumeric(x.dtype(), ctx.op().kind(), body);
}

/// The fold of reduce_max: NaN wins, then the larger value.
template <typename T> void foldMax(T &m, T v) {
  if constexpr (std::is_integral_v<T>) {
    if (v > m)
      m = v;
  } else {
    if (v > m || std::isnan(v))
      m = std::isnan(m) ? m : v;
  }
}

template <typename T> T lowest() {
  if constexpr (std::is_integral_v<T>)
    return std::numeric_limits<T>::min();
  else
    return -std::numeric_limits<T>::infinity();
}

absl::Status reduceMax(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
  ReductionLayout layout = reductionLayout(ctx);
  return dispatchNumeric(x.dtype(), ctx.op().kind(), [&]<typename T>() {
    std::vector<T> acc(size_t(layout.groups), lowest<T>());
    foldGroups<T>(x, layout, acc, foldMax<T>);
    std::copy(acc.begin(), acc.end(), y.data<T>());
  });
}

/// dx = dy / count at the positions where x equals its group's max y, where
/// count is the number of such positions in the group; 0 elsewhere.
absl::Status reduceMaxGrad(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.operand(1);
  const Tensor &dy = ctx.operand(2);
  const Tensor &dx = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y, dy, dx}));
  ReductionLayout layout = reductionLayout(ctx);
  return dispatchFloat(x.dtype(), ctx.op().kind(), [&]<typename T>() {
    // Pack each group's max with its tie count so that one fold counts them.
    struct Group {
      T max;
      int64_t ties;
    };
    std::vector<Group> groups(size_t(layout.groups));
    const T *py = y.data<T>();
    for (int64_t g = 0; g < layout.groups; ++g)
      groups[g] = {py[g], 0};
    foldGroups<T>(x, layout, groups, [](Group &g, T v) { g.ties += v == g.max; });
    const T *pdy = dy.data<T>();
    const T *px = x.data<T>();
    T *pdx = dx.data<T>();
    Dims dxStrides = rowMajorStrides(dx.shape());
    forEachRow<3>(x.shape(), {layout.xStrides, layout.groupStrides, dxStrides},
                  {0, 0, 0},
                  [&](std::array<int64_t, 3> offsets, int64_t n,
                      std::array<int64_t, 3> strides) {
                    for (int64_t i = 0; i < n; ++i) {
                      int64_t g = offsets[1] + i * strides[1];
                      T v = px[offsets[0] + i * strides[0]];
                      pdx[offsets[2] + i * strides[2]] =
                          v == groups[g].max ? pdy[g] / T(groups[g].ties)
                                             : T(0);
                    }
                  });
  });
}

} // namespace

void registerReductionKernels(OpRegistry &registry) {
  registry.setKernel("reduce_sum", {[](const KernelContext &ctx) {
                       return reduceSumOrMean(ctx, /*mean=*/false);
                     }});
  registry.setKernel("reduce_mean", {[](const KernelContext &ctx) {
                       return reduceSumOrMean(ctx, /*mean=*/true);
                     }});
  registry.setKernel("reduce_max", {reduceMax});
  registry.setKernel("reduce_max_grad", {reduceMaxGrad});
}

} // namespace remat

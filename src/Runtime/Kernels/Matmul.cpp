//===- Matmul.cpp - Kernels of the Matmul family --------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Batched matmul: one Eigen product of row-major matrix views per element of
/// the broadcast batch (a single product when b is shared by an untransposed
/// batch of a); a transposed operand is read through a transposed view, never
/// copied. Float only (f32, f64), like the op: an integer tensor
/// is an error.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "remat/Runtime/Kernel.h"
#include "remat/Support/Status.h"

#include <Eigen/Core>

#include <algorithm>
#include <array>

namespace remat {
using namespace kernels;

template <typename T>
using RowMatrix =
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// result = op(a) * op(b) for one matrix of each, row-major.
template <typename T>
static void multiply(const T *a, int64_t aRows, int64_t aCols, bool transposeA,
                     const T *b, int64_t bRows, int64_t bCols, bool transposeB,
                     T *result) {
  using ConstView = Eigen::Map<const RowMatrix<T>>;
  ConstView lhs(a, aRows, aCols);
  ConstView rhs(b, bRows, bCols);
  Eigen::Map<RowMatrix<T>> out(result, transposeA ? aCols : aRows,
                               transposeB ? bRows : bCols);
  if (transposeA && transposeB)
    out.noalias() = lhs.transpose() * rhs.transpose();
  else if (transposeA)
    out.noalias() = lhs.transpose() * rhs;
  else if (transposeB)
    out.noalias() = lhs * rhs.transpose();
  else
    out.noalias() = lhs * rhs;
}

static absl::Status runMatmul(const KernelContext &ctx) {
  const Tensor &a = ctx.operand(0);
  const Tensor &b = ctx.operand(1);
  const Tensor &result = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType("matmul", a.dtype(), {b, result}));
  if (a.shape().size() < 2 || b.shape().size() < 2 || result.shape().size() < 2)
    return invalidArgument("'matmul' needs operands of rank >= 2");
  bool transposeA = ctx.signature().getBool("transpose_a");
  bool transposeB = ctx.signature().getBool("transpose_b");
  int64_t aRows = a.shape().end()[-2], aCols = a.shape().back();
  int64_t bRows = b.shape().end()[-2], bCols = b.shape().back();
  int64_t contracted = transposeA ? aRows : aCols;
  llvm::ArrayRef<int64_t> batch = result.shape().drop_back(2);
  // Element strides of each operand's matrices along the broadcast batch.
  std::array<Dims, 3> strides = {
      broadcastStrides(a.shape().drop_back(2), batch),
      broadcastStrides(b.shape().drop_back(2), batch), rowMajorStrides(batch)};
  std::array<int64_t, 3> matrixSizes = {aRows * aCols, bRows * bCols,
                                        product(result.shape().take_back(2))};
  for (size_t k = 0; k < 3; ++k)
    for (int64_t &stride : strides[k])
      stride *= matrixSizes[k];
  // One matrix b for a whole untransposed batch of a: the batch stacks into
  // the rows of a single product.
  bool foldBatch = !transposeA && a.shape().drop_back(2) == batch &&
                   product(b.shape().drop_back(2)) == 1;
  return dispatchFloat(a.dtype(), "matmul", [&]<typename T>() {
    if (result.numel() == 0)
      return;
    T *out = result.data<T>();
    if (contracted == 0) {
      std::fill(out, out + result.numel(), T(0));
      return;
    }
    const T *aData = a.data<T>();
    const T *bData = b.data<T>();
    if (foldBatch) {
      multiply(aData, product(batch) * aRows, aCols, false, bData, bRows, bCols,
               transposeB, out);
      return;
    }
    forEachRow<3>(batch, {strides[0], strides[1], strides[2]}, {0, 0, 0},
                  [&](std::array<int64_t, 3> offsets, int64_t length,
                      std::array<int64_t, 3> step) {
                    for (int64_t i = 0; i < length; ++i)
                      multiply(aData + offsets[0] + i * step[0], aRows, aCols,
                               transposeA, bData + offsets[1] + i * step[1],
                               bRows, bCols, transposeB,
                               out + offsets[2] + i * step[2]);
                  });
  });
}

void registerMatmulKernels(OpRegistry &registry) {
  registry.setKernel("matmul", {runMatmul});
}

} // namespace remat

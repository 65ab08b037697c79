//===- Folding.h - Evaluating ONNX nodes at import time ----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The arithmetic of shape chains (Shape -> Gather -> Concat -> Reshape and
/// the like) on tensors known at import time, so that the graph gets static
/// attributes instead of runtime shape computations. Private to src/IO/Onnx.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNX_FOLDING_H
#define REMAT_SRC_IO_ONNX_FOLDING_H

#include "ImportContext.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace remat::onnximport {

/// `a op b` with numpy broadcasting; `op` sees doubles for floats and the
/// integer path `intOp` for integers.
absl::StatusOr<KnownTensor>
foldBinary(const ImportContext &ctx, const KnownTensor &a, const KnownTensor &b,
           llvm::function_ref<double(double, double)> floatOp,
           llvm::function_ref<int64_t(int64_t, int64_t)> intOp);

/// Entries of `data` along `axis` at `indices` (negative ones count from the
/// end), as ONNX Gather.
absl::StatusOr<KnownTensor> foldGather(const ImportContext &ctx,
                                       const KnownTensor &data,
                                       const KnownTensor &indices, int64_t axis);

/// The tensors joined along `axis`.
absl::StatusOr<KnownTensor> foldConcat(const ImportContext &ctx,
                                       llvm::ArrayRef<KnownTensor> parts,
                                       int64_t axis);

/// The strided window of `data`: per dim, starts[d], +steps[d], below ends[d]
/// (already clamped, steps positive).
KnownTensor foldSlice(const KnownTensor &data, llvm::ArrayRef<int64_t> starts,
                      llvm::ArrayRef<int64_t> ends,
                      llvm::ArrayRef<int64_t> steps);

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

} // namespace remat::onnximport

#endif // REMAT_SRC_IO_ONNX_FOLDING_H

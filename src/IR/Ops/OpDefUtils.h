//===- OpDefUtils.h - Shared pieces of op definitions ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Helpers that several op families use to write shape inference and cost
/// rules: broadcasting, axis normalisation, dtype checks and common FLOP rules.
/// Private to src/IR/Ops.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IR_OPS_OPDEFUTILS_H
#define REMAT_SRC_IR_OPS_OPDEFUTILS_H

#include "remat/IR/OpRegistry.h"
#include "remat/Support/Status.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/SmallVector.h"

#include <array>

namespace remat::ops {

using Shape = llvm::SmallVector<int64_t, 4>;
using TypeList = llvm::SmallVector<Type, 1>;

/// The numpy broadcast of two shapes, or an error naming both.
absl::StatusOr<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                      llvm::ArrayRef<int64_t> b);

/// Maps `axis` in [-rank, rank) to [0, rank); an error names `opName`.
absl::StatusOr<unsigned> normalizeAxis(llvm::StringRef opName, int64_t axis,
                                       unsigned rank);

/// Fails unless operand `index` of `sig` has a floating-point dtype.
absl::Status expectFloat(const OpSignature &sig, unsigned index);
/// Fails unless operand `index` of `sig` has an integer dtype.
absl::Status expectInteger(const OpSignature &sig, unsigned index);
/// Fails unless every operand of `sig` has the dtype of operand 0.
absl::Status expectSameDType(const OpSignature &sig);
/// Fails unless operand `index` of `sig` has rank `rank`.
absl::Status expectRank(const OpSignature &sig, unsigned index, unsigned rank);

/// Result type: operand 0's type unchanged.
absl::StatusOr<TypeList> inferSameAsFirst(const OpSignature &sig);

/// Cost rule: `perElement` FLOPs per element of result 0.
FlopsFn flopsPerResultElement(int64_t perElement);
/// Cost rule: no arithmetic (views, data movement, declarations).
int64_t zeroFlops(const OpSignature &, llvm::ArrayRef<Type>);

/// Text form of a shape for messages, e.g. `[32,784]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Fails unless operand `index` of `sig` has rank at least `minRank`.
absl::Status expectMinRank(const OpSignature &sig, unsigned index,
                           unsigned minRank);

/// `a * b` for non-negative figures, clamped to INT64_MAX: the FLOPs of types
/// that fit in memory can still exceed int64 (an f16[2^62] softmax).
int64_t saturatingMul(int64_t a, int64_t b);

/// Cost rule: `perElement` FLOPs per element of operand `index`, saturating.
FlopsFn flopsPerOperandElement(unsigned index, int64_t perElement);

/// The int-list attribute `name` as an [h, w] pair (strides, padding, ...);
/// fails unless it has exactly two entries, each at least `minValue`.
absl::StatusOr<std::array<int64_t, 2>>
intPairAttr(const OpSignature &sig, llvm::StringRef name, int64_t minValue);

/// The number of positions of a sliding window along one spatial dim,
/// (in + 2*pad - dilation*(kernel-1) - 1) / stride + 1. Fails, naming
/// `dimName` ("height"), when the dilated window does not fit the padded input
/// or the arithmetic overflows int64. Expects kernel, stride, dilation >= 1 and
/// pad >= 0.
absl::StatusOr<int64_t> windowOutputSize(const OpSignature &sig,
                                         llvm::StringRef dimName, int64_t in,
                                         int64_t kernel, int64_t stride,
                                         int64_t pad, int64_t dilation);

/// Fails unless operand `index` of `sig` has exactly `shape`; `why` says where
/// the expected shape comes from ("the last dim of x").
absl::Status expectShape(const OpSignature &sig, unsigned index,
                         llvm::ArrayRef<int64_t> shape, llvm::StringRef why);

} // namespace remat::ops

#endif // REMAT_SRC_IR_OPS_OPDEFUTILS_H

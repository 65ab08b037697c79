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

} // namespace remat::ops

#endif // REMAT_SRC_IR_OPS_OPDEFUTILS_H

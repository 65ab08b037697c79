//===- Type.h - Tensor types: dtype and static shape -------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A tensor type is an element type and a fully static shape. Sizes are checked
/// for overflow: `byteSize()` is only meaningful on a type whose
/// `checkedByteSize()` succeeded (the verifier guarantees this).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_TYPE_H
#define REMAT_IR_TYPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace remat {

/// Element types. Printed in the text format by `dtypeName`.
enum class DType : uint8_t { F32, F64, F16, BF16, I8, I32, I64, Bool };

/// The text-format spelling of a dtype ("f32", "i64", "bool", ...).
llvm::StringRef dtypeName(DType dtype);
/// Parses a dtype spelling; nullopt if unknown.
std::optional<DType> parseDType(llvm::StringRef name);
/// Storage size of one element in bytes (bool takes one byte).
int64_t dtypeBytes(DType dtype);
/// True for f32, f64, f16 and bf16: the types that carry gradients.
bool isFloatDType(DType dtype);

/// What a type is, stored once per process for each distinct dtype and
/// shape (`Type`): its element count is counted once.
struct TypeStorage {
  DType dtype;
  llvm::SmallVector<int64_t, 4> shape;
  /// Nullopt on a negative dimension or int64 overflow.
  std::optional<int64_t> numElements;
};

/// A dtype plus a static shape; rank 0 is a scalar. A pointer to storage
/// shared by every equal type, as MLIR's types are: copying and comparing a
/// type cost a pointer, and a million values hold no shape each. Storage
/// lives until the process ends.
class Type {
public:
  /// The scalar f32.
  Type();
  Type(DType dtype, llvm::ArrayRef<int64_t> shape);

  /// A scalar of the given dtype.
  static Type scalar(DType dtype) { return Type(dtype, {}); }

  DType dtype() const { return storage_->dtype; }
  llvm::ArrayRef<int64_t> shape() const { return storage_->shape; }
  unsigned rank() const { return storage_->shape.size(); }
  bool isScalar() const { return storage_->shape.empty(); }
  bool isFloat() const { return isFloatDType(dtype()); }
  /// Dimension `i`; negative `i` counts from the back.
  int64_t dim(int i) const { return shape()[i < 0 ? i + rank() : i]; }

  /// Number of elements; nullopt on a negative dimension or int64 overflow.
  std::optional<int64_t> checkedNumElements() const {
    return storage_->numElements;
  }
  /// Bytes of storage; nullopt on a negative dimension or int64 overflow.
  std::optional<int64_t> checkedByteSize() const;
  /// Number of elements of a type known to be valid.
  int64_t numElements() const;
  /// Bytes of storage of a type known to be valid.
  int64_t byteSize() const { return numElements() * dtypeBytes(dtype()); }

  /// The same shape with another dtype.
  Type withDType(DType dtype) const { return Type(dtype, shape()); }

  /// Text form, e.g. `f32[32,784]` or `f32[]`.
  std::string str() const;

  friend bool operator==(const Type &a, const Type &b) {
    return a.storage_ == b.storage_;
  }
  friend bool operator!=(const Type &a, const Type &b) { return !(a == b); }

private:
  const TypeStorage *storage_;
};

} // namespace remat

#endif // REMAT_IR_TYPE_H

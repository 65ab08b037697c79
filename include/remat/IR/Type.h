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

/// A dtype plus a static shape; rank 0 is a scalar.
class Type {
public:
  Type() = default;
  Type(DType dtype, llvm::ArrayRef<int64_t> shape)
      : dtype_(dtype), shape_(shape.begin(), shape.end()) {}

  /// A scalar of the given dtype.
  static Type scalar(DType dtype) { return Type(dtype, {}); }

  DType dtype() const { return dtype_; }
  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  unsigned rank() const { return shape_.size(); }
  bool isScalar() const { return shape_.empty(); }
  bool isFloat() const { return isFloatDType(dtype_); }
  /// Dimension `i`; negative `i` counts from the back.
  int64_t dim(int i) const { return shape_[i < 0 ? i + rank() : i]; }

  /// Number of elements; nullopt on a negative dimension or int64 overflow.
  std::optional<int64_t> checkedNumElements() const;
  /// Bytes of storage; nullopt on a negative dimension or int64 overflow.
  std::optional<int64_t> checkedByteSize() const;
  /// Number of elements of a type known to be valid.
  int64_t numElements() const;
  /// Bytes of storage of a type known to be valid.
  int64_t byteSize() const { return numElements() * dtypeBytes(dtype_); }

  /// The same shape with another dtype.
  Type withDType(DType dtype) const { return Type(dtype, shape_); }

  /// Text form, e.g. `f32[32,784]` or `f32[]`.
  std::string str() const;

  friend bool operator==(const Type &a, const Type &b) {
    return a.dtype_ == b.dtype_ && a.shape_ == b.shape_;
  }
  friend bool operator!=(const Type &a, const Type &b) { return !(a == b); }

private:
  DType dtype_ = DType::F32;
  llvm::SmallVector<int64_t, 4> shape_;
};

} // namespace remat

#endif // REMAT_IR_TYPE_H

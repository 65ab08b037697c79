//===- Type.cpp - Tensor types ----------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Type.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <cassert>

namespace remat {

llvm::StringRef dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I8: return "i8";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::Bool: return "bool";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("f32", DType::F32)
      .Case("f64", DType::F64)
      .Case("f16", DType::F16)
      .Case("bf16", DType::BF16)
      .Case("i8", DType::I8)
      .Case("i32", DType::I32)
      .Case("i64", DType::I64)
      .Case("bool", DType::Bool)
      .Default(std::nullopt);
}

int64_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64: return 8;
  case DType::F32:
  case DType::I32: return 4;
  case DType::F16:
  case DType::BF16: return 2;
  case DType::I8:
  case DType::Bool: return 1;
  }
  llvm_unreachable("unknown dtype");
}

bool isFloatDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

std::optional<int64_t> Type::checkedNumElements() const {
  int64_t count = 1;
  for (int64_t d : shape_) {
    if (d < 0)
      return std::nullopt;
    int64_t next;
    if (llvm::MulOverflow(count, d, next))
      return std::nullopt;
    count = next;
  }
  return count;
}

std::optional<int64_t> Type::checkedByteSize() const {
  std::optional<int64_t> count = checkedNumElements();
  int64_t bytes;
  if (!count || llvm::MulOverflow(*count, dtypeBytes(dtype_), bytes))
    return std::nullopt;
  return bytes;
}

int64_t Type::numElements() const {
  std::optional<int64_t> count = checkedNumElements();
  assert(count && "numElements on an invalid type");
  return *count;
}

std::string Type::str() const {
  return fmt::format("{}[{}]", dtypeName(dtype_).str(), fmt::join(shape_, ","));
}

} // namespace remat

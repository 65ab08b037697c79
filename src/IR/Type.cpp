//===- Type.cpp - Tensor types ----------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Type.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <cassert>
#include <mutex>

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

namespace {

std::optional<int64_t> countElements(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    int64_t next;
    if (llvm::MulOverflow(count, d, next))
      return std::nullopt;
    count = next;
  }
  return count;
}

/// Every distinct type's storage, for the life of the process. Graphs are
/// built and copied on more than one thread: a lock guards the table.
class TypeUniquer {
public:
  const TypeStorage *get(DType dtype, llvm::ArrayRef<int64_t> shape) {
    Key key{dtype, shape};
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = table_.find_as(key);
    if (found != table_.end())
      return *found;
    auto *storage = new (arena_.Allocate())
        TypeStorage{dtype, {shape.begin(), shape.end()},
                    countElements(shape)};
    table_.insert(storage);
    return storage;
  }

private:
  struct Key {
    DType dtype;
    llvm::ArrayRef<int64_t> shape;
  };
  /// Pointers as keys, hashed and found by the types they point to.
  struct Info : llvm::DenseMapInfo<const TypeStorage *> {
    using DenseMapInfo::isEqual;
    static unsigned getHashValue(const Key &key) {
      return llvm::hash_combine(
          key.dtype, llvm::hash_combine_range(key.shape.begin(),
                                              key.shape.end()));
    }
    static unsigned getHashValue(const TypeStorage *storage) {
      return getHashValue(Key{storage->dtype, storage->shape});
    }
    static bool isEqual(const Key &key, const TypeStorage *storage) {
      if (storage == getEmptyKey() || storage == getTombstoneKey())
        return false;
      return key.dtype == storage->dtype &&
             key.shape == llvm::ArrayRef<int64_t>(storage->shape);
    }
  };

  std::mutex mutex_;
  llvm::DenseSet<const TypeStorage *, Info> table_;
  /// The storage, never freed: types outlive every graph.
  llvm::SpecificBumpPtrAllocator<TypeStorage> arena_;
};

TypeUniquer &typeUniquer() {
  // Leaked on purpose: types may be made while other statics are destroyed.
  static TypeUniquer *uniquer = new TypeUniquer();
  return *uniquer;
}

} // namespace

Type::Type() {
  // Every value starts with one: no lock after the first.
  static const TypeStorage *scalarF32 = typeUniquer().get(DType::F32, {});
  storage_ = scalarF32;
}

Type::Type(DType dtype, llvm::ArrayRef<int64_t> shape)
    : storage_(typeUniquer().get(dtype, shape)) {}

std::optional<int64_t> Type::checkedByteSize() const {
  std::optional<int64_t> count = checkedNumElements();
  int64_t bytes;
  if (!count || llvm::MulOverflow(*count, dtypeBytes(dtype()), bytes))
    return std::nullopt;
  return bytes;
}

int64_t Type::numElements() const {
  std::optional<int64_t> count = checkedNumElements();
  assert(count && "numElements on an invalid type");
  return *count;
}

std::string Type::str() const {
  return fmt::format("{}[{}]", dtypeName(dtype()).str(), fmt::join(shape(), ","));
}

} // namespace remat

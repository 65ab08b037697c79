//===- Tensor.h - Typed views of executor memory -----------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `Tensor` is a non-owning, typed view of a buffer: what kernels read and
/// write. `HostTensor` owns its bytes: what callers feed to the executor and
/// get back from it. Element storage is dense and row-major.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_TENSOR_H
#define REMAT_RUNTIME_TENSOR_H

#include "remat/IR/Type.h"

#include "llvm/ADT/ArrayRef.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace remat {

/// The C++ element type of a dtype, for the dtypes kernels support.
template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<float>() { return DType::F32; }
template <> constexpr DType dtypeOf<double>() { return DType::F64; }
template <> constexpr DType dtypeOf<int8_t>() { return DType::I8; }
template <> constexpr DType dtypeOf<int32_t>() { return DType::I32; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::I64; }
template <> constexpr DType dtypeOf<bool>() { return DType::Bool; }

/// A typed view of `type.byteSize()` bytes at `data` (null when empty).
class Tensor {
public:
  Tensor() = default;
  Tensor(Type type, void *data) : type_(std::move(type)), data_(data) {}

  const Type &type() const { return type_; }
  DType dtype() const { return type_.dtype(); }
  llvm::ArrayRef<int64_t> shape() const { return type_.shape(); }
  int64_t numel() const { return type_.numElements(); }
  int64_t byteSize() const { return type_.byteSize(); }
  void *raw() const { return data_; }

  /// The elements as `T`, which must match the dtype (asserted).
  template <typename T> T *data() const {
    assert(dtypeOf<T>() == dtype() && "element type does not match dtype");
    return static_cast<T *>(data_);
  }
  template <typename T> llvm::MutableArrayRef<T> values() const {
    return {data<T>(), static_cast<size_t>(numel())};
  }

private:
  Type type_;
  void *data_ = nullptr;
};

/// A tensor that owns zero-initialised, 64-byte aligned storage.
class HostTensor {
public:
  HostTensor() = default;
  explicit HostTensor(Type type);
  HostTensor(const HostTensor &other);
  HostTensor &operator=(const HostTensor &other);
  HostTensor(HostTensor &&) = default;
  HostTensor &operator=(HostTensor &&) = default;

  const Type &type() const { return type_; }
  DType dtype() const { return type_.dtype(); }
  int64_t numel() const { return type_.numElements(); }
  /// A view of the storage.
  Tensor view() const { return Tensor(type_, bytes_.get()); }
  template <typename T> llvm::MutableArrayRef<T> values() const {
    return view().values<T>();
  }
  /// Element `i` converted to double, for any supported dtype.
  double at(int64_t i) const;

private:
  struct Free {
    void operator()(std::byte *p) const;
  };
  Type type_;
  std::unique_ptr<std::byte[], Free> bytes_;
};

/// Element `i` of `tensor` converted to double, for any supported dtype.
double elementAsDouble(const Tensor &tensor, int64_t i);
/// Stores `value` into element `i`, converting to the tensor's dtype.
void setElementFromDouble(const Tensor &tensor, int64_t i, double value);

} // namespace remat

#endif // REMAT_RUNTIME_TENSOR_H

//===- KernelUtils.h - Shared pieces of CPU kernels --------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Helpers every kernel family uses: dispatch on a tensor's runtime dtype to a
/// templated functor, row-major and numpy-broadcast strides, a row-by-row walk
/// over strided tensors, and conversions that never invoke undefined
/// behaviour (integer arithmetic wraps, division by zero yields 0, doubles
/// saturate when stored into integers). Private to src/Runtime.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_RUNTIME_KERNELS_KERNELUTILS_H
#define REMAT_SRC_RUNTIME_KERNELS_KERNELUTILS_H

#include "remat/Runtime/Kernel.h"
#include "remat/Runtime/Tensor.h"
#include "remat/Support/Status.h"

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace remat::kernels {

/// A shape or a stride vector.
using Dims = llvm::SmallVector<int64_t, 6>;

//===----------------------------------------------------------------------===//
// Dtype dispatch
//===----------------------------------------------------------------------===//

namespace detail {
template <typename T, typename Fn> absl::Status invokeTyped(Fn &fn) {
  using R = decltype(fn.template operator()<T>());
  if constexpr (std::is_void_v<R>) {
    fn.template operator()<T>();
    return absl::OkStatus();
  } else {
    return fn.template operator()<T>();
  }
}

absl::Status unsupportedDType(llvm::StringRef opName, DType dtype,
                              llvm::StringRef wanted);
} // namespace detail

/// Calls `fn.template operator()<T>()` (a template lambda
/// `[&]<typename T>() {...}`, returning void or absl::Status) with T the C++
/// type of `dtype`, for f32 and f64; other dtypes fail naming `opName`.
template <typename Fn>
absl::Status dispatchFloat(DType dtype, llvm::StringRef opName, Fn &&fn) {
  switch (dtype) {
  case DType::F32:
    return detail::invokeTyped<float>(fn);
  case DType::F64:
    return detail::invokeTyped<double>(fn);
  default:
    return detail::unsupportedDType(opName, dtype, "a float");
  }
}

/// As `dispatchFloat`, for f32, f64, i8, i32 and i64.
template <typename Fn>
absl::Status dispatchNumeric(DType dtype, llvm::StringRef opName, Fn &&fn) {
  switch (dtype) {
  case DType::F32:
    return detail::invokeTyped<float>(fn);
  case DType::F64:
    return detail::invokeTyped<double>(fn);
  case DType::I8:
    return detail::invokeTyped<int8_t>(fn);
  case DType::I32:
    return detail::invokeTyped<int32_t>(fn);
  case DType::I64:
    return detail::invokeTyped<int64_t>(fn);
  default:
    return detail::unsupportedDType(opName, dtype, "a numeric");
  }
}

/// As `dispatchNumeric`, plus bool: for ops that only move or fill elements.
template <typename Fn>
absl::Status dispatchAny(DType dtype, llvm::StringRef opName, Fn &&fn) {
  if (dtype == DType::Bool)
    return detail::invokeTyped<bool>(fn);
  return dispatchNumeric(dtype, opName, std::forward<Fn>(fn));
}

/// As `dispatchNumeric`, for the index dtypes i8, i32 and i64 only.
template <typename Fn>
absl::Status dispatchIndex(DType dtype, llvm::StringRef opName, Fn &&fn) {
  switch (dtype) {
  case DType::I8:
    return detail::invokeTyped<int8_t>(fn);
  case DType::I32:
    return detail::invokeTyped<int32_t>(fn);
  case DType::I64:
    return detail::invokeTyped<int64_t>(fn);
  default:
    return detail::unsupportedDType(opName, dtype, "an integer");
  }
}

/// Fails unless every tensor in `tensors` has `dtype`: operands of one op
/// must agree at run time too (widened runs widen all floats together).
absl::Status expectDType(llvm::StringRef opName, DType dtype,
                         llvm::ArrayRef<Tensor> tensors);

//===----------------------------------------------------------------------===//
// Shapes and strides
//===----------------------------------------------------------------------===//

/// Fills `out` with the sum of `ctx`'s operands (all of `out`'s dtype and
/// shape), added left to right: add_n and the one-process all_reduce agree bit
/// for bit.
absl::Status sumOperands(const KernelContext &ctx, const Tensor &out);

/// Product of `dims` (1 for none).
int64_t product(llvm::ArrayRef<int64_t> dims);

/// Element strides of a dense row-major tensor of `shape`.
Dims rowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// Strides that read a dense row-major tensor of `shape` as if numpy-broadcast
/// to `target`: one entry per dim of `target`, 0 where `shape` has no dim
/// (leading) or a dim of 1 that is broadcast.
Dims broadcastStrides(llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> target);

/// `axis` in [-rank, rank) mapped to [0, rank); shape inference has checked it.
unsigned normalizeAxis(int64_t axis, unsigned rank);

/// A shape seen as [outer, axis, inner] around one dim.
struct AxisSplit {
  int64_t outer;
  int64_t axis;
  int64_t inner;
};
AxisSplit splitAtAxis(llvm::ArrayRef<int64_t> shape, unsigned axis);

/// Walks the multi-indices of `shape` in row-major order one innermost row at
/// a time, tracking an element offset into each of N tensors: tensor k's
/// element at index i is `bases[k] + sum_d i[d] * strides[k][d]`. Calls
/// `fn(std::array<int64_t, N> rowOffsets, int64_t rowLength,
/// std::array<int64_t, N> rowStrides)` once per row. Dims of size 1 are
/// dropped and adjacent dims merged where every tensor allows it, so dense
/// operands become one long row. Nothing is called for an empty shape.
template <size_t N, typename Fn>
void forEachRow(llvm::ArrayRef<int64_t> shape,
                const std::array<llvm::ArrayRef<int64_t>, N> &strides,
                const std::array<int64_t, N> &bases, Fn &&fn) {
  for (int64_t d : shape)
    if (d == 0)
      return;
  // Coalesced dims, innermost last.
  Dims dims;
  std::array<Dims, N> st;
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    bool merge = !dims.empty();
    for (size_t k = 0; merge && k < N; ++k)
      merge = st[k].back() == strides[k][d] * shape[d];
    if (merge) {
      dims.back() *= shape[d];
      for (size_t k = 0; k < N; ++k)
        st[k].back() = strides[k][d];
      continue;
    }
    dims.push_back(shape[d]);
    for (size_t k = 0; k < N; ++k)
      st[k].push_back(strides[k][d]);
  }
  if (dims.empty()) {
    std::array<int64_t, N> unit;
    unit.fill(1);
    fn(bases, int64_t(1), unit);
    return;
  }
  unsigned outerRank = dims.size() - 1;
  int64_t rowLength = dims.back();
  std::array<int64_t, N> rowStrides;
  for (size_t k = 0; k < N; ++k)
    rowStrides[k] = st[k].back();
  Dims counter(outerRank, 0);
  std::array<int64_t, N> offsets = bases;
  while (true) {
    fn(offsets, rowLength, rowStrides);
    // Advance the outer counter, innermost outer dim first.
    int d = int(outerRank) - 1;
    for (; d >= 0; --d) {
      if (++counter[d] < dims[d]) {
        for (size_t k = 0; k < N; ++k)
          offsets[k] += st[k][d];
        break;
      }
      counter[d] = 0;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= st[k][d] * (dims[d] - 1);
    }
    if (d < 0)
      return;
  }
}

//===----------------------------------------------------------------------===//
// Arithmetic without undefined behaviour
//===----------------------------------------------------------------------===//

/// `a + b`, wrapping for integers.
template <typename T> T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) + U(b)));
  } else {
    return a + b;
  }
}
/// `a - b`, wrapping for integers.
template <typename T> T wrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) - U(b)));
  } else {
    return a - b;
  }
}
/// `a * b`, wrapping for integers.
template <typename T> T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote to at least unsigned int so that small types do not become
    // signed int (whose overflow is UB).
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return T(U(W(U(a)) * W(U(b))));
  } else {
    return a * b;
  }
}
/// `-a`, wrapping for integers (-INT_MIN is INT_MIN).
template <typename T> T wrapNeg(T a) { return wrapSub(T(0), a); }
/// `a / b`; for integers truncating, 0 when b is 0, and INT_MIN / -1 wraps.
template <typename T> T safeDiv(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0)
      return 0;
    if (b == -1)
      return wrapNeg(a);
    return T(a / b);
  } else {
    return a / b;
  }
}

/// `value` stored as T: floats round; integers saturate (NaN gives 0); bool
/// is `value != 0`.
template <typename T> T fromDouble(double value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(value))
      return 0;
    // Both bounds are exact doubles (-2^k and 2^k).
    constexpr double lo = double(std::numeric_limits<T>::min());
    constexpr double hi = -lo;
    if (value <= lo)
      return std::numeric_limits<T>::min();
    if (value >= hi)
      return std::numeric_limits<T>::max();
    return T(value);
  } else {
    return T(value);
  }
}

/// The type reductions over T accumulate in: double for floats, T's
/// unsigned counterpart (wrapping) for integers.
template <typename T> struct Accumulator {
  using type = double;
};
template <typename T>
  requires std::is_integral_v<T>
struct Accumulator<T> {
  using type = std::make_unsigned_t<T>;
};
template <typename T> using AccumulatorT = typename Accumulator<T>::type;

} // namespace remat::kernels

#endif // REMAT_SRC_RUNTIME_KERNELS_KERNELUTILS_H

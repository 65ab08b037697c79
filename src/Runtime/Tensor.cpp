//===- Tensor.cpp - Owning host tensors and element access -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Tensor.h"

#include "Kernels/KernelUtils.h"

#include "llvm/Support/ErrorHandling.h"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>

namespace remat {

static constexpr size_t kAlignment = 64;

void HostTensor::Free::operator()(std::byte *p) const { std::free(p); }

/// Zeroed, 64-byte aligned storage for `bytes` bytes; null for none.
static std::byte *allocateZeroed(int64_t bytes) {
  if (bytes == 0)
    return nullptr;
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = (size_t(bytes) + kAlignment - 1) / kAlignment * kAlignment;
  void *p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return static_cast<std::byte *>(p);
}

HostTensor::HostTensor(Type type)
    : type_(std::move(type)), bytes_(allocateZeroed(type_.byteSize())) {}

HostTensor::HostTensor(const HostTensor &other) : type_(other.type_) {
  // A default-constructed tensor has no storage; neither has its copy.
  if (!other.bytes_)
    return;
  bytes_.reset(allocateZeroed(type_.byteSize()));
  std::memcpy(bytes_.get(), other.bytes_.get(), size_t(type_.byteSize()));
}

HostTensor &HostTensor::operator=(const HostTensor &other) {
  if (this != &other)
    *this = HostTensor(other);
  return *this;
}

double HostTensor::at(int64_t i) const { return elementAsDouble(view(), i); }

/// IEEE half (binary16) bits to float, exactly.
static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) // Inf or NaN.
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // Zero or subnormal: mantissa * 2^-24.
    float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) |
                              (mantissa << 13));
}

/// Float to IEEE half bits, rounding to nearest even.
static uint16_t floatToHalf(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  float magnitude = std::fabs(f);
  if (std::isnan(f))
    return sign | 0x7e00;
  if (magnitude >= 65520.0f) // Rounds to infinity.
    return sign | 0x7c00;
  if (magnitude < 0x1p-14f) { // Subnormal: round magnitude / 2^-24.
    float scaled = std::nearbyint(magnitude * 0x1p24f);
    return sign | uint16_t(scaled);
  }
  uint32_t m = std::bit_cast<uint32_t>(magnitude);
  // Round the 23-bit mantissa to 10 bits, ties to even; a carry rolls into
  // the exponent correctly.
  uint32_t rounded = m + 0xfff + ((m >> 13) & 1);
  return sign | uint16_t((rounded - (112u << 23)) >> 13);
}

/// bfloat16 bits to float, exactly.
static float bf16ToFloat(uint16_t b) {
  return std::bit_cast<float>(uint32_t(b) << 16);
}

/// Float to bfloat16 bits, rounding to nearest even.
static uint16_t floatToBf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f))
    return uint16_t((bits >> 16) | 0x40);
  return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

double elementAsDouble(const Tensor &tensor, int64_t i) {
  assert(i >= 0 && i < tensor.numel() && "element index out of range");
  const void *data = tensor.raw();
  switch (tensor.dtype()) {
  case DType::F32:
    return static_cast<const float *>(data)[i];
  case DType::F64:
    return static_cast<const double *>(data)[i];
  case DType::F16:
    return halfToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::I8:
    return static_cast<const int8_t *>(data)[i];
  case DType::I32:
    return static_cast<const int32_t *>(data)[i];
  case DType::I64:
    return double(static_cast<const int64_t *>(data)[i]);
  case DType::Bool:
    return static_cast<const uint8_t *>(data)[i] != 0 ? 1.0 : 0.0;
  }
  llvm_unreachable("unknown dtype");
}

void setElementFromDouble(const Tensor &tensor, int64_t i, double value) {
  assert(i >= 0 && i < tensor.numel() && "element index out of range");
  using kernels::fromDouble;
  void *data = tensor.raw();
  switch (tensor.dtype()) {
  case DType::F32:
    static_cast<float *>(data)[i] = float(value);
    return;
  case DType::F64:
    static_cast<double *>(data)[i] = value;
    return;
  case DType::F16:
    static_cast<uint16_t *>(data)[i] = floatToHalf(float(value));
    return;
  case DType::BF16:
    static_cast<uint16_t *>(data)[i] = floatToBf16(float(value));
    return;
  case DType::I8:
    static_cast<int8_t *>(data)[i] = fromDouble<int8_t>(value);
    return;
  case DType::I32:
    static_cast<int32_t *>(data)[i] = fromDouble<int32_t>(value);
    return;
  case DType::I64:
    static_cast<int64_t *>(data)[i] = fromDouble<int64_t>(value);
    return;
  case DType::Bool:
    static_cast<bool *>(data)[i] = value != 0;
    return;
  }
  llvm_unreachable("unknown dtype");
}

} // namespace remat

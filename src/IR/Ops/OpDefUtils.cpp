//===- OpDefUtils.cpp - Shared pieces of op definitions ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <cassert>
#include <limits>

namespace remat::ops {

static std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

absl::StatusOr<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                      llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return invalidArgument("shapes {} and {} do not broadcast", shapeText(a),
                             shapeText(b));
    result[i] = da == 1 ? db : da;
  }
  return result;
}

absl::StatusOr<unsigned> normalizeAxis(llvm::StringRef opName, int64_t axis,
                                       unsigned rank) {
  int64_t r = rank;
  if (axis < -r || axis >= r)
    return invalidArgument("'{}' axis {} is out of range for rank {}",
                           opName.str(), axis, rank);
  return static_cast<unsigned>(axis < 0 ? axis + r : axis);
}

absl::Status expectFloat(const OpSignature &sig, unsigned index) {
  if (sig.operand(index).isFloat())
    return absl::OkStatus();
  return invalidArgument("'{}' operand {} must be a float tensor, got {}",
                         sig.def().name, index, sig.operand(index).str());
}

absl::Status expectInteger(const OpSignature &sig, unsigned index) {
  DType dtype = sig.operand(index).dtype();
  if (dtype == DType::I8 || dtype == DType::I32 || dtype == DType::I64)
    return absl::OkStatus();
  return invalidArgument("'{}' operand {} must be an integer tensor, got {}",
                         sig.def().name, index, sig.operand(index).str());
}

absl::Status expectSameDType(const OpSignature &sig) {
  for (unsigned i = 1; i < sig.numOperands(); ++i)
    if (sig.operand(i).dtype() != sig.operand(0).dtype())
      return invalidArgument("'{}' operand {} has dtype {} but operand 0 has {}",
                             sig.def().name, i,
                             dtypeName(sig.operand(i).dtype()).str(),
                             dtypeName(sig.operand(0).dtype()).str());
  return absl::OkStatus();
}

absl::Status expectRank(const OpSignature &sig, unsigned index, unsigned rank) {
  if (sig.operand(index).rank() == rank)
    return absl::OkStatus();
  return invalidArgument("'{}' operand {} must have rank {}, got {}",
                         sig.def().name, index, rank, sig.operand(index).str());
}

absl::StatusOr<TypeList> inferSameAsFirst(const OpSignature &sig) {
  return TypeList{sig.operand(0)};
}

FlopsFn flopsPerResultElement(int64_t perElement) {
  return [perElement](const OpSignature &, llvm::ArrayRef<Type> results) {
    return saturatingMul(perElement, results[0].numElements());
  };
}

int64_t zeroFlops(const OpSignature &, llvm::ArrayRef<Type>) { return 0; }

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

absl::Status expectMinRank(const OpSignature &sig, unsigned index,
                           unsigned minRank) {
  if (sig.operand(index).rank() >= minRank)
    return absl::OkStatus();
  return invalidArgument("'{}' operand {} must have rank >= {}, got {}",
                         sig.def().name, index, minRank,
                         sig.operand(index).str());
}

int64_t saturatingMul(int64_t a, int64_t b) {
  assert(a >= 0 && b >= 0 && "FLOP figures are non-negative");
  int64_t product;
  if (llvm::MulOverflow(a, b, product))
    return std::numeric_limits<int64_t>::max();
  return product;
}

FlopsFn flopsPerOperandElement(unsigned index, int64_t perElement) {
  return [index, perElement](const OpSignature &sig, llvm::ArrayRef<Type>) {
    return saturatingMul(perElement, sig.operand(index).numElements());
  };
}

absl::StatusOr<std::array<int64_t, 2>>
intPairAttr(const OpSignature &sig, llvm::StringRef name, int64_t minValue) {
  llvm::ArrayRef<int64_t> list = sig.getIntList(name);
  if (list.size() != 2)
    return invalidArgument("'{}' attribute '{}' must have 2 entries [h, w], got {}",
                           sig.def().name, name.str(), formatShape(list));
  for (int64_t v : list)
    if (v < minValue)
      return invalidArgument("'{}' attribute '{}' entries must be >= {}, got {}",
                             sig.def().name, name.str(), minValue,
                             formatShape(list));
  return std::array<int64_t, 2>{list[0], list[1]};
}

absl::StatusOr<int64_t> windowOutputSize(const OpSignature &sig,
                                         llvm::StringRef dimName, int64_t in,
                                         int64_t kernel, int64_t stride,
                                         int64_t pad, int64_t dilation) {
  assert(kernel >= 1 && stride >= 1 && pad >= 0 && dilation >= 1 &&
         "window settings are validated before the output size");
  int64_t span, window, twicePad, padded;
  if (llvm::MulOverflow(dilation, kernel - 1, span) ||
      llvm::AddOverflow(span, int64_t(1), window) ||
      llvm::MulOverflow(pad, int64_t(2), twicePad) ||
      llvm::AddOverflow(in, twicePad, padded))
    return invalidArgument(
        "'{}' window arithmetic overflows int64 along {} (input {}, kernel {}, "
        "padding {}, dilation {})",
        sig.def().name, dimName.str(), in, kernel, pad, dilation);
  if (padded < window)
    return invalidArgument(
        "'{}' output {} would be < 1: window {} (kernel {}, dilation {}) is "
        "larger than input {} + 2*padding {}",
        sig.def().name, dimName.str(), window, kernel, dilation, in, pad);
  return (padded - window) / stride + 1;
}

absl::Status expectShape(const OpSignature &sig, unsigned index,
                         llvm::ArrayRef<int64_t> shape, llvm::StringRef why) {
  if (sig.operand(index).shape() == shape)
    return absl::OkStatus();
  return invalidArgument("'{}' operand {} must have shape {} ({}), got {}",
                         sig.def().name, index, formatShape(shape), why.str(),
                         sig.operand(index).str());
}

} // namespace remat::ops

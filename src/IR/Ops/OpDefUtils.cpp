//===- OpDefUtils.cpp - Shared pieces of op definitions ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

#include <fmt/format.h>

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
    return perElement * results[0].numElements();
  };
}

int64_t zeroFlops(const OpSignature &, llvm::ArrayRef<Type>) { return 0; }

} // namespace remat::ops

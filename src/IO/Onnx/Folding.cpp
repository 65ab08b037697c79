//===- Folding.cpp - Evaluating ONNX nodes at import time -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Folding.h"

namespace remat::onnximport {

std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// The element of a tensor of `shape` that broadcasting maps result index
/// `index` (of `resultShape`) to.
static int64_t broadcastSource(int64_t index,
                               llvm::ArrayRef<int64_t> resultShape,
                               llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides = stridesOf(shape);
  int64_t offset = int64_t(resultShape.size()) - int64_t(shape.size());
  int64_t source = 0;
  for (int64_t d = int64_t(resultShape.size()) - 1; d >= 0; --d) {
    int64_t coord = index % resultShape[d];
    index /= resultShape[d];
    int64_t sd = d - offset;
    if (sd >= 0 && shape[sd] != 1)
      source += coord * strides[sd];
  }
  return source;
}

absl::StatusOr<KnownTensor>
foldBinary(const ImportContext &ctx, const KnownTensor &a, const KnownTensor &b,
           llvm::function_ref<double(double, double)> floatOp,
           llvm::function_ref<int64_t(int64_t, int64_t)> intOp) {
  if (a.dtype != b.dtype)
    return ctx.error("operand types {} and {} differ", dtypeName(a.dtype).str(),
                     dtypeName(b.dtype).str());
  size_t rank = std::max(a.shape.size(), b.shape.size());
  std::vector<int64_t> shape(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.shape.size() ? 1 : a.shape[i - (rank - a.shape.size())];
    int64_t db = i < rank - b.shape.size() ? 1 : b.shape[i - (rank - b.shape.size())];
    if (da != db && da != 1 && db != 1)
      return ctx.error("shapes do not broadcast");
    shape[i] = da == 1 ? db : da;
  }
  KnownTensor result;
  result.dtype = a.dtype;
  result.shape = shape;
  REMAT_ASSIGN_OR_RETURN(int64_t numel,
                         foldedElements(ctx, result, "broadcast"));
  for (int64_t i = 0; i < numel; ++i) {
    int64_t ia = broadcastSource(i, shape, a.shape);
    int64_t ib = broadcastSource(i, shape, b.shape);
    if (a.isFloat())
      result.floats.push_back(floatOp(a.floats[ia], b.floats[ib]));
    else
      result.ints.push_back(intOp(a.ints[ia], b.ints[ib]));
  }
  return result;
}

absl::StatusOr<KnownTensor> foldGather(const ImportContext &ctx,
                                       const KnownTensor &data,
                                       const KnownTensor &indices,
                                       int64_t axis) {
  int64_t size = data.shape[axis];
  std::vector<int64_t> outer(data.shape.begin(), data.shape.begin() + axis);
  int64_t outerCount = 1, innerCount = 1;
  for (int64_t dim : outer)
    outerCount *= dim;
  for (size_t d = axis + 1; d < data.shape.size(); ++d)
    innerCount *= data.shape[d];
  KnownTensor result;
  result.dtype = data.dtype;
  result.shape = outer;
  result.shape.insert(result.shape.end(), indices.shape.begin(),
                      indices.shape.end());
  result.shape.insert(result.shape.end(), data.shape.begin() + axis + 1,
                      data.shape.end());
  for (int64_t o = 0; o < outerCount; ++o)
    for (int64_t index : indices.ints) {
      if (index < -size || index >= size)
        return ctx.error("index {} is out of range for size {}", index, size);
      int64_t row = index < 0 ? index + size : index;
      for (int64_t in = 0; in < innerCount; ++in) {
        int64_t source = (o * size + row) * innerCount + in;
        if (data.isFloat())
          result.floats.push_back(data.floats[source]);
        else
          result.ints.push_back(data.ints[source]);
      }
    }
  return result;
}

absl::StatusOr<KnownTensor> foldConcat(const ImportContext &ctx,
                                       llvm::ArrayRef<KnownTensor> parts,
                                       int64_t axis) {
  KnownTensor result;
  result.dtype = parts.front().dtype;
  result.shape = parts.front().shape;
  result.shape[axis] = 0;
  for (const KnownTensor &part : parts) {
    if (part.dtype != result.dtype || part.shape.size() != result.shape.size())
      return ctx.error("operands differ in type or rank");
    for (size_t d = 0; d < part.shape.size(); ++d)
      if (int64_t(d) != axis && part.shape[d] != result.shape[d])
        return ctx.error("operands differ in dimension {}", d);
    result.shape[axis] += part.shape[axis];
  }
  int64_t outerCount = 1;
  for (int64_t d = 0; d < axis; ++d)
    outerCount *= result.shape[d];
  for (int64_t o = 0; o < outerCount; ++o)
    for (const KnownTensor &part : parts) {
      int64_t chunk = part.numel() / std::max<int64_t>(outerCount, 1);
      for (int64_t i = 0; i < chunk; ++i) {
        if (result.isFloat())
          result.floats.push_back(part.floats[o * chunk + i]);
        else
          result.ints.push_back(part.ints[o * chunk + i]);
      }
    }
  return result;
}

KnownTensor foldSlice(const KnownTensor &data, llvm::ArrayRef<int64_t> starts,
                      llvm::ArrayRef<int64_t> ends,
                      llvm::ArrayRef<int64_t> steps) {
  KnownTensor result;
  result.dtype = data.dtype;
  size_t rank = data.shape.size();
  for (size_t d = 0; d < rank; ++d)
    result.shape.push_back(
        std::max<int64_t>(0, (ends[d] - starts[d] + steps[d] - 1) / steps[d]));
  std::vector<int64_t> strides = stridesOf(data.shape);
  int64_t numel = result.numel();
  for (int64_t i = 0; i < numel; ++i) {
    int64_t rest = i, source = 0;
    for (size_t d = rank; d-- > 0;) {
      int64_t coord = rest % result.shape[d];
      rest /= result.shape[d];
      source += (starts[d] + coord * steps[d]) * strides[d];
    }
    if (data.isFloat())
      result.floats.push_back(data.floats[source]);
    else
      result.ints.push_back(data.ints[source]);
  }
  return result;
}

} // namespace remat::onnximport

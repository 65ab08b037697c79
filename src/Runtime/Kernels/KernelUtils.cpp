//===- KernelUtils.cpp - Shared pieces of CPU kernels ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cassert>

namespace remat::kernels {

absl::Status detail::unsupportedDType(llvm::StringRef opName, DType dtype,
                                      llvm::StringRef wanted) {
  if (dtype == DType::F16 || dtype == DType::BF16)
    return invalidArgument("'{}' has no {} kernel", opName.str(),
                           dtypeName(dtype).str());
  return invalidArgument("'{}' needs {} tensor, got {}", opName.str(),
                         wanted.str(), dtypeName(dtype).str());
}

absl::Status expectDType(llvm::StringRef opName, DType dtype,
                         llvm::ArrayRef<Tensor> tensors) {
  for (const Tensor &t : tensors)
    if (t.dtype() != dtype)
      return invalidArgument("'{}' mixes {} and {} tensors", opName.str(),
                             dtypeName(dtype).str(), dtypeName(t.dtype()).str());
  return absl::OkStatus();
}

absl::Status sumOperands(const KernelContext &ctx, const Tensor &out) {
  for (unsigned k = 0; k < ctx.numOperands(); ++k)
    REMAT_RETURN_IF_ERROR(
        expectDType(ctx.op().kind(), out.dtype(), {ctx.operand(k)}));
  return dispatchNumeric(out.dtype(), ctx.op().kind(), [&]<typename T>() {
    int64_t n = out.numel();
    if (n == 0)
      return;
    T *sum = out.data<T>();
    std::copy_n(ctx.operand(0).data<T>(), n, sum);
    for (unsigned k = 1; k < ctx.numOperands(); ++k) {
      const T *in = ctx.operand(k).data<T>();
      for (int64_t i = 0; i < n; ++i)
        sum[i] = wrapAdd(sum[i], in[i]);
    }
  });
}

int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

Dims rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  Dims strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

Dims broadcastStrides(llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> target) {
  assert(shape.size() <= target.size() && "cannot broadcast to a lower rank");
  Dims dense = rowMajorStrides(shape);
  Dims strides(target.size(), 0);
  size_t lead = target.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    assert((shape[d] == 1 || shape[d] == target[lead + d]) &&
           "shapes do not broadcast");
    strides[lead + d] = shape[d] == 1 ? 0 : dense[d];
  }
  return strides;
}

unsigned normalizeAxis(int64_t axis, unsigned rank) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  assert(normalized >= 0 && normalized < int64_t(rank) && "axis out of range");
  return unsigned(normalized);
}

AxisSplit splitAtAxis(llvm::ArrayRef<int64_t> shape, unsigned axis) {
  return {product(shape.take_front(axis)), shape[axis],
          product(shape.drop_front(axis + 1))};
}

} // namespace remat::kernels

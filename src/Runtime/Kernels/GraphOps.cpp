//===- GraphOps.cpp - Kernels of the GraphOps family -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Fills (constant, zeros_like, ones_like) and add_n. Declarations and the
/// identity family are fed or aliased by the executor and have no kernel.
/// add_n adds its operands left to right in the runtime dtype, so
/// add_n(add_n(a, b), c) equals add_n(a, b, c) bit for bit.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>

namespace remat {
using namespace kernels;

/// A kernel filling result 0 with `value` converted to its dtype.
static absl::Status fill(const KernelContext &ctx, double value) {
  const Tensor &y = ctx.result();
  return dispatchAny(y.dtype(), ctx.op().kind(), [&]<typename T>() {
    std::fill_n(y.data<T>(), y.numel(), fromDouble<T>(value));
  });
}

static absl::Status addN(const KernelContext &ctx) {
  return sumOperands(ctx, ctx.result());
}

void registerGraphOpKernels(OpRegistry &registry) {
  registry.setKernel("constant", {[](const KernelContext &ctx) {
                       return fill(ctx, ctx.signature().getFloat("value"));
                     }});
  registry.setKernel("zeros_like", {[](const KernelContext &ctx) {
                       return fill(ctx, 0.0);
                     }});
  registry.setKernel("ones_like", {[](const KernelContext &ctx) {
                       return fill(ctx, 1.0);
                     }});
  registry.setKernel("add_n", {addN});
}

} // namespace remat

//===- Communication.cpp - Kernels of the Communication family --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The one-process meaning of the cross-device ops: `all_reduce` sums its
/// operands left to right into every result, `transfer` copies. The
/// distributed runtime (src/Runtime/Distributed/) replaces both by messages
/// and never calls these.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cstring>

namespace remat {
using namespace kernels;

/// Copies the bytes of `from` into `to`, which has the same runtime type.
static void copyBytes(const Tensor &from, const Tensor &to) {
  if (int64_t bytes = to.type().byteSize())
    std::memcpy(to.raw(), from.raw(), bytes);
}

static absl::Status allReduce(const KernelContext &ctx) {
  REMAT_RETURN_IF_ERROR(sumOperands(ctx, ctx.result(0)));
  for (unsigned i = 1; i < ctx.numResults(); ++i)
    copyBytes(ctx.result(0), ctx.result(i));
  return absl::OkStatus();
}

void registerCommunicationKernels(OpRegistry &registry) {
  registry.setKernel("all_reduce", {allReduce});
  registry.setKernel("transfer", {[](const KernelContext &ctx) {
                       copyBytes(ctx.operand(0), ctx.result());
                       return absl::OkStatus();
                     }});
}

} // namespace remat

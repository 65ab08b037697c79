//===- Communication.cpp - Gradient rules of all_reduce and transfer --------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every result of all_reduce is the sum of all operands, so each operand's
/// gradient is the sum of all result gradients: an all_reduce of them, whose
/// result i lands on operand i's device. transfer's gradient travels back to
/// the device its operand came from.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

#include "remat/IR/Builder.h"
#include "remat/Support/Status.h"

namespace remat {
using namespace grad;

static absl::StatusOr<Grads> allReduceGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  llvm::SmallVector<Value *, 4> resultGrads;
  for (unsigned i = 0; i < ctx.op().numResults(); ++i)
    resultGrads.push_back(ctx.resultGrad(i));
  REMAT_ASSIGN_OR_RETURN(Op * sum,
                         ctx.builder().tryCreate("all_reduce", resultGrads));
  for (unsigned i = 0; i < grads.size(); ++i)
    if (wants(ctx, i))
      grads[i] = sum->result(i);
  return grads;
}

static absl::StatusOr<Grads> transferGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0))
    return grads;
  llvm::StringRef from = ctx.operand(0)->producer()->device();
  if (from.empty())
    return invalidArgument("cannot send the gradient of 'transfer' back: its "
                           "operand %{} has no device",
                           ctx.operand(0)->name().str());
  grads[0] = ctx.builder().op("transfer", {ctx.resultGrad()},
                              {{"to", Attribute(from.str())}});
  return grads;
}

void registerCommunicationGradients(OpRegistry &registry) {
  setRule(registry, "all_reduce", allReduceGrad);
  setRule(registry, "transfer", transferGrad);
}

} // namespace remat

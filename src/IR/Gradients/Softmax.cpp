//===- Softmax.cpp - Gradient rules of softmax, log_softmax, causal_mask --===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// softmax and log_softmax use their backward ops on the forward result;
/// causal_mask masks dy with zeros, since masked entries are constants.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

/// `kind`(y, dy) {axis} for softmax or log_softmax.
static GradientFn softmaxRule(llvm::StringRef kind) {
  return [kind = kind.str()](const GradientContext &ctx)
             -> absl::StatusOr<Grads> {
    Grads grads = none(ctx);
    if (!wants(ctx, 0))
      return grads;
    grads[0] = ctx.builder().op(kind, {ctx.result(), ctx.resultGrad()},
                                {{"axis", ctx.signature().getInt("axis")}});
    return finish(ctx, grads);
  };
}

static absl::StatusOr<Grads> causalMaskGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (wants(ctx, 0))
    grads[0] = ctx.builder().op("causal_mask", {ctx.resultGrad()},
                                {{"value", 0.0}});
  return finish(ctx, grads);
}

void registerSoftmaxGradients(OpRegistry &registry) {
  setRule(registry, "softmax", softmaxRule("softmax_grad"));
  setRule(registry, "log_softmax", softmaxRule("log_softmax_grad"));
  setRule(registry, "causal_mask", causalMaskGrad);
}

} // namespace remat

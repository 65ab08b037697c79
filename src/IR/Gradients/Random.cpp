//===- Random.cpp - Gradient rule of dropout ------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// dropout's gradient is dropout of dy with the same seed and rate: the same
/// mask and the same 1/(1-rate) scale.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

static absl::StatusOr<Grads> dropoutGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0))
    return grads;
  OpSignature sig = ctx.signature();
  grads[0] = ctx.builder().op(
      "dropout", {ctx.resultGrad()},
      {{"rate", sig.getFloat("rate")}, {"seed", sig.getInt("seed")}});
  return finish(ctx, grads);
}

void registerRandomGradients(OpRegistry &registry) {
  setRule(registry, "dropout", dropoutGrad);
}

} // namespace remat

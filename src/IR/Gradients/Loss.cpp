//===- Loss.cpp - Gradient rules of the losses ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// softmax_cross_entropy uses its backward op (labels get no gradient);
/// mse_loss = mean((p - t)^2) gives dp = (p - t) * (2 dy / n) and dt = -dp.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

static absl::StatusOr<Grads> softmaxCrossEntropyGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (wants(ctx, 0))
    grads[0] = ctx.builder().op(
        "softmax_cross_entropy_grad",
        {ctx.operand(0), ctx.operand(1), ctx.resultGrad()});
  return finish(ctx, grads);
}

static absl::StatusOr<Grads> mseLossGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0) && !wants(ctx, 1))
    return grads;
  const Type &pred = ctx.operand(0)->type();
  int64_t n = pred.numElements();
  double scale = n == 0 ? 0.0 : 2.0 / double(n);
  Builder &b = ctx.builder();
  Value *diff = b.op("sub", {ctx.operand(0), ctx.operand(1)});
  Value *dyScaled = b.op("mul", {ctx.resultGrad(), ctx.scalar(scale, pred.dtype())});
  Value *dpred = b.op("mul", {diff, dyScaled});
  if (wants(ctx, 0))
    grads[0] = dpred;
  if (wants(ctx, 1))
    grads[1] = b.op("neg", {dpred});
  return finish(ctx, grads);
}

void registerLossGradients(OpRegistry &registry) {
  setRule(registry, "softmax_cross_entropy", softmaxCrossEntropyGrad);
  setRule(registry, "mse_loss", mseLossGrad);
}

} // namespace remat

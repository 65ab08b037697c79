//===- Normalization.cpp - Gradient rules of layer_norm and batch_norms ---===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The training-mode rules call their backward op, which recomputes the
/// statistics from x and returns dx, dgamma and dbeta. batch_norm's mean and
/// var results are optional gradients: when present anyway, their exact
/// contributions are added to dx, with M = the number of elements per channel:
///   d mean_c / d x = 1 / M,   d var_c / d x = 2 (x - mean_c) / M.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

/// The backward op `kind`(x, gamma, dy) {eps}; null if nothing is wanted.
static Op *normGrad(const GradientContext &ctx, llvm::StringRef kind) {
  if (!wants(ctx, 0) && !wants(ctx, 1) && !wants(ctx, 2))
    return nullptr;
  return ctx.builder().create(
      kind, {ctx.operand(0), ctx.operand(1), ctx.resultGrad(0)},
      {{"eps", ctx.signature().getFloat("eps")}});
}

/// One gradient per operand from the backward op's three results.
static Grads operandGrads(const GradientContext &ctx, Op *backward) {
  Grads grads = none(ctx);
  if (backward)
    for (unsigned i = 0; i < 3; ++i)
      if (wants(ctx, i))
        grads[i] = backward->result(i);
  return grads;
}

static absl::StatusOr<Grads> layerNormGrad(const GradientContext &ctx) {
  return finish(ctx, operandGrads(ctx, normGrad(ctx, "layer_norm_grad")));
}

/// A per-channel [C] value reshaped to [1, C, 1, ...] to broadcast against x.
static Value *perChannel(const GradientContext &ctx, Value *stat) {
  std::vector<int64_t> shape(ctx.operand(0)->type().rank(), 1);
  shape[1] = stat->type().dim(0);
  return ctx.builder().op("reshape", {stat}, {{"shape", Attribute(shape)}});
}

static absl::StatusOr<Grads> batchNormGrad(const GradientContext &ctx) {
  Grads grads = operandGrads(ctx, normGrad(ctx, "batch_norm_grad"));
  Value *dmean = ctx.resultGrad(1), *dvar = ctx.resultGrad(2);
  if (!grads[0] || (!dmean && !dvar))
    return finish(ctx, grads);
  const Type &x = ctx.operand(0)->type();
  int64_t perChannelCount = x.dim(1) == 0 ? 0 : x.numElements() / x.dim(1);
  double invCount = perChannelCount == 0 ? 0.0 : 1.0 / double(perChannelCount);
  Builder &b = ctx.builder();
  Value *dx = grads[0];
  if (dmean)
    dx = b.op("add", {dx, b.op("mul", {perChannel(ctx, dmean),
                                       ctx.scalar(invCount, x.dtype())})});
  if (dvar) {
    Value *centered = b.op("sub", {ctx.operand(0), perChannel(ctx, ctx.result(1))});
    Value *scale = b.op("mul", {perChannel(ctx, dvar),
                                ctx.scalar(2.0 * invCount, x.dtype())});
    dx = b.op("add", {dx, b.op("mul", {centered, scale})});
  }
  grads[0] = dx;
  return finish(ctx, grads);
}

/// batch_norm_inference from existing ops, with s = sqrt(var + eps) and the
/// sums over every axis but the channels:
///   dx = dy * gamma / s,  dbeta = sum dy,  dgamma = sum dy (x - mean) / s,
///   dmean = -dbeta * gamma / s,  dvar = -dgamma * gamma / (2 s^2).
static absl::StatusOr<Grads> batchNormInferenceGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  Builder &b = ctx.builder();
  const Type &x = ctx.operand(0)->type();
  Value *dy = ctx.resultGrad(0);
  Value *gamma = ctx.operand(1);
  Value *stddev = b.op("sqrt", {b.op("add", {ctx.operand(4),
                                            ctx.scalar(ctx.signature().getFloat("eps"),
                                                       x.dtype())})});
  Value *gain = b.op("div", {gamma, stddev});
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < int64_t(x.rank()); ++d)
    if (d != 1)
      axes.push_back(d);
  auto channelSum = [&](Value *v) {
    return b.op("reduce_sum", {v}, {{"axes", intList(axes)}});
  };
  if (wants(ctx, 0))
    grads[0] = b.op("mul", {dy, perChannel(ctx, gain)});
  Value *dbeta = nullptr, *dgamma = nullptr;
  if (wants(ctx, 2) || wants(ctx, 3))
    dbeta = channelSum(dy);
  if (wants(ctx, 1) || wants(ctx, 4)) {
    Value *centred =
        b.op("sub", {ctx.operand(0), perChannel(ctx, ctx.operand(3))});
    Value *normal = b.op("div", {centred, perChannel(ctx, stddev)});
    dgamma = channelSum(b.op("mul", {dy, normal}));
  }
  if (wants(ctx, 1))
    grads[1] = dgamma;
  if (wants(ctx, 2))
    grads[2] = dbeta;
  if (wants(ctx, 3))
    grads[3] = b.op("neg", {b.op("mul", {dbeta, gain})});
  if (wants(ctx, 4)) {
    Value *half = b.op("mul", {gain, ctx.scalar(-0.5, x.dtype())});
    grads[4] = b.op("div", {b.op("mul", {dgamma, half}), stddev});
  }
  return finish(ctx, grads);
}

void registerNormalizationGradients(OpRegistry &registry) {
  setRule(registry, "layer_norm", layerNormGrad);
  // Bits 1 and 2: mean and var need no gradient.
  setRule(registry, "batch_norm", batchNormGrad, (1u << 1) | (1u << 2));
  setRule(registry, "batch_norm_inference", batchNormInferenceGrad);
}

} // namespace remat

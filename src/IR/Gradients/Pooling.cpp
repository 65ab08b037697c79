//===- Pooling.cpp - Gradient rules of pooling and upsampling -------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// max_pool2d and avg_pool2d use their backward ops; global_avg_pool spreads
/// dy / (H*W) over each image; upsample_nearest by s sums each s x s block of
/// dy, as avg_pool2d(dy) {kernel [s, s]} * s^2.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

/// The forward's kernel, strides and padding.
static AttrList windowAttrs(const OpSignature &sig) {
  return {{"kernel", intList(sig.getIntList("kernel"))},
          {"strides", intList(sig.getIntList("strides"))},
          {"padding", intList(sig.getIntList("padding"))}};
}

static absl::StatusOr<Grads> maxPool2dGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (wants(ctx, 0))
    grads[0] = ctx.builder().op("max_pool2d_grad",
                                {ctx.operand(0), ctx.resultGrad()},
                                windowAttrs(ctx.signature()));
  return finish(ctx, grads);
}

static absl::StatusOr<Grads> avgPool2dGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0))
    return grads;
  AttrList attrs = windowAttrs(ctx.signature());
  attrs.push_back({"input_shape", intList(ctx.operand(0)->type().shape())});
  grads[0] = ctx.builder().op("avg_pool2d_grad", {ctx.resultGrad()}, attrs);
  return finish(ctx, grads);
}

/// dy [N, C] -> [N, C, 1, 1] -> [N, C, H, W], times 1 / (H*W).
static absl::StatusOr<Grads> globalAvgPoolGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0))
    return grads;
  const Type &x = ctx.operand(0)->type();
  Builder &b = ctx.builder();
  Value *dy = b.op("reshape", {ctx.resultGrad()},
                   {{"shape", {x.dim(0), x.dim(1), 1, 1}}});
  Value *spread = b.op("broadcast", {dy}, {{"shape", intList(x.shape())}});
  int64_t area = x.dim(2) * x.dim(3);
  double scale = area == 0 ? 0.0 : 1.0 / double(area);
  grads[0] = b.op("mul", {spread, ctx.scalar(scale, x.dtype())});
  return finish(ctx, grads);
}

static absl::StatusOr<Grads> upsampleNearestGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0))
    return grads;
  int64_t s = ctx.signature().getInt("scale");
  if (s == 1) {
    grads[0] = ctx.resultGrad();
    return grads;
  }
  Builder &b = ctx.builder();
  Value *mean = b.op("avg_pool2d", {ctx.resultGrad()}, {{"kernel", {s, s}}});
  grads[0] = b.op("mul", {mean, ctx.scalar(double(s) * double(s),
                                           ctx.operand(0)->type().dtype())});
  return finish(ctx, grads);
}

void registerPoolingGradients(OpRegistry &registry) {
  setRule(registry, "max_pool2d", maxPool2dGrad);
  setRule(registry, "avg_pool2d", avgPool2dGrad);
  setRule(registry, "global_avg_pool", globalAvgPoolGrad);
  setRule(registry, "upsample_nearest", upsampleNearestGrad);
}

} // namespace remat

//===- Convolution.cpp - Gradient rule of conv2d --------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// conv2d's gradients are its two backward ops, carrying the forward's window
/// attributes and the shape of the operand each one differentiates.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

static absl::StatusOr<Grads> conv2dGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  OpSignature sig = ctx.signature();
  auto windowAttrs = [&](llvm::StringRef shapeName, const Type &shape) {
    return AttrList{{"strides", intList(sig.getIntList("strides"))},
                    {"padding", intList(sig.getIntList("padding"))},
                    {"dilation", intList(sig.getIntList("dilation"))},
                    {"groups", sig.getInt("groups")},
                    {shapeName.str(), intList(shape.shape())}};
  };
  Value *x = ctx.operand(0), *w = ctx.operand(1), *dy = ctx.resultGrad();
  if (wants(ctx, 0))
    grads[0] = ctx.builder().op("conv2d_grad_input", {dy, w},
                                windowAttrs("input_shape", x->type()));
  if (wants(ctx, 1))
    grads[1] = ctx.builder().op("conv2d_grad_filter", {x, dy},
                                windowAttrs("filter_shape", w->type()));
  return finish(ctx, grads);
}

void registerConvolutionGradients(OpRegistry &registry) {
  setRule(registry, "conv2d", conv2dGrad);
}

} // namespace remat

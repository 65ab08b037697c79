//===- Indexing.cpp - Gradient rules of embedding and gather --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Both scatter-add dy back with gather_grad; the integer indices get no
/// gradient.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

/// Operand 0's gradient: gather_grad(indices, dy) {axis, size = dim axis}.
static Grads scatterBack(const GradientContext &ctx, int64_t axis) {
  Grads grads = none(ctx);
  if (wants(ctx, 0))
    grads[0] = ctx.builder().op(
        "gather_grad", {ctx.operand(1), ctx.resultGrad()},
        {{"axis", axis}, {"size", ctx.operand(0)->type().dim(axis)}});
  return grads;
}

static absl::StatusOr<Grads> embeddingGrad(const GradientContext &ctx) {
  return finish(ctx, scatterBack(ctx, 0));
}

static absl::StatusOr<Grads> gatherGrad(const GradientContext &ctx) {
  int64_t axis = ctx.signature().getInt("axis");
  if (axis < 0)
    axis += ctx.operand(0)->type().rank();
  return finish(ctx, scatterBack(ctx, axis));
}

void registerIndexingGradients(OpRegistry &registry) {
  setRule(registry, "embedding", embeddingGrad);
  setRule(registry, "gather", gatherGrad);
}

} // namespace remat

//===- Reduction.cpp - Gradient rules of reduce_sum, _mean and _max -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// reduce_sum spreads dy over the reduced dims (reshape to keep them as 1,
/// then broadcast to x's shape); reduce_mean also scales by 1/count;
/// reduce_max routes dy to the maxima with reduce_max_grad.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

#include "llvm/ADT/BitVector.h"

namespace remat {
using namespace grad;

/// The dims of x that the reduction in `sig` reduces.
static llvm::BitVector reducedDims(const OpSignature &sig) {
  unsigned rank = sig.operand(0).rank();
  llvm::ArrayRef<int64_t> axes = sig.getIntList("axes");
  if (axes.empty())
    return llvm::BitVector(rank, true);
  llvm::BitVector reduced(rank);
  for (int64_t axis : axes)
    reduced.set(axis < 0 ? axis + rank : axis);
  return reduced;
}

/// dy broadcast back to x's shape, and the number of elements each entry of dy
/// summed.
static std::pair<Value *, int64_t> spread(const GradientContext &ctx,
                                          const OpSignature &sig) {
  const Type &x = sig.operand(0);
  llvm::BitVector reduced = reducedDims(sig);
  std::vector<int64_t> kept(x.shape().begin(), x.shape().end());
  int64_t count = 1;
  for (unsigned d : reduced.set_bits()) {
    count *= kept[d];
    kept[d] = 1;
  }
  Value *dy = ctx.resultGrad();
  if (dy->type().shape() != llvm::ArrayRef<int64_t>(kept))
    dy = ctx.builder().op("reshape", {dy}, {{"shape", Attribute(kept)}});
  if (llvm::ArrayRef<int64_t>(kept) != x.shape())
    dy = ctx.builder().op("broadcast", {dy}, {{"shape", intList(x.shape())}});
  return {dy, count};
}

static absl::StatusOr<Grads> reduceSumGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (wants(ctx, 0))
    grads[0] = spread(ctx, ctx.signature()).first;
  return finish(ctx, grads);
}

static absl::StatusOr<Grads> reduceMeanGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0))
    return grads;
  auto [dx, count] = spread(ctx, ctx.signature());
  // An empty x has no entries to scale.
  double scale = count == 0 ? 0.0 : 1.0 / double(count);
  grads[0] = ctx.builder().op(
      "mul", {dx, ctx.scalar(scale, ctx.operand(0)->type().dtype())});
  return finish(ctx, grads);
}

static absl::StatusOr<Grads> reduceMaxGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0))
    return grads;
  OpSignature sig = ctx.signature();
  grads[0] = ctx.builder().op(
      "reduce_max_grad", {ctx.operand(0), ctx.result(), ctx.resultGrad()},
      {{"axes", intList(sig.getIntList("axes"))},
       {"keepdims", sig.getBool("keepdims")}});
  return finish(ctx, grads);
}

void registerReductionGradients(OpRegistry &registry) {
  setRule(registry, "reduce_sum", reduceSumGrad);
  setRule(registry, "reduce_mean", reduceMeanGrad);
  setRule(registry, "reduce_max", reduceMaxGrad);
}

} // namespace remat

//===- Shape.cpp - Gradient rules of the data-movement ops ----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Each rule moves dy back the way the forward moved x: transpose by the
/// inverse permutation, reshape back, broadcast by summing, concat by split
/// and split by concat, slice by slice_grad and pad by slice.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

/// Rule for one-operand ops: `dx` builds operand 0's gradient from dy.
template <typename Fn>
static GradientFn unaryRule(Fn dx) {
  return [dx](const GradientContext &ctx) -> absl::StatusOr<Grads> {
    Grads grads = none(ctx);
    if (wants(ctx, 0))
      grads[0] = dx(ctx, ctx.signature(), ctx.resultGrad());
    return finish(ctx, grads);
  };
}

static Value *transposeGrad(const GradientContext &ctx, const OpSignature &sig,
                            Value *dy) {
  llvm::ArrayRef<int64_t> perm = sig.getIntList("perm");
  int64_t rank = perm.size();
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i)
    inverse[perm[i] < 0 ? perm[i] + rank : perm[i]] = i;
  return ctx.builder().op("transpose", {dy}, {{"perm", Attribute(inverse)}});
}

static Value *reshapeGrad(const GradientContext &ctx, const OpSignature &sig,
                          Value *dy) {
  return ctx.builder().op("reshape", {dy},
                          {{"shape", intList(sig.operand(0).shape())}});
}

static Value *broadcastGrad(const GradientContext &ctx, const OpSignature &sig,
                            Value *dy) {
  return ctx.sumToShape(dy, sig.operand(0));
}

static Value *sliceGrad(const GradientContext &ctx, const OpSignature &sig,
                        Value *dy) {
  return ctx.builder().op("slice_grad", {dy},
                          {{"shape", intList(sig.operand(0).shape())},
                           {"starts", intList(sig.getIntList("starts"))},
                           {"steps", intList(sig.getIntList("steps"))}});
}

/// The window of dy that holds x: starts at `low`, x's shape long.
static Value *padGrad(const GradientContext &ctx, const OpSignature &sig,
                      Value *dy) {
  llvm::ArrayRef<int64_t> low = sig.getIntList("low");
  llvm::ArrayRef<int64_t> shape = sig.operand(0).shape();
  std::vector<int64_t> ends(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    ends[d] = low[d] + shape[d];
  return ctx.builder().op(
      "slice", {dy}, {{"starts", intList(low)}, {"ends", Attribute(ends)}});
}

/// Splits dy along the axis into the operands' extents.
static absl::StatusOr<Grads> concatGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  bool any = false;
  for (unsigned i = 0; i < grads.size(); ++i)
    any |= wants(ctx, i);
  if (!any)
    return grads;
  OpSignature sig = ctx.signature();
  int64_t axis = sig.getInt("axis");
  if (axis < 0)
    axis += sig.operand(0).rank();
  std::vector<int64_t> sizes;
  for (const Type &t : sig.operands())
    sizes.push_back(t.dim(axis));
  Op *split = ctx.builder().create(
      "split", {ctx.resultGrad()},
      {{"axis", axis}, {"sizes", Attribute(std::move(sizes))}});
  if (split)
    for (unsigned i = 0; i < grads.size(); ++i)
      if (wants(ctx, i))
        grads[i] = split->result(i);
  return finish(ctx, grads);
}

/// Concatenates the results' gradients; autodiff passes zeros for the
/// results that have none.
static absl::StatusOr<Grads> splitGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  if (!wants(ctx, 0))
    return grads;
  std::vector<Value *> pieces;
  for (unsigned i = 0; i < ctx.op().numResults(); ++i)
    pieces.push_back(ctx.resultGrad(i));
  grads[0] = ctx.builder().op("concat", pieces,
                              {{"axis", ctx.signature().getInt("axis")}});
  return finish(ctx, grads);
}

void registerShapeGradients(OpRegistry &registry) {
  setRule(registry, "transpose", unaryRule(transposeGrad));
  setRule(registry, "reshape", unaryRule(reshapeGrad));
  setRule(registry, "broadcast", unaryRule(broadcastGrad));
  setRule(registry, "slice", unaryRule(sliceGrad));
  setRule(registry, "pad", unaryRule(padGrad));
  setRule(registry, "concat", concatGrad);
  setRule(registry, "split", splitGrad);
}

} // namespace remat

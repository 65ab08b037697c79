//===- Matmul.cpp - Gradient rule of matmul -------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// For C = op(A) op(B), where op transposes the last two dims when the flag
/// is set, each operand's gradient is one matmul of dC with the other operand
/// under transpose flags chosen so that no transpose op is needed, then summed
/// over the batch dims that broadcasting added or stretched.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

static Value *matmul(const GradientContext &ctx, Value *a, Value *b,
                     bool transposeA, bool transposeB) {
  return ctx.builder().op(
      "matmul", {a, b},
      {{"transpose_a", transposeA}, {"transpose_b", transposeB}});
}

/// The four cases by (transpose_a, transpose_b):
///   C = A B:      dA = dC B^T,    dB = A^T dC
///   C = A B^T:    dA = dC B,      dB = dC^T A
///   C = A^T B:    dA = B dC^T,    dB = A dC
///   C = A^T B^T:  dA = B^T dC^T,  dB = dC^T A^T
static absl::StatusOr<Grads> matmulGrad(const GradientContext &ctx) {
  OpSignature sig = ctx.signature();
  bool ta = sig.getBool("transpose_a");
  bool tb = sig.getBool("transpose_b");
  Value *a = ctx.operand(0), *b = ctx.operand(1), *dc = ctx.resultGrad();
  Grads grads = none(ctx);
  if (wants(ctx, 0)) {
    Value *da = !ta ? matmul(ctx, dc, b, false, !tb)
                    : matmul(ctx, b, dc, tb, true);
    grads[0] = ctx.sumToShape(da, a->type());
  }
  if (wants(ctx, 1)) {
    Value *db = !tb ? matmul(ctx, a, dc, !ta, false)
                    : matmul(ctx, dc, a, true, ta);
    grads[1] = ctx.sumToShape(db, b->type());
  }
  return finish(ctx, grads);
}

void registerMatmulGradients(OpRegistry &registry) {
  setRule(registry, "matmul", matmulGrad);
}

} // namespace remat

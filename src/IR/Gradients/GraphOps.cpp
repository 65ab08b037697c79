//===- GraphOps.cpp - Gradient rules of constants, identities and add_n ---===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// identity and checkpoint pass dy through; stop_gradient and the fills
/// (constant, zeros_like, ones_like) give no gradient; add_n gives dy to every
/// operand. input and param are leaves and have no rule.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

namespace remat {
using namespace grad;

static absl::StatusOr<Grads> passThrough(const GradientContext &ctx) {
  Grads grads = none(ctx);
  for (unsigned i = 0; i < grads.size(); ++i)
    if (wants(ctx, i))
      grads[i] = ctx.resultGrad();
  return grads;
}

static absl::StatusOr<Grads> noGradient(const GradientContext &ctx) {
  return none(ctx);
}

void registerGraphOpGradients(OpRegistry &registry) {
  for (const char *kind : {"identity", "checkpoint", "add_n"})
    setRule(registry, kind, passThrough);
  for (const char *kind : {"stop_gradient", "constant", "zeros_like", "ones_like"})
    setRule(registry, kind, noGradient);
}

} // namespace remat

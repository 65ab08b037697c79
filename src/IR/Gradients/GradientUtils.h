//===- GradientUtils.h - Shared by the gradient rule files ------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Registration and result helpers used by every family file under
/// src/IR/Gradients/. Private to that directory.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IR_GRADIENTS_GRADIENTUTILS_H
#define REMAT_SRC_IR_GRADIENTS_GRADIENTUTILS_H

#include "remat/IR/Gradient.h"
#include "remat/IR/OpRegistry.h"

#include <vector>

namespace remat::grad {

using Grads = llvm::SmallVector<Value *, 2>;

/// Whether operand `i` needs a gradient and can carry one (a float operand).
inline bool wants(const GradientContext &ctx, unsigned i) {
  return ctx.needsGrad(i) && ctx.operand(i)->type().isFloat();
}

/// `grads`, or the builder's first error if building any of them failed.
inline absl::StatusOr<Grads> finish(const GradientContext &ctx, Grads grads) {
  if (!ctx.builder().status().ok())
    return ctx.builder().status();
  return grads;
}

/// No gradient for `ctx`'s operands.
inline Grads none(const GradientContext &ctx) {
  return Grads(ctx.op().numOperands(), nullptr);
}

/// Attaches `emit` as the rule of `kind`.
inline void setRule(OpRegistry &registry, llvm::StringRef kind, GradientFn emit,
                    uint64_t optionalResultGrads = 0) {
  registry.setGradient(kind, GradientRule{std::move(emit), optionalResultGrads});
}

/// An int-list attribute from `values`.
inline Attribute intList(llvm::ArrayRef<int64_t> values) {
  return Attribute(std::vector<int64_t>(values.begin(), values.end()));
}

} // namespace remat::grad

#endif // REMAT_SRC_IR_GRADIENTS_GRADIENTUTILS_H

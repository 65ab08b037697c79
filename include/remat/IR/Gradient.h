//===- Gradient.h - Per-op reverse-mode gradient rules -----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A gradient rule emits, for one forward op, the ops that turn the gradients
/// of its results into the gradients of its operands. Rules are attached to the
/// op registry (`OpRegistry::setGradient`), one file per op family under
/// src/IR/Gradients/; the autodiff pass (remat/Pass/Autodiff.h) calls them in
/// reverse schedule order.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_GRADIENT_H
#define REMAT_IR_GRADIENT_H

#include "remat/IR/Builder.h"
#include "remat/IR/Op.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <functional>

namespace remat {

/// What a rule sees: the forward op, the gradients of its results, which
/// operand gradients are wanted, and a builder placed in the backward pass.
class GradientContext {
public:
  GradientContext(Builder &builder, const Op &op,
                  llvm::ArrayRef<Value *> resultGrads,
                  llvm::ArrayRef<bool> operandNeedsGrad)
      : builder_(builder), op_(op), resultGrads_(resultGrads),
        operandNeedsGrad_(operandNeedsGrad) {}

  Builder &builder() const { return builder_; }
  const Op &op() const { return op_; }
  Value *operand(unsigned i) const { return op_.operand(i); }
  Value *result(unsigned i = 0) const { return op_.result(i); }
  /// The gradient of result `i`, of the result's type. Null only for results
  /// the rule lists in `GradientRule::optionalResultGrads`; autodiff passes
  /// zeros for the others.
  Value *resultGrad(unsigned i = 0) const { return resultGrads_[i]; }
  /// Whether autodiff wants operand `i`'s gradient. Rules may return null for
  /// operands that do not need one, and should, when it saves work.
  bool needsGrad(unsigned i) const { return operandNeedsGrad_[i]; }
  /// The forward op's attributes, defaults included.
  OpSignature signature() const;

  // Helpers shared by rules.
  /// `grad` summed over the dims that numpy broadcasting added or stretched to
  /// reach it from `target`, and reshaped to `target`'s shape; `grad` itself
  /// when the shapes already match.
  Value *sumToShape(Value *grad, const Type &target) const;
  /// A scalar constant of `dtype`, for scaling by broadcasting.
  Value *scalar(double value, DType dtype) const;

private:
  Builder &builder_;
  const Op &op_;
  llvm::ArrayRef<Value *> resultGrads_;
  llvm::ArrayRef<bool> operandNeedsGrad_;
  // Storage for `signature()`.
  mutable llvm::SmallVector<Type, 4> operandTypes_;
};

/// Returns one gradient per operand, of the operand's type, or null for "no
/// gradient" (integer operands, operands that do not need one, operands the
/// op is not differentiable in). Errors are plain messages; autodiff adds the
/// op's location.
using GradientFn =
    std::function<absl::StatusOr<llvm::SmallVector<Value *, 2>>(
        const GradientContext &)>;

/// The reverse-mode rule of one op kind.
struct GradientRule {
  GradientFn emit;
  /// Bit i set: the rule ignores result i's gradient and accepts null for it
  /// (batch_norm's mean and var), so autodiff builds no zeros for it.
  uint64_t optionalResultGrads = 0;

  bool acceptsNoGradFor(unsigned result) const {
    return result < 64 && ((optionalResultGrads >> result) & 1) != 0;
  }
};

/// Attaches every built-in gradient rule to `registry`'s ops. Called by
/// `OpRegistry::global()`.
void registerAllGradients(OpRegistry &registry);

// One function per op family, each in its own file under src/IR/Gradients/.
void registerGraphOpGradients(OpRegistry &registry);
void registerElementwiseGradients(OpRegistry &registry);
void registerMatmulGradients(OpRegistry &registry);
void registerShapeGradients(OpRegistry &registry);
void registerReductionGradients(OpRegistry &registry);
void registerSoftmaxGradients(OpRegistry &registry);
void registerNormalizationGradients(OpRegistry &registry);
void registerConvolutionGradients(OpRegistry &registry);
void registerPoolingGradients(OpRegistry &registry);
void registerIndexingGradients(OpRegistry &registry);
void registerRandomGradients(OpRegistry &registry);
void registerLossGradients(OpRegistry &registry);
void registerCommunicationGradients(OpRegistry &registry);

} // namespace remat

#endif // REMAT_IR_GRADIENT_H

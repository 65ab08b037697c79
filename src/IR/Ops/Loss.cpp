//===- Loss.cpp - Training losses -------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Losses reduce to a scalar of the prediction's dtype, averaged over the
/// positions they score: `softmax_cross_entropy` over integer class labels,
/// `mse_loss` over elements. `softmax_cross_entropy_grad` is the backward op
/// of the former.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

static absl::StatusOr<TypeList> inferSoftmaxCrossEntropy(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectMinRank(sig, 0, 1));
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  REMAT_RETURN_IF_ERROR(expectInteger(sig, 1));
  const Type &logits = sig.operand(0);
  const Type &labels = sig.operand(1);
  if (labels.shape() != logits.shape().drop_back())
    return invalidArgument(
        "'{}' labels {} must have the shape of logits {} "
        "without the class dim, {}",
        sig.def().name, labels.str(), logits.str(),
        formatShape(logits.shape().drop_back()));
  return TypeList{Type::scalar(logits.dtype())};
}

/// softmax_cross_entropy_grad(logits, labels, dy): result logits' type.
static absl::StatusOr<TypeList>
inferSoftmaxCrossEntropyGrad(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(inferSoftmaxCrossEntropy(sig).status());
  Type loss = Type::scalar(sig.operand(0).dtype());
  if (sig.operand(2) != loss)
    return invalidArgument(
        "'softmax_cross_entropy_grad' dy {} must be the loss type {}",
        sig.operand(2).str(), loss.str());
  return TypeList{sig.operand(0)};
}

static absl::StatusOr<TypeList> inferMseLoss(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  if (sig.operand(1) != sig.operand(0))
    return invalidArgument(
        "'mse_loss' target {} must have the type of pred {}",
        sig.operand(1).str(), sig.operand(0).str());
  return TypeList{Type::scalar(sig.operand(0).dtype())};
}

void registerLossOps(OpRegistry &registry) {
  registry.add(
      {.name = "softmax_cross_entropy",
       .summary = "Mean over label positions of -log softmax(logits)[label], "
                  "for float logits [..., C] and integer labels [...]; result "
                  "a scalar of logits' dtype.",
       .minOperands = 2,
       .maxOperands = 2,
       .inferTypes = inferSoftmaxCrossEntropy,
       .flops = flopsPerOperandElement(0, 6)});
  registry.add(
      {.name = "mse_loss",
       .summary = "Mean of (pred - target)^2 over the elements of float pred "
                  "and target of the same type; result a scalar of their "
                  "dtype.",
       .minOperands = 2,
       .maxOperands = 2,
       .inferTypes = inferMseLoss,
       .flops = flopsPerOperandElement(0, 3)});
  registry.add(
      {.name = "softmax_cross_entropy_grad",
       .summary = "Backward of softmax_cross_entropy from float logits [..., "
                  "C], integer labels [...] and the scalar dy: (softmax(logits) "
                  "- onehot(labels)) * dy / (number of label positions); "
                  "result logits' type.",
       .minOperands = 3,
       .maxOperands = 3,
       .inferTypes = inferSoftmaxCrossEntropyGrad,
       .flops = flopsPerOperandElement(0, 5)});
}

} // namespace remat

//===- Softmax.cpp - Softmax, log-softmax and the causal mask -------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The normalisations of attention and classification heads. softmax and
/// log_softmax cost 5 FLOPs per element (max, subtract, exp, sum, divide or
/// log); causal_mask, which attention applies to its scores first, costs 1.
/// The backward ops softmax_grad and log_softmax_grad cost 4 per element.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

static absl::StatusOr<TypeList> inferSoftmax(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  REMAT_RETURN_IF_ERROR(
      normalizeAxis(sig.def().name, sig.getInt("axis"), sig.operand(0).rank())
          .status());
  return TypeList{sig.operand(0)};
}

static absl::StatusOr<TypeList> inferCausalMask(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  REMAT_RETURN_IF_ERROR(expectMinRank(sig, 0, 2));
  return TypeList{sig.operand(0)};
}

/// softmax_grad / log_softmax_grad (y, dy): float operands of one type.
static absl::StatusOr<TypeList> inferSoftmaxGrad(const OpSignature &sig) {
  REMAT_ASSIGN_OR_RETURN(TypeList types, inferSoftmax(sig));
  if (sig.operand(1) != sig.operand(0))
    return invalidArgument("'{}' dy {} must have the type of y {}",
                           sig.def().name, sig.operand(1).str(),
                           sig.operand(0).str());
  return types;
}

void registerSoftmaxOps(OpRegistry &registry) {
  registry.add({.name = "softmax",
                .summary = "exp(x) / sum(exp(x)) along `axis` of float x, "
                           "computed stably; result has x's type.",
                .minOperands = 1,
                .maxOperands = 1,
                .attrs = {{"axis", AttrKind::Int, Attribute(-1)}},
                .inferTypes = inferSoftmax,
                .flops = flopsPerOperandElement(0, 5)});
  registry.add({.name = "log_softmax",
                .summary = "x - log(sum(exp(x))) along `axis` of float x, "
                           "computed stably; result has x's type.",
                .minOperands = 1,
                .maxOperands = 1,
                .attrs = {{"axis", AttrKind::Int, Attribute(-1)}},
                .inferTypes = inferSoftmax,
                .flops = flopsPerOperandElement(0, 5)});
  registry.add({.name = "causal_mask",
                .summary =
                    "Float x (rank >= 2) with entries [..., i, j], j > i, "
                    "of the last two dims set to `value` {value = -1e9}; "
                    "others pass through; result has x's type.",
                .minOperands = 1,
                .maxOperands = 1,
                .attrs = {{"value", AttrKind::Float, Attribute(-1e9)}},
                .inferTypes = inferCausalMask,
                .flops = flopsPerOperandElement(0, 1)});
  registry.add({.name = "softmax_grad",
                .summary = "Backward of softmax from its result y and dy "
                           "{axis = -1}: y * (dy - sum(dy * y, axis)).",
                .minOperands = 2,
                .maxOperands = 2,
                .attrs = {{"axis", AttrKind::Int, Attribute(-1)}},
                .inferTypes = inferSoftmaxGrad,
                .flops = flopsPerOperandElement(0, 4)});
  registry.add({.name = "log_softmax_grad",
                .summary = "Backward of log_softmax from its result y and dy "
                           "{axis = -1}: dy - exp(y) * sum(dy, axis).",
                .minOperands = 2,
                .maxOperands = 2,
                .attrs = {{"axis", AttrKind::Int, Attribute(-1)}},
                .inferTypes = inferSoftmaxGrad,
                .flops = flopsPerOperandElement(0, 4)});
}

} // namespace remat

//===- Normalization.cpp - Layer and batch normalisation --------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `layer_norm` normalises over the last dim; `batch_norm` (training mode)
/// normalises each channel (axis 1) with batch statistics and also returns
/// them, so that the backward pass need not recompute them. Both scale by
/// gamma and shift by beta, and cost 8 FLOPs per element of x. Their backward
/// ops layer_norm_grad and batch_norm_grad take (x, gamma, dy), recompute the
/// statistics from x, return dx, dgamma and dbeta, and cost 12 FLOPs per
/// element of x.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

/// Checks float operands of one dtype and gamma, beta of shape [features].
static absl::Status expectAffineParams(const OpSignature &sig, int64_t features,
                                       llvm::StringRef why) {
  for (unsigned i = 0; i < 3; ++i)
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  for (unsigned i = 1; i < 3; ++i)
    REMAT_RETURN_IF_ERROR(expectShape(sig, i, {features}, why));
  return absl::OkStatus();
}

static absl::Status expectNonNegativeEps(const OpSignature &sig) {
  double eps = sig.getFloat("eps");
  if (eps >= 0)
    return absl::OkStatus();
  return invalidArgument("'{}' eps must be >= 0, got {}", sig.def().name, eps);
}

static absl::StatusOr<TypeList> inferLayerNorm(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectMinRank(sig, 0, 1));
  const Type &x = sig.operand(0);
  REMAT_RETURN_IF_ERROR(expectAffineParams(sig, x.dim(-1), "the last dim of x"));
  REMAT_RETURN_IF_ERROR(expectNonNegativeEps(sig));
  return TypeList{x};
}

static absl::StatusOr<TypeList>
inferBatchNormInference(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectMinRank(sig, 0, 2));
  const Type &x = sig.operand(0);
  for (unsigned i = 0; i < 5; ++i)
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  for (unsigned i = 1; i < 5; ++i)
    REMAT_RETURN_IF_ERROR(expectShape(sig, i, {x.dim(1)}, "the channels of x"));
  REMAT_RETURN_IF_ERROR(expectNonNegativeEps(sig));
  return TypeList{x};
}

static absl::StatusOr<TypeList> inferBatchNorm(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectMinRank(sig, 0, 2));
  const Type &x = sig.operand(0);
  int64_t channels = x.dim(1);
  REMAT_RETURN_IF_ERROR(expectAffineParams(sig, channels, "the channels of x"));
  REMAT_RETURN_IF_ERROR(expectNonNegativeEps(sig));
  Type stats(x.dtype(), {channels});
  return TypeList{x, stats, stats};
}

/// (x, gamma, dy) of a normalisation over `features` per-feature params:
/// results dx (x's type), dgamma and dbeta [features].
static absl::StatusOr<TypeList> inferNormGrad(const OpSignature &sig,
                                              int64_t features,
                                              llvm::StringRef why) {
  const Type &x = sig.operand(0);
  for (unsigned i = 0; i < 3; ++i)
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  REMAT_RETURN_IF_ERROR(expectShape(sig, 1, {features}, why));
  REMAT_RETURN_IF_ERROR(expectShape(sig, 2, x.shape(), "the shape of x"));
  REMAT_RETURN_IF_ERROR(expectNonNegativeEps(sig));
  Type param(x.dtype(), {features});
  return TypeList{x, param, param};
}

static absl::StatusOr<TypeList> inferLayerNormGrad(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectMinRank(sig, 0, 1));
  return inferNormGrad(sig, sig.operand(0).dim(-1), "the last dim of x");
}

static absl::StatusOr<TypeList> inferBatchNormGrad(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectMinRank(sig, 0, 2));
  return inferNormGrad(sig, sig.operand(0).dim(1), "the channels of x");
}

void registerNormalizationOps(OpRegistry &registry) {
  registry.add(
      {.name = "layer_norm",
       .summary = "Normalises float x [..., D] over its last dim, then scales "
                  "by gamma [D] and shifts by beta [D] {eps = 1e-5}; result x's "
                  "type.",
       .minOperands = 3,
       .maxOperands = 3,
       .attrs = {{"eps", AttrKind::Float, Attribute(1e-5)}},
       .inferTypes = inferLayerNorm,
       .flops = flopsPerOperandElement(0, 8)});
  registry.add(
      {.name = "batch_norm",
       .summary = "Training-mode batch norm of float x [N, C, ...] with batch "
                  "statistics per channel, scaled by gamma [C] and shifted by "
                  "beta [C] {eps = 1e-5}; results y (x's type), mean [C], var "
                  "[C].",
       .minOperands = 3,
       .maxOperands = 3,
       .attrs = {{"eps", AttrKind::Float, Attribute(1e-5)}},
       .inferTypes = inferBatchNorm,
       .flops = flopsPerOperandElement(0, 8)});
  registry.add(
      {.name = "batch_norm_inference",
       .summary = "Inference-mode batch norm of float x [N, C, ...] with given "
                  "statistics: (x - mean) / sqrt(var + eps) * gamma + beta per "
                  "channel, for gamma, beta, mean and var [C] {eps = 1e-5}; "
                  "result x's type.",
       .minOperands = 5,
       .maxOperands = 5,
       .attrs = {{"eps", AttrKind::Float, Attribute(1e-5)}},
       .inferTypes = inferBatchNormInference,
       .flops = flopsPerOperandElement(0, 4)});
  registry.add(
      {.name = "layer_norm_grad",
       .summary = "Backward of layer_norm from float x [..., D], gamma [D] "
                  "and dy (x's type) {eps = 1e-5}, statistics recomputed from "
                  "x; results dx (x's type), dgamma [D], dbeta [D].",
       .minOperands = 3,
       .maxOperands = 3,
       .attrs = {{"eps", AttrKind::Float, Attribute(1e-5)}},
       .inferTypes = inferLayerNormGrad,
       .flops = flopsPerOperandElement(0, 12)});
  registry.add(
      {.name = "batch_norm_grad",
       .summary = "Backward of training-mode batch_norm from float x [N, C, "
                  "...], gamma [C] and dy (x's type) {eps = 1e-5}, batch "
                  "statistics recomputed from x; results dx (x's type), dgamma "
                  "[C], dbeta [C].",
       .minOperands = 3,
       .maxOperands = 3,
       .attrs = {{"eps", AttrKind::Float, Attribute(1e-5)}},
       .inferTypes = inferBatchNormGrad,
       .flops = flopsPerOperandElement(0, 12)});
}

} // namespace remat

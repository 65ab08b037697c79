//===- ConvertNormalization.cpp - ONNX normalisation and reductions ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// BatchNormalization in training mode (opset 13's five outputs, or 14+'s
/// `training_mode` with three) as batch_norm, in eval mode as
/// batch_norm_inference on the running statistics (leaves declared `input`,
/// not trained);
/// LayerNormalization over the last axis; ReduceMean and ReduceSum, which
/// with Sub, Pow and Sqrt make up the layer norm PyTorch exports below 17.
///
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

namespace remat::onnximport {
namespace {

/// running * momentum + batch * (1 - momentum): the updated running
/// statistic, for a model that reads it.
absl::StatusOr<Value *> runningUpdate(ImportContext &ctx, int inputIndex,
                                      Value *batch, double momentum,
                                      int outputIndex) {
  REMAT_ASSIGN_OR_RETURN(Value * running, ctx.constantLeafInput(inputIndex));
  DType dtype = batch->type().dtype();
  REMAT_ASSIGN_OR_RETURN(Value * m, ctx.scalar(momentum, dtype));
  REMAT_ASSIGN_OR_RETURN(Value * rest, ctx.scalar(1 - momentum, dtype));
  REMAT_ASSIGN_OR_RETURN(Value * kept, ctx.op("mul", {running, m}));
  REMAT_ASSIGN_OR_RETURN(Value * fresh, ctx.op("mul", {batch, rest}));
  return ctx.op("add", {kept, fresh}, {}, outputIndex);
}

absl::Status convertBatchNorm(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  REMAT_ASSIGN_OR_RETURN(Value * scale, ctx.input(1));
  REMAT_ASSIGN_OR_RETURN(Value * bias, ctx.input(2));
  REMAT_ASSIGN_OR_RETURN(double eps, ctx.floatAttr("epsilon", 1e-5));
  REMAT_ASSIGN_OR_RETURN(double momentum, ctx.floatAttr("momentum", 0.9));
  unsigned rank = x->type().rank();
  if (rank < 2)
    return ctx.error("input {} must have rank >= 2", x->type().str());
  bool training;
  if (ctx.opset() >= 14) {
    REMAT_ASSIGN_OR_RETURN(int64_t mode, ctx.intAttr("training_mode", 0));
    training = mode != 0;
  } else {
    training = ctx.numOutputs() > 1;
  }
  if (training) {
    REMAT_ASSIGN_OR_RETURN(Op * bn, ctx.create("batch_norm", {x, scale, bias},
                                               {{"eps", eps}}, 0));
    Value *mean = bn->result(1), *var = bn->result(2);
    if (ctx.outputUsed(1))
      REMAT_RETURN_IF_ERROR(runningUpdate(ctx, 3, mean, momentum, 1).status());
    if (ctx.outputUsed(2))
      REMAT_RETURN_IF_ERROR(runningUpdate(ctx, 4, var, momentum, 2).status());
    // Opset 13's saved_mean and saved_var: the batch statistics.
    ctx.define(3, mean);
    ctx.define(4, var);
    return absl::OkStatus();
  }
  if (ctx.outputUsed(1) || ctx.outputUsed(2))
    return ctx.error("running statistics outputs in eval mode are not "
                     "supported");
  REMAT_ASSIGN_OR_RETURN(Value * mean, ctx.constantLeafInput(3));
  REMAT_ASSIGN_OR_RETURN(Value * var, ctx.constantLeafInput(4));
  return ctx
      .op("batch_norm_inference", {x, scale, bias, mean, var}, {{"eps", eps}}, 0)
      .status();
}

absl::Status convertLayerNorm(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  REMAT_ASSIGN_OR_RETURN(Value * scale, ctx.input(1));
  REMAT_ASSIGN_OR_RETURN(double eps, ctx.floatAttr("epsilon", 1e-5));
  REMAT_ASSIGN_OR_RETURN(int64_t axis, ctx.intAttr("axis", -1));
  int64_t rank = x->type().rank();
  REMAT_ASSIGN_OR_RETURN(axis, normaliseAxis(ctx, axis, rank));
  if (axis != rank - 1)
    return ctx.error("normalising from axis {} of rank {} is not supported "
                     "(only the last axis)",
                     axis, rank);
  if (ctx.outputUsed(1) || ctx.outputUsed(2))
    return ctx.error("the Mean and InvStdDev outputs are not supported");
  Value *bias;
  if (ctx.hasInput(2)) {
    REMAT_ASSIGN_OR_RETURN(bias, ctx.input(2));
  } else {
    REMAT_ASSIGN_OR_RETURN(bias, ctx.scalar(0, scale->type().dtype(),
                                            {x->type().dim(-1)}));
  }
  return ctx.op("layer_norm", {x, scale, bias}, {{"eps", eps}}, 0).status();
}

template <bool Mean> absl::Status convertReduce(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  REMAT_ASSIGN_OR_RETURN(int64_t keepdims, ctx.intAttr("keepdims", 1));
  std::vector<int64_t> axes;
  // ReduceSum takes its axes as an input from opset 13, ReduceMean from 18.
  if ((!Mean || ctx.opset() >= 18) && ctx.hasInput(1)) {
    REMAT_ASSIGN_OR_RETURN(KnownTensor known, ctx.knownInput(1, "axes"));
    axes = known.ints;
  } else {
    REMAT_ASSIGN_OR_RETURN(axes, ctx.intsAttr("axes", {}));
  }
  REMAT_ASSIGN_OR_RETURN(int64_t noop, ctx.intAttr("noop_with_empty_axes", 0));
  if (axes.empty() && noop != 0) {
    ctx.define(0, x);
    return absl::OkStatus();
  }
  for (int64_t &axis : axes) {
    REMAT_ASSIGN_OR_RETURN(axis, normaliseAxis(ctx, axis, x->type().rank()));
  }
  return ctx
      .op(Mean ? "reduce_mean" : "reduce_sum", {x},
          {{"axes", Attribute(axes)}, {"keepdims", keepdims != 0}}, 0)
      .status();
}

} // namespace

void addNormalizationConverters(ConverterTable &table) {
  table["BatchNormalization"] = convertBatchNorm;
  table["LayerNormalization"] = convertLayerNorm;
  table["ReduceMean"] = convertReduce<true>;
  table["ReduceSum"] = convertReduce<false>;
}

} // namespace remat::onnximport

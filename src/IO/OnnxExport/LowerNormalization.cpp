//===- LowerNormalization.cpp - Norms, softmax and losses as ONNX -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Softmax, batch and layer norm, the losses, and their gradients, as
/// reductions and elementwise ops. Batch norm in training mode is written
/// out (ONNX's BatchNormalization returns running statistics, not the
/// batch's); remat's kernels compute in double, these in the tensor's type.
///
//===----------------------------------------------------------------------===//

#include "ExportContext.h"

#include <numeric>
#include <utility>

namespace remat::onnxexport {
namespace {

absl::Status lowerSoftmax(ExportContext &ctx) {
  ctx.emit("Softmax", {ctx.operand(0)}, {ctx.result()},
           {intAttr("axis", ctx.getInt("axis"))});
  return absl::OkStatus();
}

absl::Status lowerLogSoftmax(ExportContext &ctx) {
  ctx.emit("LogSoftmax", {ctx.operand(0)}, {ctx.result()},
           {intAttr("axis", ctx.getInt("axis"))});
  return absl::OkStatus();
}

/// y * (dy - sum(dy * y, axis)).
absl::Status lowerSoftmaxGrad(ExportContext &ctx) {
  const std::string &y = ctx.operand(0), &dy = ctx.operand(1);
  std::string dot =
      reduce(ctx, "ReduceSum", ctx.temp("Mul", {dy, y}),
             {ctx.getInt("axis")}, true);
  ctx.emit("Mul", {y, ctx.temp("Sub", {dy, dot})}, {ctx.result()});
  return absl::OkStatus();
}

/// dy - exp(y) * sum(dy, axis).
absl::Status lowerLogSoftmaxGrad(ExportContext &ctx) {
  const std::string &y = ctx.operand(0), &dy = ctx.operand(1);
  std::string total = reduce(ctx, "ReduceSum", dy, {ctx.getInt("axis")}, true);
  ctx.emit("Sub", {dy, ctx.temp("Mul", {ctx.temp("Exp", {y}), total})},
           {ctx.result()});
  return absl::OkStatus();
}

/// Normalised x over `axes` (kept as 1): xhat and 1 / sqrt(var + eps).
struct Normalised {
  std::string xhat, invStd;
};

/// x - mean(x) and 1 / sqrt(var(x) + eps) over `axes`.
std::pair<std::string, std::string> centre(ExportContext &ctx,
                                           const std::string &x,
                                           llvm::ArrayRef<int64_t> axes,
                                           DType dtype) {
  std::string mean = reduce(ctx, "ReduceMean", x, axes, true);
  std::string centred = ctx.temp("Sub", {x, mean});
  std::string variance = reduce(
      ctx, "ReduceMean", ctx.temp("Mul", {centred, centred}), axes, true);
  std::string invStd = ctx.temp(
      "Reciprocal",
      {ctx.temp("Sqrt", {ctx.temp("Add", {variance,
                                          ctx.scalar(ctx.getFloat("eps"),
                                                     dtype)})})});
  return {centred, invStd};
}

Normalised normalise(ExportContext &ctx, const std::string &x,
                     llvm::ArrayRef<int64_t> axes, DType dtype) {
  auto [centred, invStd] = centre(ctx, x, axes, dtype);
  return {ctx.temp("Mul", {centred, invStd}), invStd};
}

/// (g - mean(g) - xhat * mean(g * xhat)) * invStd over `axes`, g = dy * gamma.
std::string normGradInput(ExportContext &ctx, const Normalised &n,
                          const std::string &g, llvm::ArrayRef<int64_t> axes) {
  std::string meanG = reduce(ctx, "ReduceMean", g, axes, true);
  std::string meanGXhat =
      reduce(ctx, "ReduceMean", ctx.temp("Mul", {g, n.xhat}), axes, true);
  std::string centred = ctx.temp(
      "Sub", {ctx.temp("Sub", {g, meanG}), ctx.temp("Mul", {n.xhat, meanGXhat})});
  return ctx.temp("Mul", {centred, n.invStd});
}

std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> axes(static_cast<size_t>(std::max<int64_t>(to - from, 0)));
  std::iota(axes.begin(), axes.end(), from);
  return axes;
}

/// The axes of a batch norm's statistics: all but the channels (dim 1).
std::vector<int64_t> batchAxes(int64_t rank) {
  std::vector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

/// [C] as [1, C, 1, ...] of rank `rank`.
std::string perChannel(ExportContext &ctx, const std::string &v, int64_t c,
                       int64_t rank) {
  std::vector<int64_t> shape(size_t(rank), 1);
  shape[1] = c;
  return ctx.reshaped(v, shape);
}

absl::Status lowerBatchNorm(ExportContext &ctx) {
  const Type &x = ctx.operandType(0);
  int64_t c = x.dim(1), rank = x.rank();
  std::vector<int64_t> axes = batchAxes(rank);
  std::string mean = reduce(ctx, "ReduceMean", ctx.operand(0), axes, true);
  std::string centred = ctx.temp("Sub", {ctx.operand(0), mean});
  std::string variance = reduce(
      ctx, "ReduceMean", ctx.temp("Mul", {centred, centred}), axes, true);
  std::string invStd = ctx.temp(
      "Reciprocal",
      {ctx.temp("Sqrt",
                {ctx.temp("Add", {variance, ctx.scalar(ctx.getFloat("eps"),
                                                       x.dtype())})})});
  std::string scale =
      ctx.temp("Mul", {invStd, perChannel(ctx, ctx.operand(1), c, rank)});
  ctx.emit("Add",
           {ctx.temp("Mul", {centred, scale}),
            perChannel(ctx, ctx.operand(2), c, rank)},
           {ctx.result(0)});
  ctx.emit("Reshape", {mean, ctx.int64s({c})}, {ctx.result(1)});
  ctx.emit("Reshape", {variance, ctx.int64s({c})}, {ctx.result(2)});
  return absl::OkStatus();
}

/// dx = gamma * invStd * (dy - sum(dy) / m - centred * invStd^2 *
/// sum(dy * centred) / m), m the elements per channel, in an order that
/// holds at most three activation-sized tensors at once (x, dy and one
/// more, as remat's memory model counts the op: x, dy, dx). The textbook
/// form, (g - mean(g) - xhat * mean(g * xhat)) * invStd with g = dy *
/// gamma, held five (dy, xhat and three partial sums) at the last
/// subtraction.
absl::Status lowerBatchNormGrad(ExportContext &ctx) {
  const Type &x = ctx.operandType(0);
  DType dtype = x.dtype();
  int64_t c = x.dim(1), rank = x.rank();
  std::vector<int64_t> axes = batchAxes(rank);
  const std::string &dy = ctx.operand(2);
  auto [centred, invStd] = centre(ctx, ctx.operand(0), axes, dtype);
  std::string sumDy = reduce(ctx, "ReduceSum", dy, axes, true);
  std::string sumDyCentred =
      reduce(ctx, "ReduceSum", ctx.temp("Mul", {dy, centred}), axes, true);
  std::string count =
      ctx.scalar(double(x.numElements() / std::max<int64_t>(c, 1)), dtype);
  std::string slope =
      ctx.temp("Mul", {ctx.temp("Mul", {invStd, invStd}),
                       ctx.temp("Div", {sumDyCentred, count})});
  std::string offset = ctx.temp("Div", {sumDy, count});
  std::string centredPart = ctx.temp(
      "Add", {ctx.temp("Mul", {centred, slope}), offset});
  std::string scale = ctx.temp(
      "Mul", {invStd, perChannel(ctx, ctx.operand(1), c, rank)});
  ctx.emit("Mul", {ctx.temp("Sub", {dy, centredPart}), scale},
           {ctx.result(0)});
  ctx.emit("Reshape",
           {ctx.temp("Mul", {sumDyCentred, invStd}), ctx.int64s({c})},
           {ctx.result(1)});
  ctx.emit("Reshape", {sumDy, ctx.int64s({c})}, {ctx.result(2)});
  return absl::OkStatus();
}

absl::Status lowerBatchNormInference(ExportContext &ctx) {
  ctx.emit("BatchNormalization",
           {ctx.operand(0), ctx.operand(1), ctx.operand(2), ctx.operand(3),
            ctx.operand(4)},
           {ctx.result()}, {floatAttr("epsilon", ctx.getFloat("eps"))});
  return absl::OkStatus();
}

absl::Status lowerLayerNorm(ExportContext &ctx) {
  ctx.emit("LayerNormalization",
           {ctx.operand(0), ctx.operand(1), ctx.operand(2)}, {ctx.result()},
           {intAttr("axis", -1), floatAttr("epsilon", ctx.getFloat("eps"))});
  return absl::OkStatus();
}

/// Sums `v` over every dim but the last; a rank-1 `v` is its own sum.
std::string sumButLast(ExportContext &ctx, const std::string &v,
                       int64_t rank) {
  if (rank == 1)
    return v;
  return reduce(ctx, "ReduceSum", v, range(0, rank - 1), false);
}

absl::Status lowerLayerNormGrad(ExportContext &ctx) {
  const Type &x = ctx.operandType(0);
  Normalised n = normalise(ctx, ctx.operand(0), {-1}, x.dtype());
  const std::string &dy = ctx.operand(2);
  std::string g = ctx.temp("Mul", {dy, ctx.operand(1)});
  ctx.emit("Identity", {normGradInput(ctx, n, g, {-1})}, {ctx.result(0)});
  ctx.emit("Identity",
           {sumButLast(ctx, ctx.temp("Mul", {dy, n.xhat}), x.rank())},
           {ctx.result(1)});
  ctx.emit("Identity", {sumButLast(ctx, dy, x.rank())}, {ctx.result(2)});
  return absl::OkStatus();
}

/// Labels as int64 [..., 1], for GatherElements and OneHot.
std::string labelsLast(ExportContext &ctx, unsigned operand) {
  std::string labels = ctx.temp("Cast", {ctx.operand(operand)},
                                {intAttr("to", onnx::TensorProto::INT64)});
  return ctx.temp("Unsqueeze", {labels, ctx.int64s({-1})});
}

/// mean over label positions of -log_softmax(logits)[label].
absl::Status lowerSoftmaxCrossEntropy(ExportContext &ctx) {
  std::string logProbs =
      ctx.temp("LogSoftmax", {ctx.operand(0)}, {intAttr("axis", -1)});
  std::string picked = ctx.temp("GatherElements",
                                {logProbs, labelsLast(ctx, 1)},
                                {intAttr("axis", -1)});
  std::string mean = ctx.temp("ReduceMean", {picked}, {intAttr("keepdims", 0)});
  ctx.emit("Neg", {mean}, {ctx.result()});
  return absl::OkStatus();
}

/// (softmax(logits) - onehot(labels)) * dy / (number of label positions).
absl::Status lowerSoftmaxCrossEntropyGrad(ExportContext &ctx) {
  const Type &logits = ctx.operandType(0);
  DType dtype = logits.dtype();
  int64_t classes = logits.dim(logits.rank() - 1);
  int64_t positions = ctx.operandType(1).numElements();
  std::string probs =
      ctx.temp("Softmax", {ctx.operand(0)}, {intAttr("axis", -1)});
  std::string labels = ctx.temp("Cast", {ctx.operand(1)},
                                {intAttr("to", onnx::TensorProto::INT64)});
  std::string onehot =
      ctx.temp("OneHot",
               {labels, ctx.int64s({classes}), ctx.floats({0.0, 1.0}, {2}, dtype)},
               {intAttr("axis", -1)});
  std::string scale =
      ctx.temp("Div", {ctx.operand(2), ctx.scalar(double(positions), dtype)});
  ctx.emit("Mul", {ctx.temp("Sub", {probs, onehot}), scale}, {ctx.result()});
  return absl::OkStatus();
}

/// mean((pred - target)^2) over every element.
absl::Status lowerMseLoss(ExportContext &ctx) {
  std::string diff = ctx.temp("Sub", {ctx.operand(0), ctx.operand(1)});
  ctx.emit("ReduceMean", {ctx.temp("Mul", {diff, diff})}, {ctx.result()},
           {intAttr("keepdims", 0)});
  return absl::OkStatus();
}

} // namespace

void addNormalizationLowerings(LoweringTable &table) {
  table.add("softmax", lowerSoftmax);
  table.add("log_softmax", lowerLogSoftmax);
  table.add("softmax_grad", lowerSoftmaxGrad);
  table.add("log_softmax_grad", lowerLogSoftmaxGrad);
  table.add("batch_norm", lowerBatchNorm);
  table.add("batch_norm_grad", lowerBatchNormGrad);
  table.add("batch_norm_inference", lowerBatchNormInference);
  table.add("layer_norm", lowerLayerNorm);
  table.add("layer_norm_grad", lowerLayerNormGrad);
  table.add("softmax_cross_entropy", lowerSoftmaxCrossEntropy);
  table.add("softmax_cross_entropy_grad", lowerSoftmaxCrossEntropyGrad);
  table.add("mse_loss", lowerMseLoss);
}

} // namespace remat::onnxexport

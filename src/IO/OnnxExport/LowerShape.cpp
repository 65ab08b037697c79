//===- LowerShape.cpp - Shape, indexing and reduction ops as ONNX -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Views and copies that move elements (reshape, transpose, broadcast,
/// concat, split, slice, pad), indexing (gather, embedding) and reductions,
/// with their gradients: slice_grad pads dy into place (spacing it out
/// first where steps exceed 1), gather_grad scatter-adds dy (ScatterND,
/// `reduction=add`) into zeros computed from dy, so that no runtime folds
/// them into a constant held for the session.
///
//===----------------------------------------------------------------------===//

#include "ExportContext.h"

#include <numeric>

namespace remat::onnxexport {
namespace {

absl::Status lowerReshape(ExportContext &ctx) {
  ctx.emit("Reshape", {ctx.operand(0), ctx.int64s(ctx.resultType().shape())},
           {ctx.result()});
  return absl::OkStatus();
}

absl::Status lowerTranspose(ExportContext &ctx) {
  int64_t rank = ctx.operandType(0).rank();
  std::vector<int64_t> perm;
  for (int64_t d : ctx.getInts("perm"))
    perm.push_back(d < 0 ? d + rank : d);
  ctx.emit("Transpose", {ctx.operand(0)}, {ctx.result()},
           {intsAttr("perm", perm)});
  return absl::OkStatus();
}

absl::Status lowerBroadcast(ExportContext &ctx) {
  ctx.emit("Expand", {ctx.operand(0), ctx.int64s(ctx.getInts("shape"))},
           {ctx.result()});
  return absl::OkStatus();
}

absl::Status lowerConcat(ExportContext &ctx) {
  std::vector<std::string> inputs;
  for (unsigned i = 0; i < ctx.op().numOperands(); ++i)
    inputs.push_back(ctx.operand(i));
  ctx.emit("Concat", std::move(inputs), {ctx.result()},
           {intAttr("axis", ctx.getInt("axis"))});
  return absl::OkStatus();
}

absl::Status lowerSplit(ExportContext &ctx) {
  std::vector<std::string> outputs;
  for (unsigned i = 0; i < ctx.op().numResults(); ++i)
    outputs.push_back(ctx.result(i));
  ctx.emit("Split", {ctx.operand(0), ctx.int64s(ctx.getInts("sizes"))},
           std::move(outputs), {intAttr("axis", ctx.getInt("axis"))});
  return absl::OkStatus();
}

/// remat's steps, empty meaning all 1.
std::vector<int64_t> stepsOf(const ExportContext &ctx, int64_t rank) {
  llvm::ArrayRef<int64_t> steps = ctx.getInts("steps");
  return steps.empty() ? std::vector<int64_t>(size_t(rank), 1) : steps.vec();
}

std::vector<int64_t> allAxes(int64_t rank) {
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

absl::Status lowerSlice(ExportContext &ctx) {
  int64_t rank = ctx.operandType(0).rank();
  ctx.emit("Slice",
           {ctx.operand(0), ctx.int64s(ctx.getInts("starts")),
            ctx.int64s(ctx.getInts("ends")), ctx.int64s(allAxes(rank)),
            ctx.int64s(stepsOf(ctx, rank))},
           {ctx.result()});
  return absl::OkStatus();
}

/// dy's elements placed `step` apart along `dim`: [.., n, ..] as
/// [.., n, 1, ..], padded to [.., n, step, ..], flattened and cut to
/// (n - 1) * step + 1.
std::string spaceOut(ExportContext &ctx, const std::string &v,
                     std::vector<int64_t> &shape, int64_t dim, int64_t step) {
  int64_t n = shape[dim], rank = int64_t(shape.size());
  std::vector<int64_t> split = shape;
  split.insert(split.begin() + dim + 1, 1);
  std::vector<int64_t> pads(size_t(2 * (rank + 1)), 0);
  pads[size_t(rank + 1 + dim + 1)] = step - 1;
  std::string padded = ctx.temp(
      "Pad", {ctx.reshaped(v, split), ctx.int64s(pads)}, {});
  std::vector<int64_t> spaced = shape;
  spaced[dim] = n * step;
  std::string flat = ctx.reshaped(padded, spaced);
  shape[dim] = (n - 1) * step + 1;
  return ctx.temp("Slice", {flat, ctx.int64s({0}), ctx.int64s({shape[dim]}),
                            ctx.int64s({dim})});
}

absl::Status lowerSliceGrad(ExportContext &ctx) {
  const Type &dy = ctx.operandType(0);
  llvm::ArrayRef<int64_t> shape = ctx.getInts("shape"),
                          starts = ctx.getInts("starts");
  int64_t rank = dy.rank();
  std::vector<int64_t> steps = stepsOf(ctx, rank);
  std::vector<int64_t> window(dy.shape().begin(), dy.shape().end());
  std::string v = ctx.operand(0);
  for (int64_t d = 0; d < rank; ++d)
    if (steps[d] > 1 && window[d] > 1)
      v = spaceOut(ctx, v, window, d, steps[d]);
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank));
  for (int64_t d = 0; d < rank; ++d) {
    pads[d] = starts[d];
    pads[rank + d] = shape[d] - starts[d] - window[d];
  }
  ctx.emit("Pad", {v, ctx.int64s(pads)}, {ctx.result()});
  return absl::OkStatus();
}

absl::Status lowerPad(ExportContext &ctx) {
  std::vector<int64_t> pads = ctx.getInts("low").vec();
  llvm::append_range(pads, ctx.getInts("high"));
  ctx.emit("Pad",
           {ctx.operand(0), ctx.int64s(pads),
            ctx.scalar(ctx.getFloat("value"), ctx.resultType().dtype())},
           {ctx.result()});
  return absl::OkStatus();
}

absl::Status lowerGather(ExportContext &ctx) {
  ctx.emit("Gather", {ctx.operand(0), ctx.operand(1)}, {ctx.result()},
           {intAttr("axis", ctx.getInt("axis"))});
  return absl::OkStatus();
}

absl::Status lowerEmbedding(ExportContext &ctx) {
  ctx.emit("Gather", {ctx.operand(0), ctx.operand(1)}, {ctx.result()},
           {intAttr("axis", 0)});
  return absl::OkStatus();
}

/// Zeros of `shape` (dtype `dtype`): a runtime zero taken from `source`,
/// expanded, so that no runtime folds them into a constant.
std::string zerosFrom(ExportContext &ctx, const std::string &source,
                      llvm::ArrayRef<int64_t> shape, DType dtype) {
  return ctx.filledLike(source, shape, 0.0, dtype);
}

/// dy [pre, idx..., post] scatter-added into zeros [pre, size, post] at the
/// indices, with the gathered axis moved first for ScatterND and back.
absl::Status lowerGatherGrad(ExportContext &ctx) {
  // gather_grad(indices, dy).
  const Type &indices = ctx.operandType(0), &dy = ctx.operandType(1);
  const std::string &dyName = ctx.operand(1), &indexName = ctx.operand(0);
  const Type &result = ctx.resultType();
  int64_t rank = result.rank(), q = indices.rank();
  int64_t axis = ctx.getInt("axis");
  if (axis < 0)
    axis += rank;
  if (dy.numElements() == 0) {
    ctx.emit("Expand",
             {ctx.scalar(0.0, dy.dtype()), ctx.int64s(result.shape())},
             {ctx.result()});
    return absl::OkStatus();
  }
  // dy as [idx..., pre, post].
  std::vector<int64_t> perm;
  for (int64_t d = axis; d < axis + q; ++d)
    perm.push_back(d);
  for (int64_t d = 0; d < axis; ++d)
    perm.push_back(d);
  for (int64_t d = axis + q; d < dy.rank(); ++d)
    perm.push_back(d);
  std::string updates =
      ctx.temp("Transpose", {dyName}, {intsAttr("perm", perm)});
  // Zeros as [size, pre, post].
  std::vector<int64_t> moved = {result.dim(int(axis))};
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      moved.push_back(result.dim(int(d)));
  std::string zeros = zerosFrom(ctx, dyName, moved, dy.dtype());
  std::string index = ctx.temp(
      "Unsqueeze",
      {ctx.temp("Cast", {indexName},
                {intAttr("to", onnx::TensorProto::INT64)}),
       ctx.int64s({-1})});
  std::string scattered =
      ctx.temp("ScatterND", {zeros, index, updates},
               {stringAttr("reduction", "add")});
  std::vector<int64_t> back;
  for (int64_t d = 1; d <= axis; ++d)
    back.push_back(d);
  back.push_back(0);
  for (int64_t d = axis + 1; d < rank; ++d)
    back.push_back(d);
  ctx.emit("Transpose", {scattered}, {ctx.result()}, {intsAttr("perm", back)});
  return absl::OkStatus();
}

/// remat's axes, negatives counted from the back.
std::vector<int64_t> reducedAxes(const ExportContext &ctx) {
  int64_t rank = ctx.operandType(0).rank();
  std::vector<int64_t> axes;
  for (int64_t d : ctx.getInts("axes"))
    axes.push_back(d < 0 ? d + rank : d);
  return axes.empty() ? allAxes(rank) : axes;
}

template <const char *OnnxOp> absl::Status lowerReduce(ExportContext &ctx) {
  std::vector<int64_t> axes = reducedAxes(ctx);
  // A scalar operand has no axes to reduce.
  if (axes.empty())
    ctx.emit("Identity", {ctx.operand(0)}, {ctx.result()});
  else
    reduce(ctx, OnnxOp, ctx.operand(0), axes, ctx.getBool("keepdims"),
           ctx.result());
  return absl::OkStatus();
}

constexpr char kReduceSum[] = "ReduceSum", kReduceMean[] = "ReduceMean",
               kReduceMax[] = "ReduceMax";

/// dy split equally among the positions where x equals its maximum.
absl::Status lowerReduceMaxGrad(ExportContext &ctx) {
  const Type &x = ctx.operandType(0);
  std::vector<int64_t> kept(x.shape().begin(), x.shape().end());
  std::vector<int64_t> axes = reducedAxes(ctx);
  for (int64_t d : axes)
    kept[d] = 1;
  std::string y = ctx.reshaped(ctx.operand(1), kept);
  std::string dy = ctx.reshaped(ctx.operand(2), kept);
  std::string isMax = ctx.temp("Equal", {ctx.operand(0), y});
  std::string count = reduce(
      ctx, "ReduceSum",
      ctx.temp("Cast", {isMax}, {intAttr("to", onnxElementType(x.dtype()))}),
      axes, true);
  std::string share = ctx.temp("Div", {dy, count});
  ctx.emit("Where", {isMax, share, ctx.scalar(0.0, x.dtype())},
           {ctx.result()});
  return absl::OkStatus();
}

} // namespace

void addShapeLowerings(LoweringTable &table) {
  table.add("reshape", lowerReshape);
  table.add("transpose", lowerTranspose);
  table.add("broadcast", lowerBroadcast);
  table.add("concat", lowerConcat);
  table.add("split", lowerSplit);
  table.add("slice", lowerSlice);
  table.add("slice_grad", lowerSliceGrad);
  table.add("pad", lowerPad);
  table.add("gather", lowerGather);
  table.add("embedding", lowerEmbedding);
  table.add("gather_grad", lowerGatherGrad);
  table.add("reduce_sum", lowerReduce<kReduceSum>);
  table.add("reduce_mean", lowerReduce<kReduceMean>);
  table.add("reduce_max", lowerReduce<kReduceMax>);
  table.add("reduce_max_grad", lowerReduceMaxGrad);
}

} // namespace remat::onnxexport

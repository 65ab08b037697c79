//===- LowerNeural.cpp - Matmul, convolution and pooling as ONNX ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Matmul, 2-D convolution and pooling, and their gradients:
///
///   conv2d_grad_input  = ConvTranspose(dy, w) with conv2d's window and an
///                        output padding that restores the input's size;
///   conv2d_grad_filter = a grouped Conv of x, channels as the batch, with dy
///                        as the filters (strides and dilations swapped),
///                        cut to the kernel and transposed;
///   max_pool2d_grad    = MaxPool's Indices, then ScatterElements (add) of
///                        dy into zeros: ONNX Runtime's MaxPool picks a
///                        window's first maximum in row-major order, as
///                        remat's kernel does;
///   avg_pool2d_grad    = dy over each window's non-padding count, spread by
///                        a ConvTranspose with a ones kernel per channel.
///
//===----------------------------------------------------------------------===//

#include "ExportContext.h"

#include <numeric>

namespace remat::onnxexport {
namespace {

/// ONNX's pads [h_begin, w_begin, h_end, w_end] of remat's symmetric ones.
std::vector<int64_t> onnxPads(llvm::ArrayRef<int64_t> padding) {
  return {padding[0], padding[1], padding[0], padding[1]};
}

/// Transpose of the last two dims of a rank-`rank` tensor.
std::vector<int64_t> swapLastTwo(int64_t rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

absl::Status lowerMatmul(ExportContext &ctx) {
  std::string a = ctx.operand(0), b = ctx.operand(1);
  if (ctx.getBool("transpose_a"))
    a = ctx.temp("Transpose", {a},
                 {intsAttr("perm", swapLastTwo(ctx.operandType(0).rank()))});
  if (ctx.getBool("transpose_b"))
    b = ctx.temp("Transpose", {b},
                 {intsAttr("perm", swapLastTwo(ctx.operandType(1).rank()))});
  ctx.emit("MatMul", {a, b}, {ctx.result()});
  return absl::OkStatus();
}

std::vector<NodeAttr> convWindow(const ExportContext &ctx) {
  return {intsAttr("strides", ctx.getInts("strides")),
          intsAttr("pads", onnxPads(ctx.getInts("padding"))),
          intsAttr("dilations", ctx.getInts("dilation")),
          intAttr("group", ctx.getInt("groups"))};
}

absl::Status lowerConv(ExportContext &ctx) {
  ctx.emit("Conv", {ctx.operand(0), ctx.operand(1)}, {ctx.result()},
           convWindow(ctx));
  return absl::OkStatus();
}

/// The output padding after which ConvTranspose with the window of a
/// forward op of input dims `input` and output dims `output` gives `input`.
std::vector<int64_t> outputPadding(llvm::ArrayRef<int64_t> input,
                                   llvm::ArrayRef<int64_t> output,
                                   llvm::ArrayRef<int64_t> kernel,
                                   llvm::ArrayRef<int64_t> strides,
                                   llvm::ArrayRef<int64_t> padding,
                                   llvm::ArrayRef<int64_t> dilation) {
  std::vector<int64_t> extra;
  for (int d = 0; d < 2; ++d)
    extra.push_back(input[d] - (strides[d] * (output[d] - 1) +
                                dilation[d] * (kernel[d] - 1) + 1 -
                                2 * padding[d]));
  return extra;
}

absl::Status lowerConvGradInput(ExportContext &ctx) {
  const Type &dy = ctx.operandType(0), &w = ctx.operandType(1);
  llvm::ArrayRef<int64_t> input = ctx.getInts("input_shape");
  std::vector<NodeAttr> attrs = convWindow(ctx);
  attrs.push_back(intsAttr(
      "output_padding",
      outputPadding(input.drop_front(2), dy.shape().drop_front(2),
                    w.shape().drop_front(2), ctx.getInts("strides"),
                    ctx.getInts("padding"), ctx.getInts("dilation"))));
  ctx.emit("ConvTranspose", {ctx.operand(0), ctx.operand(1)}, {ctx.result()},
           std::move(attrs));
  return absl::OkStatus();
}

/// dW[g*Cog+o, i] = sum over n of x[n, g*Cig+i] (*) dy[n, g*Cog+o]: a
/// grouped Conv of x as [Cig, G*N, H, W] with dy as [G*Cog, N, Ho, Wo].
absl::Status lowerConvGradFilter(ExportContext &ctx) {
  const Type &x = ctx.operandType(0);
  llvm::ArrayRef<int64_t> filter = ctx.getInts("filter_shape");
  int64_t n = x.dim(0), h = x.dim(2), w = x.dim(3);
  int64_t groups = ctx.getInt("groups"), cig = filter[1];
  std::string grouped =
      ctx.reshaped(ctx.operand(0), {n, groups, cig, h, w});
  std::string channelsFirst =
      ctx.temp("Transpose", {grouped}, {intsAttr("perm", {2, 1, 0, 3, 4})});
  std::string input = ctx.reshaped(channelsFirst, {cig, groups * n, h, w});
  std::string filters = ctx.temp("Transpose", {ctx.operand(1)},
                                 {intsAttr("perm", {1, 0, 2, 3})});
  llvm::ArrayRef<int64_t> strides = ctx.getInts("strides"),
                          dilation = ctx.getInts("dilation");
  std::string full = ctx.temp(
      "Conv", {input, filters},
      {intsAttr("strides", dilation), intsAttr("dilations", strides),
       intsAttr("pads", onnxPads(ctx.getInts("padding"))),
       intAttr("group", groups)});
  // The correlation may run past the kernel where the window leaves rows
  // of x unread: keep [kh, kw].
  std::string kernel =
      ctx.temp("Slice", {full, ctx.int64s({0, 0}),
                         ctx.int64s({filter[2], filter[3]}),
                         ctx.int64s({2, 3})});
  ctx.emit("Transpose", {kernel}, {ctx.result()},
           {intsAttr("perm", {1, 0, 2, 3})});
  return absl::OkStatus();
}

/// remat's empty strides mean the kernel's.
std::vector<int64_t> poolStrides(const ExportContext &ctx) {
  llvm::ArrayRef<int64_t> strides = ctx.getInts("strides");
  return strides.empty() ? ctx.getInts("kernel").vec() : strides.vec();
}

std::vector<NodeAttr> poolWindow(const ExportContext &ctx) {
  return {intsAttr("kernel_shape", ctx.getInts("kernel")),
          intsAttr("strides", poolStrides(ctx)),
          intsAttr("pads", onnxPads(ctx.getInts("padding")))};
}

absl::Status lowerMaxPool(ExportContext &ctx) {
  ctx.emit("MaxPool", {ctx.operand(0)}, {ctx.result()}, poolWindow(ctx));
  return absl::OkStatus();
}

absl::Status lowerMaxPoolGrad(ExportContext &ctx) {
  const Type &x = ctx.operandType(0);
  std::string pooled = ctx.freshName("MaxPool"),
              indices = ctx.freshName("Indices");
  ctx.emit("MaxPool", {ctx.operand(0)}, {pooled, indices}, poolWindow(ctx));
  std::string zeros =
      ctx.filledLike(ctx.operand(0), {x.numElements()}, 0.0, x.dtype());
  std::string scattered = ctx.temp(
      "ScatterElements",
      {zeros, ctx.reshaped(indices, {-1}), ctx.reshaped(ctx.operand(1), {-1})},
      {intAttr("axis", 0), stringAttr("reduction", "add")});
  ctx.emit("Reshape", {scattered, ctx.int64s(x.shape())}, {ctx.result()});
  return absl::OkStatus();
}

absl::Status lowerAvgPool(ExportContext &ctx) {
  std::vector<NodeAttr> attrs = poolWindow(ctx);
  attrs.push_back(intAttr("count_include_pad", 0));
  ctx.emit("AveragePool", {ctx.operand(0)}, {ctx.result()}, std::move(attrs));
  return absl::OkStatus();
}

/// The number of input rows a window starting at `start` (padding counted
/// in) of `kernel` rows covers in an input of `size` rows.
int64_t coveredRows(int64_t start, int64_t kernel, int64_t size) {
  return std::min(start + kernel, size) - std::max<int64_t>(start, 0);
}

absl::Status lowerAvgPoolGrad(ExportContext &ctx) {
  const Type &dy = ctx.operandType(0);
  llvm::ArrayRef<int64_t> input = ctx.getInts("input_shape"),
                          kernel = ctx.getInts("kernel"),
                          padding = ctx.getInts("padding");
  std::vector<int64_t> strides = poolStrides(ctx);
  int64_t channels = input[1], ho = dy.dim(2), wo = dy.dim(3);
  // Each window's non-padding count, known from the shapes alone.
  std::vector<double> counts;
  for (int64_t i = 0; i < ho; ++i)
    for (int64_t j = 0; j < wo; ++j)
      counts.push_back(
          double(coveredRows(i * strides[0] - padding[0], kernel[0],
                             input[2]) *
                 coveredRows(j * strides[1] - padding[1], kernel[1],
                             input[3])));
  std::string divided = ctx.temp(
      "Div", {ctx.operand(0), ctx.floats(counts, {1, 1, ho, wo}, dy.dtype())});
  std::vector<double> ones(size_t(channels * kernel[0] * kernel[1]), 1.0);
  std::string spread = ctx.floats(ones, {channels, 1, kernel[0], kernel[1]},
                                  dy.dtype());
  std::vector<int64_t> dilation = {1, 1};
  ctx.emit("ConvTranspose", {divided, spread}, {ctx.result()},
           {intsAttr("kernel_shape", kernel), intsAttr("strides", strides),
            intsAttr("pads", onnxPads(padding)), intAttr("group", channels),
            intsAttr("output_padding",
                     outputPadding(input.drop_front(2), dy.shape().drop_front(2),
                                   kernel, strides, padding, dilation))});
  return absl::OkStatus();
}

absl::Status lowerGlobalAvgPool(ExportContext &ctx) {
  ctx.emit("ReduceMean", {ctx.operand(0)}, {ctx.result()},
           {intsAttr("axes", {2, 3}), intAttr("keepdims", 0)});
  return absl::OkStatus();
}

/// [N, C, H, W] as [N, C, H, 1, W, 1], expanded to [N, C, H, s, W, s].
absl::Status lowerUpsampleNearest(ExportContext &ctx) {
  const Type &x = ctx.operandType(0);
  int64_t scale = ctx.getInt("scale");
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  std::string spaced = ctx.reshaped(ctx.operand(0), {n, c, h, 1, w, 1});
  std::string expanded = ctx.temp(
      "Expand", {spaced, ctx.int64s({n, c, h, scale, w, scale})});
  ctx.emit("Reshape", {expanded, ctx.int64s(ctx.resultType().shape())},
           {ctx.result()});
  return absl::OkStatus();
}

} // namespace

void addNeuralLowerings(LoweringTable &table) {
  table.add("matmul", lowerMatmul);
  table.add("conv2d", lowerConv);
  table.add("conv2d_grad_input", lowerConvGradInput);
  table.add("conv2d_grad_filter", lowerConvGradFilter);
  table.add("max_pool2d", lowerMaxPool);
  table.add("max_pool2d_grad", lowerMaxPoolGrad);
  table.add("avg_pool2d", lowerAvgPool);
  table.add("avg_pool2d_grad", lowerAvgPoolGrad);
  table.add("global_avg_pool", lowerGlobalAvgPool);
  table.add("upsample_nearest", lowerUpsampleNearest);
}

} // namespace remat::onnxexport

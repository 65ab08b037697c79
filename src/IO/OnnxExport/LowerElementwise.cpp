//===- LowerElementwise.cpp - Elementwise ops as ONNX -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Elementwise ops, their gradients, views and fills. ONNX broadcasts as
/// numpy does, as remat's binary ops do.
///
//===----------------------------------------------------------------------===//

#include "ExportContext.h"

#include <cmath>

namespace remat::onnxexport {
namespace {

/// `x * Phi(x)` pieces: Phi(x) = 0.5 * (1 + erf(x / sqrt(2))).
std::string normalCdf(ExportContext &ctx, const std::string &x, DType dtype) {
  std::string scaled = ctx.temp("Mul", {x, ctx.scalar(M_SQRT1_2, dtype)});
  std::string erf = ctx.temp("Erf", {scaled});
  std::string onePlus = ctx.temp("Add", {erf, ctx.scalar(1.0, dtype)});
  return ctx.temp("Mul", {onePlus, ctx.scalar(0.5, dtype)});
}

template <const char *OnnxOp> absl::Status direct(ExportContext &ctx) {
  std::vector<std::string> inputs;
  for (unsigned i = 0; i < ctx.op().numOperands(); ++i)
    inputs.push_back(ctx.operand(i));
  ctx.emit(OnnxOp, std::move(inputs), {ctx.result()});
  return absl::OkStatus();
}

constexpr char kAdd[] = "Add", kSub[] = "Sub", kMul[] = "Mul", kDiv[] = "Div",
               kPow[] = "Pow", kNeg[] = "Neg", kExp[] = "Exp", kLog[] = "Log",
               kTanh[] = "Tanh", kSigmoid[] = "Sigmoid", kRelu[] = "Relu",
               kSqrt[] = "Sqrt", kSin[] = "Sin", kCos[] = "Cos",
               kErf[] = "Erf", kSum[] = "Sum", kIdentity[] = "Identity";

absl::Status lowerSquare(ExportContext &ctx) {
  ctx.emit("Mul", {ctx.operand(0), ctx.operand(0)}, {ctx.result()});
  return absl::OkStatus();
}

absl::Status lowerGelu(ExportContext &ctx) {
  DType dtype = ctx.resultType().dtype();
  ctx.emit("Mul", {ctx.operand(0), normalCdf(ctx, ctx.operand(0), dtype)},
           {ctx.result()});
  return absl::OkStatus();
}

/// dy * (Phi(x) + x * phi(x)), phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
absl::Status lowerGeluGrad(ExportContext &ctx) {
  DType dtype = ctx.resultType().dtype();
  const std::string &x = ctx.operand(0), &dy = ctx.operand(1);
  std::string square = ctx.temp("Mul", {x, x});
  std::string exponent = ctx.temp("Mul", {square, ctx.scalar(-0.5, dtype)});
  std::string density = ctx.temp(
      "Mul", {ctx.temp("Exp", {exponent}),
              ctx.scalar(1.0 / std::sqrt(2.0 * M_PI), dtype)});
  std::string slope = ctx.temp(
      "Add", {normalCdf(ctx, x, dtype), ctx.temp("Mul", {x, density})});
  ctx.emit("Mul", {dy, slope}, {ctx.result()});
  return absl::OkStatus();
}

/// dy times a 0/1 mask of the same dtype. Not `Where(mask, dy, 0)`: ONNX
/// Runtime's CPU `Where` allocates two scratch tensors of its result's size
/// (X where the mask holds, Y where it does not, then merged), which at a
/// ReLU gradient are two activations that remat's memory model does not
/// count (docs/export.md). The product differs from `Where` only where the
/// mask is 0 and dy is not finite (NaN instead of 0) and in the sign of a
/// zero.
std::string masked(ExportContext &ctx, const std::string &mask,
                   const std::string &dy, DType dtype) {
  std::string unit =
      ctx.temp("Cast", {mask}, {intAttr("to", onnxElementType(dtype))});
  return ctx.temp("Mul", {dy, unit});
}

/// dy where y > 0, else 0.
absl::Status lowerReluGrad(ExportContext &ctx) {
  DType dtype = ctx.resultType().dtype();
  std::string positive =
      ctx.temp("Greater", {ctx.operand(0), ctx.scalar(0.0, dtype)});
  ctx.emit("Identity", {masked(ctx, positive, ctx.operand(1), dtype)},
           {ctx.result()});
  return absl::OkStatus();
}

/// dy * y * (1 - y).
absl::Status lowerSigmoidGrad(ExportContext &ctx) {
  DType dtype = ctx.resultType().dtype();
  const std::string &y = ctx.operand(0), &dy = ctx.operand(1);
  std::string complement = ctx.temp("Sub", {ctx.scalar(1.0, dtype), y});
  std::string scaled = ctx.temp("Mul", {dy, y});
  ctx.emit("Mul", {scaled, complement}, {ctx.result()});
  return absl::OkStatus();
}

/// dy * (1 - y * y).
absl::Status lowerTanhGrad(ExportContext &ctx) {
  DType dtype = ctx.resultType().dtype();
  const std::string &y = ctx.operand(0), &dy = ctx.operand(1);
  std::string square = ctx.temp("Mul", {y, y});
  std::string complement = ctx.temp("Sub", {ctx.scalar(1.0, dtype), square});
  ctx.emit("Mul", {dy, complement}, {ctx.result()});
  return absl::OkStatus();
}

absl::Status lowerClip(ExportContext &ctx) {
  DType dtype = ctx.resultType().dtype();
  ctx.emit("Clip",
           {ctx.operand(0), ctx.scalar(ctx.getFloat("min"), dtype),
            ctx.scalar(ctx.getFloat("max"), dtype)},
           {ctx.result()});
  return absl::OkStatus();
}

/// dy where min < x < max, else 0.
absl::Status lowerClipGrad(ExportContext &ctx) {
  DType dtype = ctx.resultType().dtype();
  const std::string &x = ctx.operand(0);
  std::string above =
      ctx.temp("Greater", {x, ctx.scalar(ctx.getFloat("min"), dtype)});
  std::string below =
      ctx.temp("Less", {x, ctx.scalar(ctx.getFloat("max"), dtype)});
  std::string inside = ctx.temp("And", {above, below});
  ctx.emit("Identity", {masked(ctx, inside, ctx.operand(1), dtype)},
           {ctx.result()});
  return absl::OkStatus();
}

template <int Fill> absl::Status lowerFilledLike(ExportContext &ctx) {
  const Type &type = ctx.resultType();
  ctx.emit("Identity",
           {ctx.filledLike(ctx.operand(0), type.shape(), Fill, type.dtype())},
           {ctx.result()});
  return absl::OkStatus();
}

/// A constant of any size: Expand of the scalar, which runtimes fold into
/// an initializer.
absl::Status lowerConstant(ExportContext &ctx) {
  const Type &type = ctx.resultType();
  std::string value = ctx.scalar(ctx.getFloat("value"), type.dtype());
  ctx.emit("Expand", {value, ctx.int64s(type.shape())}, {ctx.result()});
  return absl::OkStatus();
}

/// Entries [..., i, j] with j > i set to `value`: a constant mask of the
/// last two dims.
absl::Status lowerCausalMask(ExportContext &ctx) {
  const Type &type = ctx.resultType();
  int64_t rows = type.dim(type.rank() - 2), cols = type.dim(type.rank() - 1);
  std::vector<bool> above;
  above.reserve(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      above.push_back(j > i);
  std::string mask = ctx.bools(above, {rows, cols});
  ctx.emit("Where",
           {mask, ctx.scalar(ctx.getFloat("value"), type.dtype()),
            ctx.operand(0)},
           {ctx.result()});
  return absl::OkStatus();
}

} // namespace

void addElementwiseLowerings(LoweringTable &table) {
  table.add("add", direct<kAdd>);
  table.add("sub", direct<kSub>);
  table.add("mul", direct<kMul>);
  table.add("div", direct<kDiv>);
  table.add("pow", direct<kPow>);
  table.add("neg", direct<kNeg>);
  table.add("exp", direct<kExp>);
  table.add("log", direct<kLog>);
  table.add("tanh", direct<kTanh>);
  table.add("sigmoid", direct<kSigmoid>);
  table.add("relu", direct<kRelu>);
  table.add("sqrt", direct<kSqrt>);
  table.add("sin", direct<kSin>);
  table.add("cos", direct<kCos>);
  table.add("erf", direct<kErf>);
  table.add("add_n", direct<kSum>);
  table.add("identity", direct<kIdentity>);
  table.add("checkpoint", direct<kIdentity>);
  table.add("stop_gradient", direct<kIdentity>);
  table.add("square", lowerSquare);
  table.add("gelu", lowerGelu);
  table.add("gelu_grad", lowerGeluGrad);
  table.add("relu_grad", lowerReluGrad);
  table.add("sigmoid_grad", lowerSigmoidGrad);
  table.add("tanh_grad", lowerTanhGrad);
  table.add("clip", lowerClip);
  table.add("clip_grad", lowerClipGrad);
  table.add("zeros_like", lowerFilledLike<0>);
  table.add("ones_like", lowerFilledLike<1>);
  table.add("constant", lowerConstant);
  table.add("causal_mask", lowerCausalMask);
}

} // namespace remat::onnxexport

//===- ConvertElementwise.cpp - ONNX elementwise math -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Add, Sub, Mul, Div, Mod (folded only), Pow, the unary functions, Gelu, Clip, Identity, Cast
/// and CastLike.
/// Nodes whose operands are all known are folded (shape arithmetic); Pow by
/// a known 2 or 0.5 becomes square or sqrt.
///
//===----------------------------------------------------------------------===//

#include "Folding.h"

#include <cmath>
#include <limits>

namespace remat::onnximport {
namespace {

/// Integer division rounding toward zero, as ONNX Div; 0 for a zero divisor
/// (the caller reports it).
int64_t divide(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }

template <char Op> absl::Status convertBinary(ImportContext &ctx) {
  static constexpr llvm::StringLiteral kinds[] = {"add", "sub", "mul", "div"};
  constexpr int index = Op == '+' ? 0 : Op == '-' ? 1 : Op == '*' ? 2 : 3;
  const KnownTensor *a = ctx.maybeKnown(0);
  const KnownTensor *b = ctx.maybeKnown(1);
  if (a && b) {
    if (Op == '/' && !b->isFloat() && llvm::is_contained(b->ints, 0))
      return ctx.error("integer division by zero in a constant");
    REMAT_ASSIGN_OR_RETURN(
        KnownTensor folded,
        foldBinary(
            ctx, *a, *b,
            [](double x, double y) {
              return Op == '+' ? x + y : Op == '-' ? x - y : Op == '*' ? x * y : x / y;
            },
            [](int64_t x, int64_t y) {
              return Op == '+' ? x + y : Op == '-' ? x - y : Op == '*' ? x * y : divide(x, y);
            }));
    ctx.defineKnown(0, std::move(folded));
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  REMAT_ASSIGN_OR_RETURN(Value * y, ctx.input(1));
  return ctx.op(kinds[index], {x, y}, {}, 0).status();
}

/// Mod of known tensors (the legacy exporter's attention head arithmetic at
/// opset 20): fmod 0 takes the divisor's sign, as Python's %, fmod 1 the
/// dividend's, as C's.
absl::Status convertMod(ImportContext &ctx) {
  const KnownTensor *a = ctx.maybeKnown(0);
  const KnownTensor *b = ctx.maybeKnown(1);
  if (!a || !b)
    return ctx.error("Mod of a computed value is not supported (only of "
                     "constants)");
  REMAT_ASSIGN_OR_RETURN(int64_t fmod, ctx.intAttr("fmod", 0));
  if (!b->isFloat() && llvm::is_contained(b->ints, 0))
    return ctx.error("integer modulo by zero in a constant");
  REMAT_ASSIGN_OR_RETURN(
      KnownTensor folded,
      foldBinary(
          ctx, *a, *b,
          [&](double x, double y) {
            return fmod ? std::fmod(x, y) : x - y * std::floor(x / y);
          },
          [&](int64_t x, int64_t y) {
            int64_t r = y == -1 ? 0 : x % y; // INT64_MIN % -1 overflows
            if (!fmod && r != 0 && (r < 0) != (y < 0))
              r += y;
            return r;
          }));
  ctx.defineKnown(0, std::move(folded));
  return absl::OkStatus();
}

absl::Status convertPow(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  if (const KnownTensor *exponent = ctx.maybeKnown(1);
      exponent && exponent->numel() == 1 &&
      ctx.inputType(1)->rank() <= x->type().rank()) {
    double e = exponent->at(0);
    if (e == 2)
      return ctx.op("square", {x}, {}, 0).status();
    if (e == 0.5 && x->type().isFloat())
      return ctx.op("sqrt", {x}, {}, 0).status();
  }
  REMAT_ASSIGN_OR_RETURN(Value * y, ctx.input(1));
  if (y->type().dtype() != x->type().dtype())
    return ctx.error("exponent type {} differs from the base type {}; remat's "
                     "pow needs one type",
                     y->type().str(), x->type().str());
  return ctx.op("pow", {x, y}, {}, 0).status();
}

template <const char *Kind> absl::Status convertUnary(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  return ctx.op(Kind, {x}, {}, 0).status();
}

constexpr char kRelu[] = "relu", kSqrt[] = "sqrt", kErf[] = "erf",
               kExp[] = "exp", kLog[] = "log", kTanh[] = "tanh",
               kSigmoid[] = "sigmoid", kNeg[] = "neg";

/// Clip's bound from input `i` (opset 11+), or +-infinity when absent.
absl::StatusOr<double> clipBound(ImportContext &ctx, int i, double fallback) {
  if (!ctx.hasInput(i))
    return fallback;
  REMAT_ASSIGN_OR_RETURN(KnownTensor bound,
                         ctx.knownInput(i, i == 1 ? "min" : "max"));
  if (bound.numel() != 1)
    return ctx.error("{} must be a scalar", i == 1 ? "min" : "max");
  return bound.at(0);
}

absl::Status convertClip(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  constexpr double inf = std::numeric_limits<double>::infinity();
  REMAT_ASSIGN_OR_RETURN(double min, clipBound(ctx, 1, -inf));
  REMAT_ASSIGN_OR_RETURN(double max, clipBound(ctx, 2, inf));
  if (min == 0 && max == inf)
    return ctx.op("relu", {x}, {}, 0).status();
  if (!(min <= max))
    return ctx.error("min {} exceeds max {}", min, max);
  return ctx.op("clip", {x}, {{"min", min}, {"max", max}}, 0).status();
}

/// Identity is no op at all: its output names its input's value.
absl::Status convertIdentity(ImportContext &ctx) {
  if (const KnownTensor *known = ctx.maybeKnown(0)) {
    ctx.defineKnown(0, *known);
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  ctx.define(0, x);
  return absl::OkStatus();
}

/// Opset 20's Gelu: the exact (erf) form is remat's gelu; the tanh
/// approximation is not supported.
absl::Status convertGelu(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(std::string approximate,
                         ctx.stringAttr("approximate", "none"));
  if (approximate != "none")
    return ctx.error("approximate '{}' is not supported (only 'none', the "
                     "erf form)",
                     approximate);
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  return ctx.op("gelu", {x}, {}, 0).status();
}

/// Input 0 as `dtype`: a known tensor converted, a computed value only if
/// it already is one (Cast and CastLike; their `saturate` concerns float8).
absl::Status castTo(ImportContext &ctx, DType dtype) {
  if (const KnownTensor *known = ctx.maybeKnown(0)) {
    KnownTensor cast;
    cast.dtype = dtype;
    cast.shape = known->shape;
    for (int64_t i = 0; i < known->numel(); ++i) {
      double v = known->at(i);
      if (cast.isFloat())
        cast.floats.push_back(v);
      else if (cast.dtype == DType::Bool)
        cast.ints.push_back(v != 0);
      else
        cast.ints.push_back(known->isFloat() ? int64_t(std::trunc(v))
                                             : known->ints[i]);
    }
    ctx.defineKnown(0, std::move(cast));
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  if (x->type().dtype() != dtype)
    return ctx.error("a cast of a computed value from {} to {} is not "
                     "supported",
                     dtypeName(x->type().dtype()).str(),
                     dtypeName(dtype).str());
  ctx.define(0, x);
  return absl::OkStatus();
}

absl::Status convertCast(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(int64_t to, ctx.intAttr("to", 0));
  absl::StatusOr<DType> dtype = dtypeOfOnnx(int(to));
  if (!dtype.ok())
    return ctx.error("attribute 'to': {}", std::string(dtype.status().message()));
  return castTo(ctx, *dtype);
}

/// CastLike (opset 15): Cast to the dtype of input 1, whose value is unread.
absl::Status convertCastLike(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type target, ctx.inputType(1));
  return castTo(ctx, target.dtype());
}

} // namespace

void addElementwiseConverters(ConverterTable &table) {
  table["Add"] = convertBinary<'+'>;
  table["Sub"] = convertBinary<'-'>;
  table["Mul"] = convertBinary<'*'>;
  table["Div"] = convertBinary<'/'>;
  table["Pow"] = convertPow;
  table["Mod"] = convertMod;
  table["Relu"] = convertUnary<kRelu>;
  table["Sqrt"] = convertUnary<kSqrt>;
  table["Erf"] = convertUnary<kErf>;
  table["Exp"] = convertUnary<kExp>;
  table["Log"] = convertUnary<kLog>;
  table["Tanh"] = convertUnary<kTanh>;
  table["Sigmoid"] = convertUnary<kSigmoid>;
  table["Neg"] = convertUnary<kNeg>;
  table["Clip"] = convertClip;
  table["Identity"] = convertIdentity;
  table["Cast"] = convertCast;
  table["CastLike"] = convertCastLike;
  table["Gelu"] = convertGelu;
}

} // namespace remat::onnximport

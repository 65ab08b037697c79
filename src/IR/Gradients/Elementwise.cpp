//===- Elementwise.cpp - Gradient rules of elementwise math ---------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Unary rules multiply dy by the derivative, built from elementwise ops or,
/// for relu, gelu, sigmoid and tanh, their backward ops. Binary rules sum the
/// broadcast gradient back to each operand's shape. Integer operands get no
/// gradient.
///
//===----------------------------------------------------------------------===//

#include "GradientUtils.h"

#include <functional>
#include <numbers>

namespace remat {
using namespace grad;

namespace {
/// dx from (ctx, x, y, dy) for a unary op y = f(x).
using UnaryGrad = std::function<Value *(const GradientContext &, Value *x,
                                        Value *y, Value *dy)>;
} // namespace

static void setUnary(OpRegistry &registry, llvm::StringRef kind,
                     UnaryGrad dx) {
  setRule(registry, kind,
          [dx = std::move(dx)](const GradientContext &ctx)
              -> absl::StatusOr<Grads> {
            Grads grads = none(ctx);
            if (wants(ctx, 0))
              grads[0] = dx(ctx, ctx.operand(0), ctx.result(), ctx.resultGrad());
            return finish(ctx, grads);
          });
}

/// `kind`(a, b) for a backward op or elementwise op of two operands.
static Value *binary(const GradientContext &ctx, llvm::StringRef kind, Value *a,
                     Value *b) {
  return ctx.builder().op(kind, {a, b});
}

static Value *unary(const GradientContext &ctx, llvm::StringRef kind,
                    Value *x) {
  return ctx.builder().op(kind, {x});
}

static Value *scalarLike(const GradientContext &ctx, double value, Value *v) {
  return ctx.scalar(value, v->type().dtype());
}

static void registerUnaryGradients(OpRegistry &registry) {
  setUnary(registry, "neg", [](auto &ctx, Value *, Value *, Value *dy) {
    return unary(ctx, "neg", dy);
  });
  // d(x*x) = 2x dy.
  setUnary(registry, "square", [](auto &ctx, Value *x, Value *, Value *dy) {
    return binary(ctx, "mul", dy,
                  binary(ctx, "mul", x, scalarLike(ctx, 2.0, x)));
  });
  setUnary(registry, "exp", [](auto &ctx, Value *, Value *y, Value *dy) {
    return binary(ctx, "mul", dy, y);
  });
  setUnary(registry, "log", [](auto &ctx, Value *x, Value *, Value *dy) {
    return binary(ctx, "div", dy, x);
  });
  // d sqrt(x) = dy / (2 sqrt(x)).
  setUnary(registry, "sqrt", [](auto &ctx, Value *, Value *y, Value *dy) {
    return binary(ctx, "div", dy,
                  binary(ctx, "mul", y, scalarLike(ctx, 2.0, y)));
  });
  setUnary(registry, "sin", [](auto &ctx, Value *x, Value *, Value *dy) {
    return binary(ctx, "mul", dy, unary(ctx, "cos", x));
  });
  setUnary(registry, "cos", [](auto &ctx, Value *x, Value *, Value *dy) {
    return unary(ctx, "neg", binary(ctx, "mul", dy, unary(ctx, "sin", x)));
  });
  // d erf(x) = dy * 2 / sqrt(pi) * e^(-x^2).
  setUnary(registry, "erf", [](auto &ctx, Value *x, Value *, Value *dy) {
    Value *density = unary(ctx, "exp", unary(ctx, "neg", unary(ctx, "square", x)));
    return binary(ctx, "mul", dy,
                  binary(ctx, "mul", density,
                         scalarLike(ctx, std::numbers::inv_sqrtpi * 2, x)));
  });
  setUnary(registry, "clip", [](auto &ctx, Value *x, Value *, Value *dy) {
    const OpSignature &sig = ctx.signature();
    return ctx.builder().op("clip_grad", {x, dy},
                            {{"min", sig.getFloat("min")},
                             {"max", sig.getFloat("max")}});
  });
  setUnary(registry, "relu", [](auto &ctx, Value *, Value *y, Value *dy) {
    return binary(ctx, "relu_grad", y, dy);
  });
  setUnary(registry, "sigmoid", [](auto &ctx, Value *, Value *y, Value *dy) {
    return binary(ctx, "sigmoid_grad", y, dy);
  });
  setUnary(registry, "tanh", [](auto &ctx, Value *, Value *y, Value *dy) {
    return binary(ctx, "tanh_grad", y, dy);
  });
  setUnary(registry, "gelu", [](auto &ctx, Value *x, Value *, Value *dy) {
    return binary(ctx, "gelu_grad", x, dy);
  });
}

static absl::StatusOr<Grads> addGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  for (unsigned i = 0; i < 2; ++i)
    if (wants(ctx, i))
      grads[i] = ctx.sumToShape(ctx.resultGrad(), ctx.operand(i)->type());
  return finish(ctx, grads);
}

static absl::StatusOr<Grads> subGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  Value *dy = ctx.resultGrad();
  if (wants(ctx, 0))
    grads[0] = ctx.sumToShape(dy, ctx.operand(0)->type());
  if (wants(ctx, 1))
    grads[1] = ctx.sumToShape(unary(ctx, "neg", dy), ctx.operand(1)->type());
  return finish(ctx, grads);
}

static absl::StatusOr<Grads> mulGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  Value *dy = ctx.resultGrad();
  Value *a = ctx.operand(0), *b = ctx.operand(1);
  if (wants(ctx, 0))
    grads[0] = ctx.sumToShape(binary(ctx, "mul", dy, b), a->type());
  if (wants(ctx, 1))
    grads[1] = ctx.sumToShape(binary(ctx, "mul", dy, a), b->type());
  return finish(ctx, grads);
}

/// y = a / b: da = dy / b, db = -dy * y / b.
static absl::StatusOr<Grads> divGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  Value *dy = ctx.resultGrad();
  Value *a = ctx.operand(0), *b = ctx.operand(1);
  Value *dyOverB = nullptr;
  if (wants(ctx, 0) || wants(ctx, 1))
    dyOverB = binary(ctx, "div", dy, b);
  if (wants(ctx, 0))
    grads[0] = ctx.sumToShape(dyOverB, a->type());
  if (wants(ctx, 1))
    grads[1] = ctx.sumToShape(
        unary(ctx, "neg", binary(ctx, "mul", dyOverB, ctx.result())),
        b->type());
  return finish(ctx, grads);
}

/// y = a ^ b: da = dy * b * a^(b-1), db = dy * y * log(a).
static absl::StatusOr<Grads> powGrad(const GradientContext &ctx) {
  Grads grads = none(ctx);
  Value *dy = ctx.resultGrad();
  Value *a = ctx.operand(0), *b = ctx.operand(1);
  if (wants(ctx, 0)) {
    Value *bMinusOne = binary(ctx, "sub", b, scalarLike(ctx, 1.0, b));
    Value *slope = binary(ctx, "mul", b, binary(ctx, "pow", a, bMinusOne));
    grads[0] = ctx.sumToShape(binary(ctx, "mul", dy, slope), a->type());
  }
  if (wants(ctx, 1)) {
    Value *slope = binary(ctx, "mul", ctx.result(), unary(ctx, "log", a));
    grads[1] = ctx.sumToShape(binary(ctx, "mul", dy, slope), b->type());
  }
  return finish(ctx, grads);
}

void registerElementwiseGradients(OpRegistry &registry) {
  registerUnaryGradients(registry);
  setRule(registry, "add", addGrad);
  setRule(registry, "sub", subGrad);
  setRule(registry, "mul", mulGrad);
  setRule(registry, "div", divGrad);
  setRule(registry, "pow", powGrad);
}

} // namespace remat

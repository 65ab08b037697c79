//===- Elementwise.cpp - Unary and broadcasting binary ops ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Elementwise math. Binary ops follow numpy broadcasting and need equal
/// dtypes. Each costs one FLOP per result element (the cost model's rule for
/// elementwise ops; profiled costs go in a `cost` attribute). The backward
/// ops of the nonlinearities (relu_grad, ...) take the forward's input or
/// output and the result gradient dy, of one float type, and cost a few FLOPs
/// per element.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

static absl::StatusOr<TypeList> inferBinary(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  absl::StatusOr<Shape> shape =
      broadcastShapes(sig.operand(0).shape(), sig.operand(1).shape());
  if (!shape.ok())
    return invalidArgument("'{}' {}", sig.def().name,
                           std::string(shape.status().message()));
  return TypeList{Type(sig.operand(0).dtype(), *shape)};
}

static absl::StatusOr<TypeList> inferFloatUnary(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  return TypeList{sig.operand(0)};
}

/// Two float operands of one type (the forward's x or y, and dy).
/// The `min <= max` bounds of clip and clip_grad.
static absl::Status checkClipBounds(const OpSignature &sig) {
  double min = sig.getFloat("min"), max = sig.getFloat("max");
  if (!(min <= max))
    return invalidArgument("'{}' min {} must not exceed max {}",
                           sig.def().name, min, max);
  return absl::OkStatus();
}

static absl::StatusOr<TypeList> inferClip(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(checkClipBounds(sig));
  return inferFloatUnary(sig);
}

static absl::StatusOr<TypeList> inferActivationGrad(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  if (sig.operand(1) != sig.operand(0))
    return invalidArgument("'{}' dy {} must have the type of operand 0 {}",
                           sig.def().name, sig.operand(1).str(),
                           sig.operand(0).str());
  return TypeList{sig.operand(1)};
}

void registerElementwiseOps(OpRegistry &registry) {
  struct Entry {
    const char *name;
    const char *summary;
  };
  // Defined on every dtype.
  for (Entry e : {Entry{"neg", "Negation."}, Entry{"relu", "max(x, 0)."},
                  Entry{"square", "x * x."}})
    registry.add({.name = e.name,
                  .summary = e.summary,
                  .minOperands = 1,
                  .maxOperands = 1,
                  .inferTypes = inferSameAsFirst,
                  .flops = flopsPerResultElement(1)});
  // Defined on float dtypes only.
  for (Entry e : {Entry{"exp", "e^x."}, Entry{"log", "Natural logarithm."},
                  Entry{"tanh", "Hyperbolic tangent."},
                  Entry{"sigmoid", "1 / (1 + e^-x)."},
                  Entry{"gelu", "x * Phi(x), the exact (erf) form."},
                  Entry{"sqrt", "Square root."}, Entry{"sin", "Sine."},
                  Entry{"cos", "Cosine."},
                  Entry{"erf", "The Gauss error function."}})
    registry.add({.name = e.name,
                  .summary = e.summary,
                  .minOperands = 1,
                  .maxOperands = 1,
                  .inferTypes = inferFloatUnary,
                  .flops = flopsPerResultElement(1)});
  for (Entry e : {Entry{"add", "a + b, broadcasting."},
                  Entry{"sub", "a - b, broadcasting."},
                  Entry{"mul", "a * b, broadcasting."},
                  Entry{"div", "a / b, broadcasting."},
                  Entry{"pow", "a ^ b, broadcasting."}})
    registry.add({.name = e.name,
                  .summary = e.summary,
                  .minOperands = 2,
                  .maxOperands = 2,
                  .inferTypes = inferBinary,
                  .flops = flopsPerResultElement(1)});
  registry.add(
      {.name = "clip",
       .summary = "min(max(x, min), max) of float x {min, max: floats, min <= "
                  "max}; result x's type.",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = {{"min", AttrKind::Float, std::nullopt},
                 {"max", AttrKind::Float, std::nullopt}},
       .inferTypes = inferClip,
       .flops = flopsPerResultElement(2)});
  registry.add(
      {.name = "clip_grad",
       .summary = "Backward of clip from its input x and dy {clip's "
                  "attributes}: dy where min < x < max, else 0.",
       .minOperands = 2,
       .maxOperands = 2,
       .attrs = {{"min", AttrKind::Float, std::nullopt},
                 {"max", AttrKind::Float, std::nullopt}},
       .inferTypes =
           [](const OpSignature &sig) -> absl::StatusOr<TypeList> {
         REMAT_RETURN_IF_ERROR(checkClipBounds(sig));
         return inferActivationGrad(sig);
       },
       .flops = flopsPerResultElement(2)});
  struct GradEntry {
    const char *name;
    const char *summary;
    int64_t flops;
  };
  for (GradEntry e :
       {GradEntry{"relu_grad", "Backward of relu from its result y and dy: dy "
                               "where y > 0, else 0.",
                  1},
        GradEntry{"gelu_grad", "Backward of gelu from its input x and dy: dy * "
                               "(Phi(x) + x * phi(x)), the exact (erf) form.",
                  8},
        GradEntry{"sigmoid_grad", "Backward of sigmoid from its result y and "
                                  "dy: dy * y * (1 - y).",
                  3},
        GradEntry{"tanh_grad", "Backward of tanh from its result y and dy: dy "
                               "* (1 - y * y).",
                  3}})
    registry.add({.name = e.name,
                  .summary = e.summary,
                  .minOperands = 2,
                  .maxOperands = 2,
                  .inferTypes = inferActivationGrad,
                  .flops = flopsPerResultElement(e.flops)});
}

} // namespace remat

//===- Elementwise.cpp - Unary and broadcasting binary ops ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Elementwise math. Binary ops follow numpy broadcasting and need equal
/// dtypes. Each costs one FLOP per result element (the cost model's rule for
/// elementwise ops; profiled costs go in a `cost` attribute).
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
                  Entry{"cos", "Cosine."}})
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
}

} // namespace remat

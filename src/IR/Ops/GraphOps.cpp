//===- GraphOps.cpp - Declarations, constants and identities ----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The ops that shape the graph rather than compute: `input` and `param`
/// declarations, constants, the identity family (identity, stop_gradient,
/// checkpoint) and the fills and sums that gradients need (zeros_like,
/// ones_like, add_n).
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

static absl::StatusOr<TypeList> inferDeclared(const OpSignature &sig) {
  return invalidArgument("'{}' declares its type", sig.def().name);
}

static absl::StatusOr<TypeList> inferConstant(const OpSignature &sig) {
  std::optional<DType> dtype = parseDType(sig.getString("dtype"));
  if (!dtype)
    return invalidArgument("'constant' dtype '{}' is unknown",
                           sig.getString("dtype").str());
  for (int64_t d : sig.getIntList("shape"))
    if (d < 0)
      return invalidArgument("'constant' shape has negative dimension {}", d);
  return TypeList{Type(*dtype, sig.getIntList("shape"))};
}

static absl::StatusOr<TypeList> inferAddN(const OpSignature &sig) {
  for (unsigned i = 1; i < sig.numOperands(); ++i)
    if (sig.operand(i) != sig.operand(0))
      return invalidArgument("'add_n' operand {} has type {} but operand 0 has {}",
                             i, sig.operand(i).str(), sig.operand(0).str());
  return TypeList{sig.operand(0)};
}

static void addIdentityLike(OpRegistry &registry, const char *name,
                            const char *summary) {
  registry.add({.name = name,
                .summary = summary,
                .minOperands = 1,
                .maxOperands = 1,
                .inferTypes = inferSameAsFirst,
                .flops = zeroFlops,
                .flags = OpFlagView});
}

void registerGraphOps(OpRegistry &registry) {
  registry.add({.name = "input",
                .summary = "Declares a fed graph input of the written type.",
                .inferTypes = inferDeclared,
                .flops = zeroFlops,
                .flags = OpFlagLeaf});
  registry.add({.name = "param",
                .summary = "Declares a trainable parameter of the written type.",
                .inferTypes = inferDeclared,
                .flops = zeroFlops,
                .flags = OpFlagLeaf});
  registry.add({.name = "constant",
                .summary = "A tensor filled with one scalar `value`.",
                .attrs = {{"value", AttrKind::Float, std::nullopt},
                          {"shape", AttrKind::IntList, Attribute({})},
                          {"dtype", AttrKind::String, Attribute("f32")}},
                .inferTypes = inferConstant,
                .flops = zeroFlops});
  addIdentityLike(registry, "identity", "Returns its operand (a view).");
  addIdentityLike(registry, "stop_gradient",
                  "Returns its operand; no gradient flows through it.");
  addIdentityLike(registry, "checkpoint",
                  "Returns its operand and marks it as a tensor to keep.");
  registry.add({.name = "zeros_like",
                .summary = "Zeros of the operand's type.",
                .minOperands = 1,
                .maxOperands = 1,
                .inferTypes = inferSameAsFirst,
                .flops = zeroFlops});
  registry.add({.name = "ones_like",
                .summary = "Ones of the operand's type.",
                .minOperands = 1,
                .maxOperands = 1,
                .inferTypes = inferSameAsFirst,
                .flops = zeroFlops});
  registry.add({.name = "add_n",
                .summary = "Sum of one or more tensors of the same type.",
                .minOperands = 1,
                .maxOperands = OpDef::kVariadic,
                .inferTypes = inferAddN,
                .flops = [](const OpSignature &sig, llvm::ArrayRef<Type> results) {
                  return int64_t(sig.numOperands() - 1) * results[0].numElements();
                }});
}

} // namespace remat

//===- Extern.cpp - Ops of another framework, known by their effects -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `extern` and `extern_view` stand for an op of another framework's graph
/// (an aten op of PyTorch's joint graph) that remat plans but never runs:
/// the op is what it is told, its result types (`types`), its FLOPs
/// (`flops`) and its name there (`fn`, and `node` for the op itself), and
/// for `extern` the operands whose dead buffer its kernel writes result 0
/// into (`inplace`, docs/memory-model.md). A planner needs nothing else;
/// the framework runs the copies the rewrite makes, which keep every
/// attribute. They have no gradient rule and no kernel: a graph of them
/// arrives differentiated (`buildJointTrainingGraph`).
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace remat {
using namespace ops;

/// One type as `Type::str` writes it: `f32[8,16]`, `i64[]`.
static absl::StatusOr<Type> parseTypeText(llvm::StringRef text) {
  auto [dtypeName, rest] = text.split('[');
  std::optional<DType> dtype = parseDType(dtypeName);
  if (!dtype)
    return invalidArgument("'extern' type '{}' has unknown dtype '{}'",
                           text.str(), dtypeName.str());
  if (!rest.consume_back("]"))
    return invalidArgument("'extern' type '{}' is not DTYPE[DIMS]",
                           text.str());
  Shape shape;
  if (!rest.empty()) {
    llvm::SmallVector<llvm::StringRef, 4> dims;
    rest.split(dims, ',');
    for (llvm::StringRef dim : dims) {
      int64_t size;
      if (dim.trim().getAsInteger(10, size) || size < 0)
        return invalidArgument("'extern' type '{}' has bad dimension '{}'",
                               text.str(), dim.str());
      shape.push_back(size);
    }
  }
  Type type(*dtype, shape);
  if (!type.checkedByteSize())
    return invalidArgument("'extern' type '{}' overflows int64 bytes",
                           text.str());
  return type;
}

/// The space-separated types of the `types` attribute, at least one.
static absl::StatusOr<TypeList> inferExtern(const OpSignature &sig) {
  llvm::SmallVector<llvm::StringRef, 4> texts;
  llvm::SplitString(sig.getString("types"), texts);
  if (texts.empty())
    return invalidArgument("'{}' needs at least one type in 'types'",
                           sig.def().name);
  TypeList types;
  for (llvm::StringRef text : texts) {
    REMAT_ASSIGN_OR_RETURN(Type type, parseTypeText(text));
    types.push_back(type);
  }
  if (sig.getInt("flops") < 0)
    return invalidArgument("'{}' attribute 'flops' must be non-negative",
                           sig.def().name);
  return types;
}

/// `extern`'s results, and its `inplace` operands: each one, once, of result
/// 0's type.
static absl::StatusOr<TypeList> inferExternInPlace(const OpSignature &sig) {
  REMAT_ASSIGN_OR_RETURN(TypeList types, inferExtern(sig));
  llvm::ArrayRef<int64_t> inPlace = sig.getIntList("inplace");
  for (size_t i = 0; i < inPlace.size(); ++i) {
    int64_t index = inPlace[i];
    if (index < 0 || index >= int64_t(sig.numOperands()))
      return invalidArgument("'extern' attribute 'inplace' names operand {} "
                             "of {}",
                             index, sig.numOperands());
    if (llvm::is_contained(inPlace.take_front(i), index))
      return invalidArgument("'extern' attribute 'inplace' names operand {} "
                             "twice",
                             index);
    if (sig.operand(index) != types[0])
      return invalidArgument("'extern' result {} cannot be written in place "
                             "of operand {} ({})",
                             types[0].str(), index, sig.operand(index).str());
  }
  return types;
}

static absl::StatusOr<TypeList> inferExternView(const OpSignature &sig) {
  REMAT_ASSIGN_OR_RETURN(TypeList types, inferExtern(sig));
  if (types.size() != 1)
    return invalidArgument("'extern_view' has one result, 'types' gives {}",
                           types.size());
  return types;
}

static int64_t externFlops(const OpSignature &sig, llvm::ArrayRef<Type>) {
  return sig.getInt("flops");
}

void registerExternOps(OpRegistry &registry) {
  std::vector<AttrSpec> attrs = {{"fn", AttrKind::String, std::nullopt},
                                 {"types", AttrKind::String, std::nullopt},
                                 {"flops", AttrKind::Int, Attribute(0)},
                                 {"node", AttrKind::String, Attribute("")}};
  std::vector<AttrSpec> externAttrs = attrs;
  externAttrs.push_back({"inplace", AttrKind::IntList, Attribute()});
  registry.add({.name = "extern",
                .summary = "An op of another framework (`fn`, its op `node` "
                           "there): results of the written `types`, costing "
                           "`flops`, result 0 written in place of the first "
                           "`inplace` operand nothing reads later; planned, "
                           "never run.",
                .maxOperands = OpDef::kVariadic,
                .attrs = externAttrs,
                .inferTypes = inferExternInPlace,
                .flops = externFlops,
                .flags = OpFlagForeign});
  registry.add({.name = "extern_view",
                .summary = "An `extern` whose one result aliases operand 0 "
                           "(a framework's view).",
                .minOperands = 1,
                .maxOperands = OpDef::kVariadic,
                .attrs = attrs,
                .inferTypes = inferExternView,
                .flops = externFlops,
                .flags = OpFlagView | OpFlagForeign});
}

} // namespace remat

//===- Builder.cpp - Creating ops with inferred types -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Builder.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace remat {

/// Checks written attributes against the schema: known names, no repeats, the
/// right kinds, and every required attribute present.
static absl::Status checkAttrs(const OpDef &def, llvm::ArrayRef<NamedAttr> attrs) {
  // An op has a handful of attributes: a scan beats a hash set.
  auto isGiven = [&attrs](llvm::StringRef name, size_t before) {
    return llvm::any_of(attrs.take_front(before), [name](const NamedAttr &attr) {
      return attr.name == name;
    });
  };
  for (size_t i = 0, e = attrs.size(); i < e; ++i) {
    const NamedAttr &attr = attrs[i];
    if (isGiven(attr.name, i))
      return invalidArgument("'{}' has attribute '{}' twice", def.name, attr.name);
    if (attr.name == kCostAttr) {
      if (!attr.value.is(AttrKind::Int) || attr.value.asInt() < 0)
        return invalidArgument("'{}' attribute 'cost' must be a non-negative int",
                               def.name);
      continue;
    }
    if (attr.name == kRecomputeAttr) {
      if (!attr.value.is(AttrKind::Bool))
        return invalidArgument("'{}' attribute 'recompute' must be a bool",
                               def.name);
      continue;
    }
    const AttrSpec *spec = def.findAttrSpec(attr.name);
    if (!spec)
      return invalidArgument("'{}' has no attribute '{}'", def.name, attr.name);
    bool intAsFloat = spec->kind == AttrKind::Float && attr.value.is(AttrKind::Int);
    if (!attr.value.is(spec->kind) && !intAsFloat)
      return invalidArgument("'{}' attribute '{}' must be {}, got {}", def.name,
                             attr.name, attrKindName(spec->kind).str(),
                             attrKindName(attr.value.kind()).str());
  }
  for (const AttrSpec &spec : def.attrs)
    if (!spec.defaultValue && !isGiven(spec.name, attrs.size()))
      return invalidArgument("'{}' needs attribute '{}'", def.name, spec.name);
  return absl::OkStatus();
}

static absl::Status checkArity(const OpDef &def, size_t numOperands) {
  if (numOperands >= def.minOperands && numOperands <= def.maxOperands)
    return absl::OkStatus();
  std::string expected;
  if (def.minOperands == def.maxOperands)
    expected = fmt::format("{}", def.minOperands);
  else if (def.maxOperands == OpDef::kVariadic)
    expected = fmt::format("at least {}", def.minOperands);
  else
    expected = fmt::format("{} to {}", def.minOperands, def.maxOperands);
  return invalidArgument("'{}' takes {} operand{}, got {}", def.name, expected,
                         def.maxOperands == 1 ? "" : "s", numOperands);
}

absl::StatusOr<llvm::SmallVector<Type, 1>>
inferResultTypes(const OpDef &def, llvm::ArrayRef<Type> operandTypes,
                 llvm::ArrayRef<NamedAttr> attrs) {
  if (def.hasFlag(OpFlagLeaf))
    return invalidArgument("'{}' declares its type; it cannot be inferred",
                           def.name);
  REMAT_RETURN_IF_ERROR(checkArity(def, operandTypes.size()));
  REMAT_RETURN_IF_ERROR(checkAttrs(def, attrs));
  REMAT_ASSIGN_OR_RETURN(auto results,
                         def.inferTypes(OpSignature(def, operandTypes, attrs)));
  for (const Type &type : results)
    if (!type.checkedByteSize())
      return invalidArgument("'{}' result {} is negative or overflows int64 bytes",
                             def.name, type.str());
  return results;
}

Value *Builder::declare(llvm::StringRef kind, llvm::StringRef name, Type type) {
  const OpDef *def = registry_.lookup(kind);
  assert(def && "graph ops are always registered");
  Op *op = graph_.createOp(*def, {}, {}, {std::move(type)}, {name.str()},
                           insertBefore_);
  op->setRegion(region_);
  op->setDevice(device_);
  return op->result();
}

Value *Builder::input(llvm::StringRef name, Type type) {
  return declare("input", name, std::move(type));
}

Value *Builder::param(llvm::StringRef name, Type type) {
  return declare("param", name, std::move(type));
}

absl::StatusOr<Op *> Builder::tryCreate(llvm::StringRef kind,
                                        llvm::ArrayRef<Value *> operands,
                                        AttrList attrs,
                                        llvm::ArrayRef<std::string> resultNames) {
  const OpDef *def = registry_.lookup(kind);
  if (!def)
    return invalidArgument("unknown op '{}'", kind.str());
  llvm::SmallVector<Type, 4> operandTypes;
  for (Value *operand : operands)
    operandTypes.push_back(operand->type());
  REMAT_ASSIGN_OR_RETURN(auto resultTypes,
                         inferResultTypes(*def, operandTypes, attrs));
  if (!resultNames.empty() && resultNames.size() != resultTypes.size())
    return invalidArgument("'{}' has {} results but {} names were given",
                           def->name, resultTypes.size(), resultNames.size());
  Op *op = graph_.createOp(*def, operands, std::move(attrs), resultTypes,
                           resultNames, insertBefore_);
  op->setRegion(region_);
  op->setDevice(device_);
  return op;
}

Op *Builder::create(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
                    AttrList attrs, llvm::ArrayRef<std::string> resultNames) {
  for (Value *operand : operands)
    if (!operand)
      return nullptr;
  absl::StatusOr<Op *> op =
      tryCreate(kind, operands, std::move(attrs), resultNames);
  if (op.ok())
    return *op;
  if (status_.ok())
    status_ = op.status();
  return nullptr;
}

Value *Builder::op(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
                   AttrList attrs, llvm::StringRef name) {
  Op *created = create(kind, operands, std::move(attrs), {});
  if (!created)
    return nullptr;
  if (!name.empty())
    graph_.renameValue(created->result(), graph_.uniqueName(name));
  return created->result();
}

Builder::RegionScope::RegionScope(Builder &builder, llvm::StringRef name)
    : builder_(builder), saved_(builder.region_) {
  builder_.region_ =
      internTag(saved_.empty() ? name.str() : saved_.str() + "/" + name.str());
}

} // namespace remat

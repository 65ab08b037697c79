//===- ForcedDependency.cpp - Ordering by data ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Orders a root copy after its trigger: by a control dependency, or, for
/// backends that drop those, by reading `k - 0 * g0^2` (docs/recompute.md).
///
//===----------------------------------------------------------------------===//

#include "Recompute/Rematerializer.h"

#include "remat/IR/OpRegistry.h"

#include "llvm/ADT/Twine.h"

namespace remat::recompute {

void Rematerializer::orderAfter(Op *copy, Op *trigger) {
  if (!options_.forceDataDependency) {
    copy->addControlDep(trigger);
    return;
  }
  forceDataDependency(copy, trigger);
}

void Rematerializer::forceDataDependency(Op *copy, Op *trigger) {
  Value *gradient = nullptr;
  for (Value *result : trigger->results())
    if (isFloatDType(result->type().dtype())) {
      gradient = result;
      break;
    }
  int slot = -1;
  for (unsigned i = 0; gradient && i < copy->numOperands(); ++i) {
    const Type &type = copy->operand(i)->type();
    if (type.dtype() == gradient->type().dtype() &&
        (slot < 0 || type.byteSize() < copy->operand(slot)->type().byteSize()))
      slot = int(i);
  }
  if (slot < 0) {
    copy->addControlDep(trigger);
    return;
  }
  Value *zero = zeroOf(gradient);
  Value *operand = copy->operand(slot);
  Op *dependent =
      createHelper("sub", {operand, zero}, {}, operand->type(),
                   (llvm::Twine(operand->name()) + ".after").str(), copy);
  forced_.set(dependent->result()->id());
  copy->setOperand(slot, dependent->result());
}

Value *Rematerializer::zeroOf(Value *gradient) {
  growTables();
  if (Value *existing = zeroOf_[gradient->id()])
    return existing;
  Op *before = &*std::next(gradient->producer()->getIterator());
  const Type &type = gradient->type();
  Type scalar(type.dtype(), {});
  std::string base = (llvm::Twine(gradient->name()) + ".first").str();
  Value *element = gradient;
  if (type.rank() > 0) {
    std::vector<int64_t> starts(type.rank(), 0), ends(type.rank(), 1);
    Value *slice =
        createHelper("slice", {gradient}, {{"starts", starts}, {"ends", ends}},
                     Type(type.dtype(), std::vector<int64_t>(type.rank(), 1)),
                     base, before)
            ->result();
    element =
        createHelper("reshape", {slice}, {{"shape", std::vector<int64_t>()}},
                     scalar, base + ".scalar", before)
            ->result();
  }
  Value *square = createHelper("mul", {element, element}, {}, scalar,
                               base + ".square", before)
                      ->result();
  Value *zero =
      createHelper("constant", {},
                   {{"value", 0.0}, {"dtype", dtypeName(type.dtype()).str()}},
                   scalar, "zero", before)
          ->result();
  Value *product =
      createHelper("mul", {square, zero}, {}, scalar, base + ".zero", before)
          ->result();
  zeroOf_[gradient->id()] = product;
  return product;
}

Op *Rematerializer::createHelper(llvm::StringRef kind,
                                 llvm::ArrayRef<Value *> operands,
                                 AttrList attrs, Type resultType,
                                 const std::string &name, Op *before) {
  Op *op = graph_.createOp(*OpRegistry::global().lookup(kind), operands,
                           std::move(attrs), {std::move(resultType)},
                           {graph_.uniqueName(name)}, before);
  growTables();
  created_.push_back(op);
  return op;
}

} // namespace remat::recompute

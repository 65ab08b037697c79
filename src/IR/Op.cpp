//===- Op.cpp - Ops and values ----------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Op.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <mutex>

namespace remat {

llvm::StringRef internTag(llvm::StringRef tag) {
  if (tag.empty())
    return {};
  // Passes tag op after op alike (a region, a device): the last tag this
  // thread interned is found without the lock or a hash.
  thread_local llvm::StringRef last;
  if (tag == last)
    return last;
  // Leaked on purpose, as types are (Type.cpp).
  static auto *tags = new llvm::StringSet<>();
  static auto *mutex = new std::mutex();
  std::lock_guard<std::mutex> lock(*mutex);
  last = tags->insert(tag).first->getKey();
  return last;
}

void Value::addUse(Op *user, unsigned operandIndex) {
  user->useSlots_[operandIndex] = uses_.size();
  uses_.push_back({user, operandIndex});
}

void Value::removeUse(Op *user, unsigned operandIndex) {
  unsigned slot = user->useSlots_[operandIndex];
  assert(slot < uses_.size() && uses_[slot] == (Use{user, operandIndex}) &&
         "use list out of step with operands");
  // Order of uses carries no meaning: move the last use into the hole and tell
  // its user where it went, so removal is O(1) at any fan-out.
  uses_[slot] = uses_.back();
  uses_[slot].user->useSlots_[uses_[slot].operandIndex] = slot;
  uses_.pop_back();
}

Op::Op(Graph *graph, const OpDef *def, unsigned id, unsigned numResults,
       Value *results)
    : graph_(graph), def_(def), id_(id), numResults_(numResults),
      results_(results), attrs_(internAttrList({})) {}

Op::~Op() {
  assert(operands_.empty() && "delete an op through Graph::erase");
  for (unsigned i = 0; i < numResults_; ++i)
    results_[i].~Value();
}

void Op::setOperand(unsigned i, Value *value) {
  operands_[i]->removeUse(this, i);
  operands_[i] = value;
  value->addUse(this, i);
}

llvm::SmallVector<Value *, 2> Op::results() const {
  llvm::SmallVector<Value *, 2> values;
  for (unsigned i = 0; i < numResults_; ++i)
    values.push_back(&results_[i]);
  return values;
}

llvm::SmallVector<Type, 4> Op::operandTypes() const {
  llvm::SmallVector<Type, 4> types;
  for (Value *operand : operands_)
    types.push_back(operand->type());
  return types;
}

llvm::SmallVector<Type, 2> Op::resultTypes() const {
  llvm::SmallVector<Type, 2> types;
  for (unsigned i = 0; i < numResults_; ++i)
    types.push_back(results_[i].type());
  return types;
}

void Op::setAttr(llvm::StringRef name, Attribute value) {
  // Others may share the list: the op gets a changed copy.
  AttrList attrs = *attrs_;
  auto written = llvm::find_if(
      attrs, [&](const NamedAttr &attr) { return attr.name == name; });
  if (written != attrs.end())
    written->value = std::move(value);
  else
    attrs.push_back({name.str(), std::move(value)});
  attrs_ = internAttrList(std::move(attrs));
}

void Op::addControlDep(Op *dep) {
  if (llvm::is_contained(controlDeps_, dep))
    return;
  controlDeps_.push_back(dep);
  dep->controlUsers_.push_back(this);
}

void Op::removeControlDep(Op *dep) {
  auto it = llvm::find(controlDeps_, dep);
  if (it == controlDeps_.end())
    return;
  controlDeps_.erase(it);
  dep->controlUsers_.erase(llvm::find(dep->controlUsers_, this));
}

void Op::dropAllReferences() {
  for (unsigned i = 0, e = operands_.size(); i < e; ++i)
    operands_[i]->removeUse(this, i);
  operands_.clear();
  useSlots_.clear();
  while (!controlDeps_.empty())
    removeControlDep(controlDeps_.back());
}

void Op::forgetReferences() {
  operands_.clear();
  controlDeps_.clear();
  controlUsers_.clear();
}

std::string Op::describe() const {
  std::string names;
  for (unsigned i = 0; i < numResults_; ++i)
    names += fmt::format("{}%{}", i ? ", " : "", results_[i].name().str());
  if (numResults_ == 0)
    return kind().str();
  return fmt::format("{} = {}", names, kind().str());
}

} // namespace remat

//===- Graph.cpp - A dataflow graph and its schedule ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Graph.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <new>

namespace remat {

Graph::~Graph() {
  // Every op goes, so no use list needs to stay exact: drop the references
  // without the bookkeeping, destroy each op in one walk and leave the
  // memory to the arena.
  for (auto it = ops_.begin(), end = ops_.end(); it != end;) {
    Op &op = *it++;
    op.forgetReferences();
    op.~Op();
  }
  ops_.clearAndLeakNodesUnsafely();
}

Op *Graph::createOp(const OpDef &def, llvm::ArrayRef<Value *> operands,
                    AttrList attrs, llvm::ArrayRef<Type> resultTypes,
                    llvm::ArrayRef<std::string> resultNames,
                    Op *insertBefore) {
  return createOpImpl(def, operands, internAttrList(std::move(attrs)),
                      resultTypes, resultNames, insertBefore,
                      /*registerNames=*/true);
}

Op *Graph::createOpImpl(const OpDef &def, llvm::ArrayRef<Value *> operands,
                    const AttrList *attrs, llvm::ArrayRef<Type> resultTypes,
                    llvm::ArrayRef<std::string> resultNames, Op *insertBefore,
                    bool registerNames) {
  assert((resultNames.empty() || resultNames.size() == resultTypes.size()) &&
         "one name per result, or none");
  unsigned numResults = resultTypes.size();
  Value *results = numResults ? arena_.Allocate<Value>(numResults) : nullptr;
  for (unsigned i = 0; i < numResults; ++i)
    new (results + i) Value();
  Op *op = new (arena_.Allocate<Op>())
      Op(this, &def, nextOpId_++, numResults, results);
  for (unsigned i = 0, e = resultTypes.size(); i < e; ++i) {
    Value &result = op->results_[i];
    llvm::StringRef base = resultNames.empty() ? llvm::StringRef() : resultNames[i];
    if (base.empty())
      base = def.name;
    if (registerNames) {
      // One hash lookup when the name is free, the common case.
      auto [entry, inserted] = valuesByName_.try_emplace(base, &result);
      if (!inserted)
        entry = valuesByName_.try_emplace(suffixedName(base), &result).first;
      result.nameEntry_ = &*entry;
    }
    result.type_ = resultTypes[i];
    result.producer_ = op;
    result.resultIndex_ = i;
    result.id_ = nextValueId_++;
  }
  op->operands_.assign(operands.begin(), operands.end());
  op->useSlots_.resize(operands.size());
  for (unsigned i = 0, e = operands.size(); i < e; ++i)
    operands[i]->addUse(op, i);
  op->attrs_ = attrs;
  if (insertBefore)
    ops_.insert(insertBefore->getIterator(), op);
  else
    ops_.push_back(op);
  ++numOps_;
  if (!def.hasFlag(OpFlagLeaf))
    return op;
  if (def.name == "input")
    inputs_.push_back(op->result());
  else if (def.name == "param")
    params_.push_back(op->result());
  return op;
}

Op *Graph::createCopyOf(const Op &original, llvm::ArrayRef<Value *> operands,
                        llvm::ArrayRef<std::string> resultNames,
                        Op *insertBefore) {
  return createCopyImpl(original, operands, resultNames, insertBefore,
                        /*registerNames=*/true);
}

Op *Graph::createCopyImpl(const Op &original, llvm::ArrayRef<Value *> operands,
                          llvm::ArrayRef<std::string> resultNames,
                          Op *insertBefore, bool registerNames) {
  llvm::SmallVector<Type, 2> types;
  for (const Value *result : original.results())
    types.push_back(result->type());
  Op *copy = createOpImpl(original.def(), operands, original.attrs_, types,
                          resultNames, insertBefore, registerNames);
  copy->setLoc(original.loc());
  copy->region_ = original.region_;
  copy->device_ = original.device_;
  return copy;
}

void Graph::erase(Op *op) {
  assert(op->graph_ == this && "op of another graph");
  assert(op->controlUsers_.empty() && "erasing an op others depend on");
  for (unsigned i = 0; i < op->numResults_; ++i) {
    Value *result = op->result(i);
    assert(!result->hasUses() && "erasing an op whose results are used");
    assert(!llvm::is_contained(outputs_, result) && "erasing a graph output");
    dropName(result);
  }
  if (op->kind() == "input")
    inputs_.erase(llvm::find(inputs_, op->result()));
  else if (op->kind() == "param")
    params_.erase(llvm::find(params_, op->result()));
  op->dropAllReferences();
  ops_.erase(op->getIterator());
  --numOps_;
}

void Graph::moveBefore(Op *op, Op *before) {
  ops_.remove(op->getIterator());
  if (before)
    ops_.insert(before->getIterator(), op);
  else
    ops_.push_back(op);
}

void Graph::setSchedule(llvm::ArrayRef<Op *> order) {
  assert(order.size() == ops_.size() && "schedule is not a permutation");
  for (Op *op : order)
    ops_.remove(op->getIterator());
  assert(ops_.empty() && "schedule is not a permutation");
  for (Op *op : order)
    ops_.push_back(op);
}

llvm::ArrayRef<Value *> Graph::collection(llvm::StringRef name) const {
  auto it = collectionIndex_.find(name);
  if (it == collectionIndex_.end())
    return {};
  return collections_[it->second].values;
}

void Graph::addToCollection(llvm::StringRef name, Value *value) {
  auto [it, inserted] = collectionIndex_.try_emplace(name, collections_.size());
  if (inserted)
    collections_.push_back({name.str(), {}});
  collections_[it->second].values.push_back(value);
}

void Graph::dropName(Value *value) {
  // Through the entry: the table finds it by hashing the key once.
  valuesByName_.remove(value->nameEntry_);
  value->nameEntry_->Destroy(valuesByName_.getAllocator());
  value->nameEntry_ = nullptr;
}

bool Graph::holdsName(const Value *value) const {
  return value->producer() && value->producer()->graph() == this &&
         value->nameEntry_ && value->nameEntry_->getValue() == value;
}

Value *Graph::lookupValue(llvm::StringRef name) const {
  return valuesByName_.lookup(name);
}

std::string Graph::uniqueName(llvm::StringRef base) {
  if (!valuesByName_.count(base))
    return base.str();
  return suffixedName(base);
}

std::string Graph::suffixedName(llvm::StringRef base) {
  unsigned &suffix = nextSuffix_[base];
  std::string candidate;
  do
    candidate = fmt::format("{}.{}", base.str(), ++suffix);
  while (valuesByName_.count(candidate));
  return candidate;
}

bool Graph::renameValue(Value *value, llvm::StringRef name) {
  if (value->name() == name)
    return true;
  auto [entry, inserted] = valuesByName_.try_emplace(name, value);
  if (!inserted)
    return false;
  dropName(value);
  value->nameEntry_ = &*entry;
  return true;
}

void Graph::swap(Graph &other) {
  OpList held;
  held.splice(held.end(), ops_);
  ops_.splice(ops_.end(), other.ops_);
  other.ops_.splice(other.ops_.end(), held);
  for (Op &op : ops_)
    op.graph_ = this;
  for (Op &op : other.ops_)
    op.graph_ = &other;
  std::swap(arena_, other.arena_);
  std::swap(name_, other.name_);
  std::swap(sourceName_, other.sourceName_);
  std::swap(inputs_, other.inputs_);
  std::swap(params_, other.params_);
  std::swap(outputs_, other.outputs_);
  std::swap(collections_, other.collections_);
  collectionIndex_.swap(other.collectionIndex_);
  valuesByName_.swap(other.valuesByName_);
  nextSuffix_.swap(other.nextSuffix_);
  std::swap(numOps_, other.numOps_);
  std::swap(nextOpId_, other.nextOpId_);
  std::swap(nextValueId_, other.nextValueId_);
}

void Graph::replaceAllUsesWith(Value *from, Value *to) {
  assert(from != to && "replacing a value by itself");
  while (from->hasUses()) {
    Use use = from->uses().back();
    use.user->setOperand(use.operandIndex, to);
  }
  std::replace(outputs_.begin(), outputs_.end(), from, to);
  for (Collection &c : collections_)
    std::replace(c.values.begin(), c.values.end(), from, to);
}

} // namespace remat

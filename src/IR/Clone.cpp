//===- Clone.cpp - Deep copies of graphs ------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Graph.h"

#include <vector>

namespace remat {

std::unique_ptr<Graph> Graph::clone(CloneIds ids) const {
  auto copy = std::make_unique<Graph>(name_);
  copy->setSourceName(sourceName_);
  bool keepIds = ids == CloneIds::Keep;
  // Side tables by id of this graph: the copy of each value and op.
  std::vector<Value *> valueMap(nextValueId_, nullptr);
  std::vector<Op *> opMap(nextOpId_, nullptr);
  llvm::SmallVector<Value *, 4> operands;
  for (const Op &op : ops_) {
    operands.clear();
    for (Value *operand : op.operands())
      operands.push_back(valueMap[operand->id()]);
    // Names come with the name table below.
    Op *newOp = copy->createCopyImpl(op, operands, /*resultNames=*/{},
                                     /*insertBefore=*/nullptr,
                                     /*registerNames=*/false);
    if (keepIds)
      newOp->id_ = op.id_;
    for (Op *dep : op.controlDeps())
      newOp->addControlDep(opMap[dep->id()]);
    opMap[op.id()] = newOp;
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      valueMap[op.result(i)->id()] = newOp->result(i);
      if (keepIds)
        newOp->result(i)->id_ = op.result(i)->id_;
    }
  }
  for (Value *output : outputs_)
    copy->addOutput(valueMap[output->id()]);
  for (const Collection &collection : collections_)
    for (Value *member : collection.values)
      copy->addToCollection(collection.name, valueMap[member->id()]);
  // The name table copied whole, without hashing a name (same buckets),
  // then pointed at the copies, whose names are its keys. New values get
  // the names the original would give them.
  copy->valuesByName_ = valuesByName_;
  for (auto &entry : copy->valuesByName_) {
    Value *value = valueMap[entry.second->id()];
    entry.second = value;
    value->nameEntry_ = &entry;
  }
  copy->nextSuffix_ = nextSuffix_;
  if (!keepIds)
    return copy;
  copy->nextOpId_ = nextOpId_;
  copy->nextValueId_ = nextValueId_;
  // Use lists and control users in the original's order, which the rewrites
  // and the scheduler walk.
  for (const Op &op : ops_) {
    Op *newOp = opMap[op.id()];
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      Value *newValue = newOp->result(i);
      llvm::ArrayRef<Use> uses = op.result(i)->uses();
      for (unsigned slot = 0, n = uses.size(); slot < n; ++slot) {
        Op *user = opMap[uses[slot].user->id()];
        newValue->uses_[slot] = {user, uses[slot].operandIndex};
        user->useSlots_[uses[slot].operandIndex] = slot;
      }
    }
    for (unsigned i = 0, e = op.controlUsers_.size(); i < e; ++i)
      newOp->controlUsers_[i] = opMap[op.controlUsers_[i]->id()];
  }
  return copy;
}

} // namespace remat

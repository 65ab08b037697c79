//===- Op.h - One operation in the schedule ----------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// An op is an instance of a registered kind: operands, results, attributes, an
/// optional device, an optional region tag, and control dependencies (ops that
/// must run before it with no data flowing). Ops live in their graph's schedule
/// list; their order there is the execution order.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_OP_H
#define REMAT_IR_OP_H

#include "remat/IR/Attribute.h"
#include "remat/IR/OpRegistry.h"
#include "remat/IR/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/ilist.h"
#include "llvm/ADT/ilist_node.h"

#include <memory>
#include <string>

namespace remat {

/// `tag` stored once per process and kept until it ends; the empty tag
/// stays empty. For the few distinct region and device names of a graph.
llvm::StringRef internTag(llvm::StringRef tag);

class Graph;

/// Where in a source text an op was written; line 0 means "not from text".
struct SourceLoc {
  unsigned line = 0;
  unsigned column = 0;

  bool isKnown() const { return line != 0; }
};

class Op : public llvm::ilist_node<Op> {
public:
  Op(const Op &) = delete;
  Op &operator=(const Op &) = delete;
  ~Op();

  const OpDef &def() const { return *def_; }
  /// The kind's name, e.g. "matmul".
  llvm::StringRef kind() const { return def_->name; }
  bool hasFlag(OpFlags flag) const { return def_->hasFlag(flag); }
  Graph *graph() const { return graph_; }
  /// Dense per-graph number, stable for the op's lifetime (see Graph::opIdBound).
  unsigned id() const { return id_; }

  // Operands.
  llvm::ArrayRef<Value *> operands() const { return operands_; }
  unsigned numOperands() const { return operands_.size(); }
  Value *operand(unsigned i) const { return operands_[i]; }
  /// Rewires operand `i` to read `value`, keeping use lists exact.
  void setOperand(unsigned i, Value *value);

  // Results.
  unsigned numResults() const { return numResults_; }
  Value *result(unsigned i = 0) const { return &results_[i]; }
  /// Result pointers, in order.
  llvm::SmallVector<Value *, 2> results() const;
  /// The types of the operands, in order.
  llvm::SmallVector<Type, 4> operandTypes() const;
  /// The types of the results, in order.
  llvm::SmallVector<Type, 2> resultTypes() const;

  // Attributes.
  const AttrList &attrs() const { return *attrs_; }
  /// The written attribute `name`, or null (schema defaults are not applied;
  /// use `signature()` for that).
  const Attribute *findAttr(llvm::StringRef name) const {
    return remat::findAttr(*attrs_, name);
  }
  /// Sets or replaces an attribute, keeping the position of an existing one.
  void setAttr(llvm::StringRef name, Attribute value);
  /// Operand types and attributes, as shape inference and cost functions see them.
  /// The returned object points into `operandTypes`, which must outlive it.
  OpSignature signature(llvm::ArrayRef<Type> operandTypes) const {
    return OpSignature(*def_, operandTypes, *attrs_);
  }

  // Control dependencies.
  /// Ops that must run before this one, in the order they were added.
  llvm::ArrayRef<Op *> controlDeps() const { return controlDeps_; }
  /// Ops that name this one as a control dependency.
  llvm::ArrayRef<Op *> controlUsers() const { return controlUsers_; }
  /// Adds `dep` as a control dependency unless it already is one.
  void addControlDep(Op *dep);
  void removeControlDep(Op *dep);

  // Placement and tags.
  /// Device name such as "gpu:0"; empty when unplaced.
  llvm::StringRef device() const { return device_; }
  void setDevice(llvm::StringRef device) { device_ = internTag(device); }
  /// Nestable region path such as "block3/attn"; empty when untagged.
  llvm::StringRef region() const { return region_; }
  void setRegion(llvm::StringRef region) { region_ = internTag(region); }

  SourceLoc loc() const { return loc_; }
  void setLoc(SourceLoc loc) { loc_ = loc; }

  /// A short description for messages: `%h = matmul` or `%a, %b = split`.
  std::string describe() const;

private:
  friend class Graph;
  friend class Value;
  /// `results` holds `numResults` default-constructed values, which the op
  /// destroys; the graph's arena owns the memory of both.
  Op(Graph *graph, const OpDef *def, unsigned id, unsigned numResults,
     Value *results);

  /// Drops this op's operand uses and control edges; called before deletion.
  void dropAllReferences();
  /// Forgets operands and control edges without updating the other ends;
  /// only for tearing down a whole graph.
  void forgetReferences();

  Graph *graph_;
  const OpDef *def_;
  unsigned id_;
  unsigned numResults_;
  Value *results_;
  llvm::SmallVector<Value *, 2> operands_;
  /// Where operand i's use sits in `operands_[i]->uses()`, for O(1) removal.
  llvm::SmallVector<unsigned, 2> useSlots_;
  /// Interned (`internAttrList`): ops with equal attributes share them.
  const AttrList *attrs_;
  llvm::SmallVector<Op *, 0> controlDeps_;
  llvm::SmallVector<Op *, 0> controlUsers_;
  /// Interned (`internTag`): a million ops of a few regions hold no copy.
  llvm::StringRef device_;
  llvm::StringRef region_;
  SourceLoc loc_;
};

} // namespace remat

namespace llvm {
/// Ops live in their graph's arena (see Graph): the schedule list destroys
/// an op it erases, the graph frees the memory with the arena.
template <> struct ilist_alloc_traits<remat::Op> {
  static void deleteNode(remat::Op *op) { op->~Op(); }
};
} // namespace llvm

#endif // REMAT_IR_OP_H

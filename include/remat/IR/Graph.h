//===- Graph.h - A dataflow graph and its schedule ---------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A graph owns its ops, in schedule order, and their result values. It also
/// records which values are inputs (fed data), parameters (trainable), outputs
/// (the loss first) and members of named collections such as `checkpoints`.
///
/// Ops and values carry dense ids that never change and are never reused within
/// a graph, so analyses keep side tables in vectors of size `opIdBound()` or
/// `valueIdBound()` instead of hash maps.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_GRAPH_H
#define REMAT_IR_GRAPH_H

#include "remat/IR/Op.h"
#include "remat/IR/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/ilist.h"
#include "llvm/Support/Allocator.h"

#include <memory>
#include <string>
#include <vector>

namespace remat {

/// A named list of values, such as `checkpoints`.
struct Collection {
  std::string name;
  std::vector<Value *> values;
};

class Graph {
public:
  using OpList = llvm::iplist<Op>;

  explicit Graph(std::string name = "main") : name_(std::move(name)) {}
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  ~Graph();

  llvm::StringRef name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }
  /// The file the graph was read from, for messages; empty if built in memory.
  llvm::StringRef sourceName() const { return sourceName_; }
  void setSourceName(std::string name) { sourceName_ = std::move(name); }

  // The schedule.
  OpList &ops() { return ops_; }
  const OpList &ops() const { return ops_; }
  /// O(1): the op list itself does not know its length.
  size_t numOps() const { return numOps_; }

  /// Creates an op of kind `def` before `insertBefore` (at the end when null).
  /// Result types are taken as given; the Builder infers them. Result names are
  /// made unique (see `uniqueName`); an empty name becomes `<kind>`-based.
  Op *createOp(const OpDef &def, llvm::ArrayRef<Value *> operands,
               AttrList attrs, llvm::ArrayRef<Type> resultTypes,
               llvm::ArrayRef<std::string> resultNames = {},
               Op *insertBefore = nullptr);
  /// Creates before `insertBefore` an op like `original` (of this graph or
  /// another): its kind, attributes, result types, location, region and
  /// device, reading `operands`, with result names as `createOp` makes them.
  /// No attribute list or tag is interned again.
  Op *createCopyOf(const Op &original, llvm::ArrayRef<Value *> operands,
                   llvm::ArrayRef<std::string> resultNames,
                   Op *insertBefore = nullptr);
  /// Removes and deletes `op`. Its results must be unused, not outputs and not
  /// in a collection, and no op may name it as a control dependency.
  void erase(Op *op);
  /// Moves `op` before `before` in the schedule (to the end when null).
  void moveBefore(Op *op, Op *before);
  /// Replaces the schedule by `order`, which must be a permutation of the ops.
  void setSchedule(llvm::ArrayRef<Op *> order);

  // Inputs, parameters, outputs and collections.
  /// Results of `input` ops, in creation order.
  llvm::ArrayRef<Value *> inputs() const { return inputs_; }
  /// Results of `param` ops, in creation order.
  llvm::ArrayRef<Value *> params() const { return params_; }
  /// Graph outputs; by convention the first is the scalar loss.
  llvm::ArrayRef<Value *> outputs() const { return outputs_; }
  void addOutput(Value *value) { outputs_.push_back(value); }
  void setOutputs(std::vector<Value *> outputs) { outputs_ = std::move(outputs); }
  /// Named collections, in the order they were first added to.
  llvm::ArrayRef<Collection> collections() const { return collections_; }
  /// Members of collection `name`; empty if there is no such collection.
  llvm::ArrayRef<Value *> collection(llvm::StringRef name) const;
  /// Appends `value` to collection `name`, creating it if needed.
  void addToCollection(llvm::StringRef name, Value *value);

  // Names.
  /// The value named `name`, or null.
  Value *lookupValue(llvm::StringRef name) const;
  /// `base` if no value has that name, else `base.N` for the smallest free N
  /// tried so far; amortised O(1).
  std::string uniqueName(llvm::StringRef base);
  /// Renames `value`; false (and no change) if another value has the name.
  bool renameValue(Value *value, llvm::StringRef name);
  /// Whether `value` is a value of this graph that the name table maps its
  /// name to; O(1), no hashing. The table's keys are unique, so the values
  /// it holds have distinct names.
  bool holdsName(const Value *value) const;

  /// Makes every reader of `from` (operands, outputs, collections) read `to`.
  void replaceAllUsesWith(Value *from, Value *to);

  /// What a clone does with ids.
  enum class CloneIds {
    /// Dense again, in schedule order.
    Renumber,
    /// The original's ids, id bounds, use-list and control-user order: the
    /// copy then behaves exactly as the original would.
    Keep,
  };
  /// A deep copy: same schedule, names (and the suffixes `uniqueName` will
  /// try next), types, attributes, locations, regions, devices, control
  /// dependencies, outputs and collections. Linear in ops + edges.
  std::unique_ptr<Graph> clone(CloneIds ids = CloneIds::Renumber) const;
  /// Exchanges the contents of two graphs (ops, values, names, ids); the
  /// ops' `graph()` follow. Linear in ops.
  void swap(Graph &other);

  /// One past the largest op id ever handed out.
  unsigned opIdBound() const { return nextOpId_; }
  /// One past the largest value id ever handed out.
  unsigned valueIdBound() const { return nextValueId_; }

private:
  /// `uniqueName` of a `base` known to be taken.
  std::string suffixedName(llvm::StringRef base);
  /// `createOp` with interned attributes (`internAttrList`), leaving the
  /// names out of the name table when not `registerNames` (a clone copies
  /// the table whole).
  Op *createOpImpl(const OpDef &def, llvm::ArrayRef<Value *> operands,
                   const AttrList *attrs, llvm::ArrayRef<Type> resultTypes,
                   llvm::ArrayRef<std::string> resultNames,
                   Op *insertBefore, bool registerNames);
  /// `createCopyOf`, leaving the names out of the table when not
  /// `registerNames`.
  Op *createCopyImpl(const Op &original, llvm::ArrayRef<Value *> operands,
                     llvm::ArrayRef<std::string> resultNames,
                     Op *insertBefore, bool registerNames);

  /// Removes `value`'s name from the table and frees it.
  void dropName(Value *value);

  std::string name_;
  std::string sourceName_;
  /// The memory of the ops and their results: one allocation per slab, not
  /// two per op, and freed whole with the graph. An erased op is destroyed
  /// but its memory stays until then.
  llvm::BumpPtrAllocator arena_;
  OpList ops_;
  std::vector<Value *> inputs_;
  std::vector<Value *> params_;
  std::vector<Value *> outputs_;
  std::vector<Collection> collections_;
  /// Index into `collections_` by name.
  llvm::StringMap<size_t> collectionIndex_;
  llvm::StringMap<Value *> valuesByName_;
  llvm::StringMap<unsigned> nextSuffix_;
  size_t numOps_ = 0;
  unsigned nextOpId_ = 0;
  unsigned nextValueId_ = 0;
};

} // namespace remat

#endif // REMAT_IR_GRAPH_H

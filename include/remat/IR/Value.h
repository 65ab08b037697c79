//===- Value.h - Tensors flowing between ops ---------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A value is one result of one op: a named tensor with a static type. It knows
/// its producer and its uses (the operand slots that read it). Graph inputs and
/// parameters are the results of `input` and `param` ops, so every value has a
/// producer.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_VALUE_H
#define REMAT_IR_VALUE_H

#include "remat/IR/Type.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMapEntry.h"
#include "llvm/ADT/StringRef.h"

namespace remat {

class Graph;
class Op;

/// One operand slot that reads a value.
struct Use {
  Op *user;
  unsigned operandIndex;

  friend bool operator==(const Use &a, const Use &b) {
    return a.user == b.user && a.operandIndex == b.operandIndex;
  }
};

class Value {
public:
  Value(const Value &) = delete;
  Value &operator=(const Value &) = delete;

  /// The name without the `%` sigil; unique within the graph.
  llvm::StringRef name() const { return nameEntry_->getKey(); }
  const Type &type() const { return type_; }
  Op *producer() const { return producer_; }
  /// Which result of the producer this is.
  unsigned resultIndex() const { return resultIndex_; }
  /// Dense per-graph number, stable for the value's lifetime; analyses index
  /// side tables with it (see Graph::valueIdBound).
  unsigned id() const { return id_; }

  /// Operand slots reading this value, in no particular order. A user that
  /// reads the value twice appears twice.
  llvm::ArrayRef<Use> uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }

  /// Changes the type; callers keep the graph verifiable.
  void setType(Type type) { type_ = std::move(type); }

private:
  friend class Op;
  friend class Graph;
  Value() = default;

  void addUse(Op *user, unsigned operandIndex);
  void removeUse(Op *user, unsigned operandIndex);

  /// The graph's name-table entry for this value: the name is stored once,
  /// as the table's key.
  llvm::StringMapEntry<Value *> *nameEntry_ = nullptr;
  Type type_;
  Op *producer_ = nullptr;
  unsigned resultIndex_ = 0;
  unsigned id_ = 0;
  llvm::SmallVector<Use, 2> uses_;
};

} // namespace remat

#endif // REMAT_IR_VALUE_H

//===- Builder.h - Creating ops with inferred types --------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The Builder creates ops by kind name, checks arity and attributes against the
/// registry, and infers result types. It inserts at an insertion point (the end
/// of the schedule by default) and stamps the current region path and device on
/// every op it creates.
///
/// Two calling styles:
///  - `tryCreate` returns absl::StatusOr for callers that handle each error;
///  - `create` and `op` are sticky: the first error is recorded, null is
///    returned, and every later call that receives a null operand returns null
///    too. Model generators build a whole graph this way and check `status()`
///    once at the end.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_BUILDER_H
#define REMAT_IR_BUILDER_H

#include "remat/IR/Graph.h"
#include "remat/IR/OpRegistry.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace remat {

/// Checks the operand count and the attributes of a prospective op of kind
/// `def`, runs shape inference, and checks that the result sizes do not
/// overflow. Messages name the kind but carry no location.
absl::StatusOr<llvm::SmallVector<Type, 1>>
inferResultTypes(const OpDef &def, llvm::ArrayRef<Type> operandTypes,
                 llvm::ArrayRef<NamedAttr> attrs);

class Builder {
public:
  explicit Builder(Graph &graph,
                   const OpRegistry &registry = OpRegistry::global())
      : graph_(graph), registry_(registry) {}

  Graph &graph() const { return graph_; }
  const OpRegistry &registry() const { return registry_; }

  /// New ops go before `op`; null means the end of the schedule.
  void setInsertionPoint(Op *op) { insertBefore_ = op; }

  /// Declares a graph input.
  Value *input(llvm::StringRef name, Type type);
  /// Declares a trainable parameter.
  Value *param(llvm::StringRef name, Type type);

  /// Creates an op of kind `kind`, inferring its result types.
  absl::StatusOr<Op *> tryCreate(llvm::StringRef kind,
                                 llvm::ArrayRef<Value *> operands,
                                 AttrList attrs = {},
                                 llvm::ArrayRef<std::string> resultNames = {});

  /// Sticky form of `tryCreate`: null on error or on a null operand.
  Op *create(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
             AttrList attrs = {}, llvm::ArrayRef<std::string> resultNames = {});
  /// Sticky form returning the first result: `b.op("relu", {x}, {}, "a")`.
  Value *op(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
            AttrList attrs = {}, llvm::StringRef name = {});

  /// The first error of a sticky call, or OK.
  const absl::Status &status() const { return status_; }

  /// The region path stamped on new ops, e.g. "block3/attn".
  llvm::StringRef region() const { return region_; }
  void setRegion(llvm::StringRef region) { region_ = internTag(region); }
  /// The device stamped on new ops; empty for none.
  void setDevice(llvm::StringRef device) { device_ = internTag(device); }

  /// Appends `name` to the region path for its lifetime:
  /// `{ Builder::RegionScope s(b, "attn"); ... }` tags ops `block3/attn`.
  class RegionScope {
  public:
    RegionScope(Builder &builder, llvm::StringRef name);
    ~RegionScope() { builder_.region_ = saved_; }
    RegionScope(const RegionScope &) = delete;
    RegionScope &operator=(const RegionScope &) = delete;

  private:
    Builder &builder_;
    llvm::StringRef saved_;
  };

private:
  Value *declare(llvm::StringRef kind, llvm::StringRef name, Type type);

  Graph &graph_;
  const OpRegistry &registry_;
  Op *insertBefore_ = nullptr;
  /// Interned (`internTag`), as the ops' own.
  llvm::StringRef region_;
  llvm::StringRef device_;
  absl::Status status_;
};

} // namespace remat

#endif // REMAT_IR_BUILDER_H

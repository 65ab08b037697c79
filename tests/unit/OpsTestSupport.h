//===- OpsTestSupport.h - Building single ops in op-family tests *- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A fixture that builds one op of a kind over fresh inputs of given types and
/// reads back its result types, its error message or its FLOPs.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_OPSTESTSUPPORT_H
#define REMAT_TESTS_UNIT_OPSTESTSUPPORT_H

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Op.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace remat::test {

inline Type f32(std::initializer_list<int64_t> shape) {
  return Type(DType::F32, shape);
}
inline Type typeOf(DType dtype, std::initializer_list<int64_t> shape) {
  return Type(dtype, shape);
}

/// An empty int-list attribute; `{"axes", {}}` would make an int 0 instead.
inline Attribute emptyList() { return Attribute(std::vector<int64_t>{}); }

class OpsTest : public ::testing::Test {
protected:
  /// Builds `kind` over fresh inputs of `operandTypes`.
  absl::StatusOr<Op *> build(llvm::StringRef kind,
                             std::vector<Type> operandTypes,
                             AttrList attrs = {}) {
    std::vector<Value *> operands;
    for (const Type &type : operandTypes)
      operands.push_back(builder_.input("x", type));
    return builder_.tryCreate(kind, operands, std::move(attrs));
  }

  /// The result types of `kind` over `operandTypes`; empty (and a test
  /// failure) when building fails.
  std::vector<Type> resultTypes(llvm::StringRef kind,
                                std::vector<Type> operandTypes,
                                AttrList attrs = {}) {
    absl::StatusOr<Op *> op =
        build(kind, std::move(operandTypes), std::move(attrs));
    EXPECT_TRUE(op.ok()) << op.status();
    if (!op.ok())
      return {};
    llvm::SmallVector<Type, 2> types = (*op)->resultTypes();
    return std::vector<Type>(types.begin(), types.end());
  }

  /// The single result type of `kind` over `operandTypes`.
  Type resultType(llvm::StringRef kind, std::vector<Type> operandTypes,
                  AttrList attrs = {}) {
    std::vector<Type> types =
        resultTypes(kind, std::move(operandTypes), std::move(attrs));
    EXPECT_EQ(types.size(), 1u);
    return types.empty() ? Type() : types[0];
  }

  /// The message of the error building `kind` gives; empty (and a test
  /// failure) when building succeeds.
  std::string error(llvm::StringRef kind, std::vector<Type> operandTypes,
                    AttrList attrs = {}) {
    absl::StatusOr<Op *> op =
        build(kind, std::move(operandTypes), std::move(attrs));
    EXPECT_FALSE(op.ok()) << kind.str() << " unexpectedly built";
    return op.ok() ? std::string() : std::string(op.status().message());
  }

  /// The registry's FLOPs for `kind` over `operandTypes` (no `cost` override).
  int64_t flops(llvm::StringRef kind, std::vector<Type> operandTypes,
                AttrList attrs = {}) {
    absl::StatusOr<Op *> op =
        build(kind, std::move(operandTypes), std::move(attrs));
    EXPECT_TRUE(op.ok()) << op.status();
    if (!op.ok())
      return -1;
    llvm::SmallVector<Type, 4> types = (*op)->operandTypes();
    return (*op)->def().flops((*op)->signature(types), (*op)->resultTypes());
  }

  Graph graph_{"t"};
  Builder builder_{graph_};
};

} // namespace remat::test

#endif // REMAT_TESTS_UNIT_OPSTESTSUPPORT_H

//===- ExportContext.h - What an op's lowering sees --------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What an op's lowering sees: the op, the ONNX names of its operands, and a
/// NodeBuilder for its nodes. One lowering per op kind, registered by op
/// family (LowerElementwise.cpp, LowerNeural.cpp, LowerNormalization.cpp,
/// LowerShape.cpp) against the op's definition; a lowering defines every
/// result of its op under the result's remat name.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_EXPORTCONTEXT_H
#define REMAT_SRC_IO_ONNXEXPORT_EXPORTCONTEXT_H

#include "OnnxGraph.h"

#include "remat/IR/Graph.h"
#include "remat/IR/OpRegistry.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace remat::onnxexport {

/// The ONNX name of each remat value lowered so far.
using ValueNames = llvm::DenseMap<const Value *, std::string>;

/// The op being lowered: its signature (attributes with defaults), the
/// ONNX names of its operands, and a NodeBuilder naming nodes after its
/// first result.
class ExportContext : public NodeBuilder {
public:
  ExportContext(OnnxGraph &graph, const ValueNames &names, const Op &op);

  const Op &op() const { return op_; }
  const OpSignature &sig() const { return signature_; }
  const Type &operandType(unsigned i) const { return operandTypes_[i]; }
  const Type &resultType(unsigned i = 0) const {
    return op_.result(i)->type();
  }
  int64_t getInt(llvm::StringRef name) const { return sig().getInt(name); }
  double getFloat(llvm::StringRef name) const { return sig().getFloat(name); }
  bool getBool(llvm::StringRef name) const { return sig().getBool(name); }
  llvm::ArrayRef<int64_t> getInts(llvm::StringRef name) const {
    return sig().getIntList(name);
  }

  /// The ONNX name operand `i` of the op is read under.
  const std::string &operand(unsigned i) const { return operandNames_[i]; }
  /// The ONNX name of result `i`: the value's own name.
  std::string result(unsigned i = 0) const {
    return op_.result(i)->name().str();
  }
  /// Reads operand `i` as `name` instead (a forced data dependency).
  void rebindOperand(unsigned i, std::string name) {
    operandNames_[i] = std::move(name);
  }

  /// `fill` of dims `shape` and dtype `dtype`, computed from the tensor
  /// `like` (`Expand(makeZero(like) + fill, shape)`), so that no runtime
  /// folds a tensor of that size into a constant held for the session.
  /// Not `Where(false, like, fill)`: ONNX Runtime's CPU `Where` allocates
  /// two scratch tensors of its result's size (docs/export.md).
  std::string filledLike(const std::string &like,
                         llvm::ArrayRef<int64_t> shape, double fill,
                         DType dtype);

  /// `file: error: '%v = op': message`-style error about the op.
  template <typename... Args>
  absl::Status error(fmt::format_string<Args...> format, Args &&...args) const {
    return opError(fmt::format(format, std::forward<Args>(args)...));
  }
  absl::Status opError(const std::string &message) const;

private:
  const Op &op_;
  llvm::SmallVector<Type, 4> operandTypes_;
  OpSignature signature_;
  std::vector<std::string> operandNames_;
};

/// `opType` (ReduceSum, ReduceMean, ReduceMax) of `x` over `axes` (at least
/// one) into `output`, a fresh name when empty; returns the output's name.
/// At opset 17 ReduceSum takes its axes as an input, the others as an
/// attribute.
std::string reduce(ExportContext &ctx, llvm::StringRef opType,
                   const std::string &x, llvm::ArrayRef<int64_t> axes,
                   bool keepdims, std::string output = "");

/// Lowers the op of `ctx`.
using Lowering = absl::Status (*)(ExportContext &ctx);

/// How an op kind is exported: its lowering, or, where it has none, why
/// (the error the export gives).
struct OnnxForm {
  Lowering lower = nullptr;
  std::string refusal;
};

/// Every op kind's form, found from its op definition (as its gradient rule
/// and kernel are). Leaves have none: they become graph inputs.
class LoweringTable {
public:
  /// Every op family's lowerings (the functions below), and the refusals.
  LoweringTable();

  /// Gives `kind`, a registered op kind with no form yet (asserted: a
  /// programming error), its lowering.
  void add(llvm::StringRef kind, Lowering lower);
  /// Refuses `kind` with `why`, the whole error message.
  void refuse(llvm::StringRef kind, std::string why);
  /// The form of `def`'s ops; null where it has none.
  const OnnxForm *find(const OpDef &def) const {
    auto it = forms_.find(&def);
    return it == forms_.end() ? nullptr : &it->second;
  }

private:
  OnnxForm &form(llvm::StringRef kind);
  llvm::DenseMap<const OpDef *, OnnxForm> forms_;
};

/// The forms of the ops of OpRegistry::global(), built on first use.
const LoweringTable &onnxForms();

void addElementwiseLowerings(LoweringTable &table);
void addNeuralLowerings(LoweringTable &table);
void addNormalizationLowerings(LoweringTable &table);
void addShapeLowerings(LoweringTable &table);

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_EXPORTCONTEXT_H

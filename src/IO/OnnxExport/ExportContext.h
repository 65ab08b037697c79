//===- ExportContext.h - State of one ONNX export ----------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the op lowerings of the ONNX exporter share: the GraphProto being
/// written, the ONNX name of every remat value, fresh names for the nodes a
/// lowering adds, and constants. One lowering per op kind, registered by op
/// family (LowerElementwise.cpp, LowerNeural.cpp, LowerNormalization.cpp,
/// LowerShape.cpp); a lowering defines every result of its op under the
/// result's remat name.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_EXPORTCONTEXT_H
#define REMAT_SRC_IO_ONNXEXPORT_EXPORTCONTEXT_H

#include "remat/IR/Graph.h"
#include "remat/IR/OpRegistry.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

namespace remat::onnxexport {

/// The ONNX element type of `dtype`.
int onnxElementType(DType dtype);

/// One attribute of a node, built by the helpers below.
using NodeAttr = onnx::AttributeProto;
NodeAttr intAttr(llvm::StringRef name, int64_t value);
NodeAttr floatAttr(llvm::StringRef name, double value);
NodeAttr intsAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> values);
NodeAttr stringAttr(llvm::StringRef name, llvm::StringRef value);

class ExportContext {
public:
  explicit ExportContext(onnx::GraphProto &graph) : graph_(graph) {}

  /// The op being lowered, its signature (attributes with defaults) and the
  /// types of its operands and results.
  void setOp(const Op *op);
  const Op &op() const { return *op_; }
  const OpSignature &sig() const { return *signature_; }
  const Type &operandType(unsigned i) const { return operandTypes_[i]; }
  const Type &resultType(unsigned i = 0) const {
    return op_->result(i)->type();
  }
  int64_t getInt(llvm::StringRef name) const { return sig().getInt(name); }
  double getFloat(llvm::StringRef name) const { return sig().getFloat(name); }
  bool getBool(llvm::StringRef name) const { return sig().getBool(name); }
  llvm::ArrayRef<int64_t> getInts(llvm::StringRef name) const {
    return sig().getIntList(name);
  }

  /// The ONNX name operand `i` of the op is read under.
  const std::string &operand(unsigned i) const;
  /// The ONNX name of result `i`: the value's own name.
  std::string result(unsigned i = 0) const;

  /// Adds a node computing `outputs` (names, unique in the model) from
  /// `inputs` (an empty name is an absent optional input).
  void emit(llvm::StringRef opType, std::vector<std::string> inputs,
            std::vector<std::string> outputs, std::vector<NodeAttr> attrs = {});
  /// Adds a node with one output of a fresh name, and returns the name.
  std::string temp(llvm::StringRef opType, std::vector<std::string> inputs,
                   std::vector<NodeAttr> attrs = {});
  /// A fresh name for a value the lowering computes, derived from the op's
  /// (or from `setNameBase`'s, for nodes a pass adds for another node).
  std::string freshName(llvm::StringRef hint);
  void setNameBase(std::string base) { nameBase_ = std::move(base); }

  /// Constants, as initializers (a runtime folds them, never recomputes).
  std::string int64s(llvm::ArrayRef<int64_t> values);
  std::string scalar(double value, DType dtype);
  std::string scalarBool(bool value);
  std::string floats(llvm::ArrayRef<double> values,
                     llvm::ArrayRef<int64_t> shape, DType dtype);
  std::string bools(const std::vector<bool> &values,
                    llvm::ArrayRef<int64_t> shape);

  /// `name` read with the dims `shape` (a Reshape; free in every runtime).
  std::string reshaped(const std::string &name, llvm::ArrayRef<int64_t> shape);
  /// `fill` of dims `shape` and dtype `dtype`, computed from the tensor
  /// `like` (`Expand(makeZero(like) + fill, shape)`), so that no runtime
  /// folds a tensor of that size into a constant held for the session.
  /// Not `Where(false, like, fill)`: ONNX Runtime's CPU `Where` allocates
  /// two scratch tensors of its result's size (docs/export.md).
  std::string filledLike(const std::string &like,
                         llvm::ArrayRef<int64_t> shape, double fill,
                         DType dtype);

  /// `+0` once the tensor `name` (of `dtype`, at least one element) exists:
  /// its first element cast to bool and back (0 or 1, for every value), times
  /// 0. A node that reads it waits for the
  /// tensor, by data (docs/export.md). Made anew by `makeZero`, once per
  /// tensor by `zeroFrom` (for nodes added in order after it).
  std::string makeZero(const std::string &name, DType dtype);
  std::string zeroFrom(const std::string &name, DType dtype);

  /// Keeps fresh names off `name` (every remat value's name, up front).
  void reserve(llvm::StringRef name);
  /// Binds `value` to the ONNX name `name` (leaves, forced operands).
  void bind(const Value *value, std::string name);
  /// The ONNX name `value` was bound to.
  const std::string &nameOf(const Value *value) const {
    return names_.find(value)->second;
  }
  /// Reads operand `i` of the current op as `name` instead (a forced data
  /// dependency).
  void rebindOperand(unsigned i, std::string name);

  /// `file: error: '%v = op': message`-style error about the current op.
  template <typename... Args>
  absl::Status error(fmt::format_string<Args...> format, Args &&...args) const {
    return opError(fmt::format(format, std::forward<Args>(args)...));
  }
  absl::Status opError(const std::string &message) const;

private:
  onnx::GraphProto &graph_;
  const Op *op_ = nullptr;
  llvm::SmallVector<Type, 4> operandTypes_;
  std::optional<OpSignature> signature_;
  std::vector<std::string> operandNames_;
  llvm::DenseMap<const Value *, std::string> names_;
  llvm::StringSet<> taken_;
  llvm::StringMap<std::string> zeros_;
  std::string nameBase_;
  int nextTemp_ = 0;
};

/// `opType` (ReduceSum, ReduceMean, ReduceMax) of `x` over `axes` (at least
/// one) into `output`, a fresh name when empty; returns the output's name.
/// At opset 17 ReduceSum takes its axes as an input, the others as an
/// attribute.
std::string reduce(ExportContext &ctx, llvm::StringRef opType,
                   const std::string &x, llvm::ArrayRef<int64_t> axes,
                   bool keepdims, std::string output = "");

/// Lowers the current op of `ctx`.
using Lowering = absl::Status (*)(ExportContext &ctx);
using LoweringTable = llvm::StringMap<Lowering>;

void addElementwiseLowerings(LoweringTable &table);
void addNeuralLowerings(LoweringTable &table);
void addNormalizationLowerings(LoweringTable &table);
void addShapeLowerings(LoweringTable &table);

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_EXPORTCONTEXT_H

//===- ImportContext.h - State of one ONNX import ----------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the converters of ONNX nodes share: the map from ONNX value names to
/// remat values or to tensors known at import time (shape chains, scalars),
/// the node being converted, its attributes, and errors located at it.
/// Private to src/IO/Onnx.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNX_IMPORTCONTEXT_H
#define REMAT_SRC_IO_ONNX_IMPORTCONTEXT_H

#include "remat/IR/Builder.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

namespace remat::onnximport {

/// A tensor whose value the importer knows: a Constant, a small initializer,
/// or what folding a shape chain gives. Integers and bools are in `ints`,
/// floats in `floats`; only one is filled.
/// The most elements the importer computes at import time (shape chains and
/// constants); a larger folded value is an error, not an allocation.
inline constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

struct KnownTensor {
  DType dtype = DType::I64;
  std::vector<int64_t> shape;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool isFloat() const { return isFloatDType(dtype); }
  /// The product of the dims; -1 for a negative dim or one over int64.
  int64_t numel() const;
  double at(int64_t i) const { return isFloat() ? floats[i] : double(ints[i]); }
  static KnownTensor ofInts(std::vector<int64_t> values,
                            std::vector<int64_t> shape, DType dtype = DType::I64);
  static KnownTensor ofFloats(std::vector<double> values,
                              std::vector<int64_t> shape,
                              DType dtype = DType::F32);
};

/// The remat dtype of an ONNX TensorProto data type, or an error.
absl::StatusOr<DType> dtypeOfOnnx(int onnxType);

/// The type of `proto`: a supported dtype and dims of at least 0, at most
/// 2^40 elements in all; the error names the tensor.
absl::StatusOr<Type> tensorType(const onnx::TensorProto &proto);

/// Decodes `proto` (raw_data or the typed fields).
absl::StatusOr<KnownTensor> decodeTensor(const onnx::TensorProto &proto);

class ImportContext;
/// Converts the current node of `ctx`.
using Converter = absl::Status (*)(ImportContext &ctx);
using ConverterTable = llvm::StringMap<Converter>;

void addElementwiseConverters(ConverterTable &table);
void addNeuralConverters(ConverterTable &table);
void addNormalizationConverters(ConverterTable &table);
void addShapeConverters(ConverterTable &table);

class ImportContext {
public:
  ImportContext(Graph &graph, std::string fileName, int64_t opset)
      : builder_(graph), fileName_(std::move(fileName)), opset_(opset) {}

  Builder &builder() { return builder_; }
  int64_t opset() const { return opset_; }
  const std::string &fileName() const { return fileName_; }

  // The node being converted; null outside the nodes (a graph's outputs).
  void setNode(const onnx::NodeProto *node) { node_ = node; }
  const onnx::NodeProto &node() const { return *node_; }
  /// `file: node 'name' (OpType): message`, or `file: message` outside the
  /// nodes.
  template <typename... Args>
  absl::Status error(fmt::format_string<Args...> format, Args &&...args) const {
    return nodeError(fmt::format(format, std::forward<Args>(args)...));
  }
  absl::Status nodeError(const std::string &message) const;

  // Operands.
  /// Whether input `i` is given (present and not the empty name).
  bool hasInput(int i) const;
  /// Input `i` as a remat value; known tensors are materialised (a uniform
  /// one as a `constant` op, any other as a leaf fed from the model).
  absl::StatusOr<Value *> input(int i);
  /// Input `i` as a tensor known at import time, or an error saying that
  /// `what` must be constant.
  absl::StatusOr<KnownTensor> knownInput(int i, llvm::StringRef what);
  /// Input `i` if it is known, else null.
  const KnownTensor *maybeKnown(int i) const;
  /// Input `i` with the dims `shape` (same element count): an initializer
  /// not yet declared is declared with that shape (feeds of its [C] data
  /// are reshaped, docs/import.md), anything else goes through a reshape.
  /// A conv bias declared [C, 1, 1] keeps the add that reads it from being
  /// an op on params alone, which would open a path around every bottleneck.
  absl::StatusOr<Value *> inputAsShape(int i, std::vector<int64_t> shape);
  /// The static type of input `i` (known or not).
  absl::StatusOr<Type> inputType(int i) const;
  /// Input `i` as a leaf declared `input` rather than `param` when it is an
  /// initializer not yet declared (batch-norm running statistics).
  absl::StatusOr<Value *> constantLeafInput(int i);
  /// The ONNX name of the matrix whose Transpose (perm [1, 0]) input `i` is,
  /// when that Transpose was deferred (`deferTranspose`) and has not been
  /// materialised; else empty.
  llvm::StringRef transposedMatrix(int i) const;

  // Results.
  int numOutputs() const { return node_->output_size(); }
  /// Whether output `i` is named and read by some node or the graph.
  bool outputUsed(int i) const;
  void define(int i, Value *value);
  void defineKnown(int i, KnownTensor tensor);
  /// Output `i` is input 0 transposed, emitted only when a reader other than
  /// a MatMul operand (which reads it as transpose_a or transpose_b) needs it:
  /// PyTorch exports a Linear on a batch of sequences as
  /// MatMul(x, Transpose(weight)), and a transpose of the weight alone would
  /// be an op on params only, a path around every bottleneck.
  void deferTranspose(int i);
  /// Whether `name` is a deferred Transpose's output.
  bool isDeferred(llvm::StringRef name) const {
    return deferred_.count(name) != 0;
  }
  /// Creates an op whose first result will be output `i`'s value (named after
  /// it); shape inference errors become node errors.
  absl::StatusOr<Op *> create(llvm::StringRef kind,
                              llvm::ArrayRef<Value *> operands,
                              AttrList attrs = {}, int outputIndex = -1);
  /// Renames `value` after output `outputIndex` (made unique).
  void nameAfterOutput(Value *value, int outputIndex);
  absl::StatusOr<Value *> op(llvm::StringRef kind,
                             llvm::ArrayRef<Value *> operands,
                             AttrList attrs = {}, int outputIndex = -1);
  /// A `constant` op holding `value` of `dtype` and `shape`.
  absl::StatusOr<Value *> scalar(double value, DType dtype,
                                 std::vector<int64_t> shape = {});

  // Attributes of the current node.
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  absl::StatusOr<int64_t> intAttr(llvm::StringRef name, int64_t fallback) const;
  absl::StatusOr<double> floatAttr(llvm::StringRef name, double fallback) const;
  absl::StatusOr<std::vector<int64_t>>
  intsAttr(llvm::StringRef name, std::vector<int64_t> fallback) const;
  absl::StatusOr<std::string> stringAttr(llvm::StringRef name,
                                         std::string fallback) const;

  // Set up by the importer.
  void addInitializer(const onnx::TensorProto *proto);
  void addGraphValue(const std::string &name, Value *value);
  void markUsed(const std::string &name) { used_.insert({name, true}); }
  /// The value of ONNX name `name` as defined so far (materialising a known
  /// tensor), or an error naming it.
  absl::StatusOr<Value *> valueNamed(const std::string &name);
  /// A known tensor or an initializer of `name`, decoded; null if neither.
  const KnownTensor *knownNamed(const std::string &name);

  /// Values of the leaves the importer declared for known tensors that are
  /// not initializers (non-uniform Constant outputs), by leaf name.
  const std::map<std::string, KnownTensor> &constantLeaves() const {
    return constantLeaves_;
  }

private:
  /// The checked type of an initializer, or an error at the current node.
  absl::StatusOr<Type> initializerType(const onnx::TensorProto &proto) const;
  /// The static type of the value named `name`, however it is defined.
  absl::StatusOr<Type> typeNamed(const std::string &name) const;
  absl::StatusOr<Value *> materialise(const std::string &name,
                                      const KnownTensor &tensor);
  absl::StatusOr<Value *>
  declareInitializer(const std::string &name, bool trainable,
                     std::optional<std::vector<int64_t>> shape = {});

  Builder builder_;
  std::string fileName_;
  int64_t opset_;
  const onnx::NodeProto *node_ = nullptr;
  llvm::StringMap<Value *> values_;
  llvm::StringMap<KnownTensor> known_;
  llvm::StringMap<const onnx::TensorProto *> initializers_;
  llvm::StringMap<bool> used_;
  std::map<std::string, KnownTensor> constantLeaves_;
  /// Deferred Transpose outputs, by name: the input they transpose.
  llvm::StringMap<std::string> deferred_;
};

/// The element count of `tensor`, a value folded at import time, or an
/// error saying what `what` gives (`shape`, `broadcast`): a negative dim,
/// more elements than int64 holds, or more than `kMaxFoldedElements`.
absl::StatusOr<int64_t> foldedElements(const ImportContext &ctx,
                                       const KnownTensor &tensor,
                                       llvm::StringRef what);

/// Normalises a possibly negative `axis` of a rank-`rank` tensor.
absl::StatusOr<int64_t> normaliseAxis(const ImportContext &ctx, int64_t axis,
                                      int64_t rank);

} // namespace remat::onnximport

#endif // REMAT_SRC_IO_ONNX_IMPORTCONTEXT_H

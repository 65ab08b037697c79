//===- ImportContext.cpp - State of one ONNX import -------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

#include <limits>

namespace remat::onnximport {

absl::Status ImportContext::nodeError(const std::string &message) const {
  if (!node_)
    return absl::InvalidArgumentError(
        fmt::format("{}: error: {}", fileName_, message));
  return absl::InvalidArgumentError(fmt::format(
      "{}: error: node '{}' ({}): {}", fileName_, node_->name(), node_->op_type(),
      message));
}

absl::StatusOr<int64_t> normaliseAxis(const ImportContext &ctx, int64_t axis,
                                      int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return ctx.error("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<int64_t> foldedElements(const ImportContext &ctx,
                                       const KnownTensor &tensor,
                                       llvm::StringRef what) {
  std::string shape = fmt::format("[{}]", fmt::join(tensor.shape, ","));
  if (llvm::any_of(tensor.shape, [](int64_t dim) { return dim < 0; }))
    return ctx.error("{} gives the shape {}, with a negative dimension",
                     what.str(), shape);
  int64_t numel = tensor.numel();
  if (numel < 0)
    return ctx.error("{} gives the shape {}, more than 2^63-1 elements",
                     what.str(), shape);
  if (numel > kMaxFoldedElements)
    return ctx.error("{} gives the shape {}, {} elements, more than the {} "
                     "the importer computes at import time",
                     what.str(), shape, numel, kMaxFoldedElements);
  return numel;
}

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

bool ImportContext::hasInput(int i) const {
  return i < node_->input_size() && !node_->input(i).empty();
}

void ImportContext::addInitializer(const onnx::TensorProto *proto) {
  initializers_[proto->name()] = proto;
}

void ImportContext::addGraphValue(const std::string &name, Value *value) {
  values_[name] = value;
}

const KnownTensor *ImportContext::knownNamed(const std::string &name) {
  if (auto it = known_.find(name); it != known_.end())
    return &it->second;
  if (values_.count(name))
    return nullptr;
  auto init = initializers_.find(name);
  if (init == initializers_.end())
    return nullptr;
  // Float initializers of more than one element are weights, never decoded
  // here; the rest (shape data, scalars) are known.
  const onnx::TensorProto &proto = *init->second;
  int64_t numel = 1;
  for (int64_t dim : proto.dims())
    numel *= dim;
  bool isFloatType = proto.data_type() == onnx::TensorProto::FLOAT ||
                     proto.data_type() == onnx::TensorProto::DOUBLE ||
                     proto.data_type() == onnx::TensorProto::FLOAT16 ||
                     proto.data_type() == onnx::TensorProto::BFLOAT16;
  if (isFloatType && numel > 1)
    return nullptr;
  absl::StatusOr<KnownTensor> tensor = decodeTensor(proto);
  if (!tensor.ok())
    return nullptr;
  return &known_.insert({name, std::move(*tensor)}).first->second;
}

const KnownTensor *ImportContext::maybeKnown(int i) const {
  if (!hasInput(i))
    return nullptr;
  return const_cast<ImportContext *>(this)->knownNamed(node_->input(i));
}

absl::StatusOr<KnownTensor> ImportContext::knownInput(int i,
                                                      llvm::StringRef what) {
  if (!hasInput(i))
    return error("{} (input {}) is missing", what.str(), i);
  if (const KnownTensor *tensor = maybeKnown(i))
    return *tensor;
  return error("{} '{}' must be a constant known at import time", what.str(),
               node_->input(i));
}

absl::StatusOr<Value *> ImportContext::valueNamed(const std::string &name) {
  if (auto it = values_.find(name); it != values_.end())
    return it->second;
  if (auto it = deferred_.find(name); it != deferred_.end()) {
    REMAT_ASSIGN_OR_RETURN(Value * matrix, valueNamed(it->second));
    absl::StatusOr<Op *> op = builder_.tryCreate(
        "transpose", {matrix}, {{"perm", Attribute({1, 0})}});
    if (!op.ok())
      return nodeError(std::string(op.status().message()));
    Value *transposed = (*op)->result(0);
    builder_.graph().renameValue(transposed, builder_.graph().uniqueName(name));
    deferred_.erase(it);
    values_[name] = transposed;
    return transposed;
  }
  if (const KnownTensor *tensor = knownNamed(name))
    return materialise(name, *tensor);
  if (initializers_.count(name))
    return declareInitializer(name, /*trainable=*/true);
  return error("input '{}' is not defined by an earlier node, an initializer "
               "or a graph input",
               name);
}

absl::StatusOr<Value *> ImportContext::input(int i) {
  if (!hasInput(i))
    return error("input {} is missing", i);
  return valueNamed(node_->input(i));
}

absl::StatusOr<Value *> ImportContext::constantLeafInput(int i) {
  if (!hasInput(i))
    return error("input {} is missing", i);
  const std::string &name = node_->input(i);
  if (!values_.count(name) && !known_.count(name) && initializers_.count(name))
    return declareInitializer(name, /*trainable=*/false);
  return input(i);
}

llvm::StringRef ImportContext::transposedMatrix(int i) const {
  if (!hasInput(i))
    return "";
  auto it = deferred_.find(node_->input(i));
  return it == deferred_.end() ? llvm::StringRef() : llvm::StringRef(it->second);
}

absl::StatusOr<Type> ImportContext::inputType(int i) const {
  if (const KnownTensor *tensor = maybeKnown(i))
    return Type(tensor->dtype, tensor->shape);
  if (!hasInput(i))
    return error("input {} is missing", i);
  return typeNamed(node_->input(i));
}

absl::StatusOr<Type> ImportContext::typeNamed(const std::string &name) const {
  if (auto it = values_.find(name); it != values_.end())
    return it->second->type();
  if (auto it = deferred_.find(name); it != deferred_.end()) {
    REMAT_ASSIGN_OR_RETURN(Type matrix, typeNamed(it->second));
    return Type(matrix.dtype(), {matrix.dim(1), matrix.dim(0)});
  }
  if (auto it = known_.find(name); it != known_.end())
    return Type(it->second.dtype, it->second.shape);
  if (auto it = initializers_.find(name); it != initializers_.end())
    return initializerType(*it->second);
  return error("input '{}' is not defined by an earlier node, an initializer "
               "or a graph input",
               name);
}

absl::StatusOr<Value *>
ImportContext::inputAsShape(int i, std::vector<int64_t> shape) {
  if (!hasInput(i))
    return error("input {} is missing", i);
  const std::string &name = node_->input(i);
  if (!values_.count(name) && !known_.count(name) && initializers_.count(name) &&
      !knownNamed(name))
    return declareInitializer(name, /*trainable=*/true, shape);
  REMAT_ASSIGN_OR_RETURN(Value * v, input(i));
  return op("reshape", {v}, {{"shape", Attribute(std::move(shape))}});
}

absl::StatusOr<Type>
ImportContext::initializerType(const onnx::TensorProto &proto) const {
  absl::StatusOr<Type> type = tensorType(proto);
  if (!type.ok())
    return error("{}", std::string(type.status().message()));
  return type;
}

absl::StatusOr<Value *>
ImportContext::declareInitializer(const std::string &name, bool trainable,
                                  std::optional<std::vector<int64_t>> shape) {
  REMAT_ASSIGN_OR_RETURN(Type type,
                         initializerType(*initializers_.lookup(name)));
  DType dtype = type.dtype();
  if (shape) {
    Type reshaped(dtype, *shape);
    if (reshaped.numElements() != type.numElements())
      return error("initializer '{}' {} has {} elements, {} expected", name,
                   type.str(), type.numElements(), reshaped.numElements());
    type = reshaped;
  }
  Value *leaf = trainable && isFloatDType(dtype)
                    ? builder_.param(name, type)
                    : builder_.input(name, type);
  values_[name] = leaf;
  return leaf;
}

absl::StatusOr<Value *> ImportContext::materialise(const std::string &name,
                                                   const KnownTensor &tensor) {
  bool uniform = tensor.numel() > 0 &&
                 llvm::all_of(llvm::seq<int64_t>(0, tensor.numel()),
                              [&](int64_t i) { return tensor.at(i) == tensor.at(0); });
  Value *value = nullptr;
  if (uniform) {
    REMAT_ASSIGN_OR_RETURN(value, scalar(tensor.at(0), tensor.dtype, tensor.shape));
    if (value->name() != name)
      builder_.graph().renameValue(value, builder_.graph().uniqueName(name));
  } else if (initializers_.count(name)) {
    return declareInitializer(name, /*trainable=*/false);
  } else {
    value = builder_.input(name, Type(tensor.dtype, tensor.shape));
    constantLeaves_[std::string(value->name())] = tensor;
  }
  values_[name] = value;
  return value;
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

bool ImportContext::outputUsed(int i) const {
  return i < node_->output_size() && !node_->output(i).empty() &&
         used_.count(node_->output(i));
}

void ImportContext::define(int i, Value *value) {
  if (i < node_->output_size() && !node_->output(i).empty())
    values_[node_->output(i)] = value;
}

void ImportContext::deferTranspose(int i) {
  if (i < node_->output_size() && !node_->output(i).empty())
    deferred_[node_->output(i)] = node_->input(0);
}

void ImportContext::defineKnown(int i, KnownTensor tensor) {
  if (i < node_->output_size() && !node_->output(i).empty())
    known_[node_->output(i)] = std::move(tensor);
}

absl::StatusOr<Op *> ImportContext::create(llvm::StringRef kind,
                                           llvm::ArrayRef<Value *> operands,
                                           AttrList attrs, int outputIndex) {
  absl::StatusOr<Op *> op = builder_.tryCreate(kind, operands, std::move(attrs));
  if (!op.ok())
    return nodeError(std::string(op.status().message()));
  Value *first = (*op)->result(0);
  if (outputIndex >= 0 && outputIndex < node_->output_size() &&
      !node_->output(outputIndex).empty()) {
    nameAfterOutput(first, outputIndex);
    define(outputIndex, first);
  } else if (!node_->name().empty()) {
    builder_.graph().renameValue(
        first, builder_.graph().uniqueName(
                   fmt::format("{}.{}", node_->name(), kind.str())));
  }
  return op;
}

void ImportContext::nameAfterOutput(Value *value, int outputIndex) {
  Graph &graph = builder_.graph();
  graph.renameValue(value, graph.uniqueName(node_->output(outputIndex)));
}

absl::StatusOr<Value *> ImportContext::op(llvm::StringRef kind,
                                          llvm::ArrayRef<Value *> operands,
                                          AttrList attrs, int outputIndex) {
  REMAT_ASSIGN_OR_RETURN(Op * created,
                         create(kind, operands, std::move(attrs), outputIndex));
  return created->result(0);
}

absl::StatusOr<Value *> ImportContext::scalar(double value, DType dtype,
                                              std::vector<int64_t> shape) {
  return op("constant", {},
            {{"value", value},
             {"shape", Attribute(std::move(shape))},
             {"dtype", std::string(dtypeName(dtype))}});
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *ImportContext::attr(llvm::StringRef name) const {
  for (const onnx::AttributeProto &a : node_->attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

absl::StatusOr<int64_t> ImportContext::intAttr(llvm::StringRef name,
                                               int64_t fallback) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto::INT)
    return error("attribute '{}' must be an int", name.str());
  return a->i();
}

absl::StatusOr<double> ImportContext::floatAttr(llvm::StringRef name,
                                                double fallback) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT)
    return error("attribute '{}' must be a float", name.str());
  return double(a->f());
}

absl::StatusOr<std::vector<int64_t>>
ImportContext::intsAttr(llvm::StringRef name,
                        std::vector<int64_t> fallback) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto::INTS)
    return error("attribute '{}' must be a list of ints", name.str());
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::StatusOr<std::string>
ImportContext::stringAttr(llvm::StringRef name, std::string fallback) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto::STRING)
    return error("attribute '{}' must be a string", name.str());
  return a->s();
}

} // namespace remat::onnximport

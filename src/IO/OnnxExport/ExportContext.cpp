//===- ExportContext.cpp - State of one ONNX export ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "ExportContext.h"

#include "remat/IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"

namespace remat::onnxexport {

int onnxElementType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return onnx::TensorProto::FLOAT;
  case DType::F64:
    return onnx::TensorProto::DOUBLE;
  case DType::F16:
    return onnx::TensorProto::FLOAT16;
  case DType::BF16:
    return onnx::TensorProto::BFLOAT16;
  case DType::I8:
    return onnx::TensorProto::INT8;
  case DType::I32:
    return onnx::TensorProto::INT32;
  case DType::I64:
    return onnx::TensorProto::INT64;
  case DType::Bool:
    return onnx::TensorProto::BOOL;
  }
  llvm_unreachable("unknown dtype");
}

NodeAttr intAttr(llvm::StringRef name, int64_t value) {
  NodeAttr attr;
  attr.set_name(name.str());
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(value);
  return attr;
}

NodeAttr floatAttr(llvm::StringRef name, double value) {
  NodeAttr attr;
  attr.set_name(name.str());
  attr.set_type(onnx::AttributeProto::FLOAT);
  attr.set_f(float(value));
  return attr;
}

NodeAttr intsAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> values) {
  NodeAttr attr;
  attr.set_name(name.str());
  attr.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    attr.add_ints(v);
  return attr;
}

NodeAttr stringAttr(llvm::StringRef name, llvm::StringRef value) {
  NodeAttr attr;
  attr.set_name(name.str());
  attr.set_type(onnx::AttributeProto::STRING);
  attr.set_s(value.str());
  return attr;
}

void ExportContext::setOp(const Op *op) {
  op_ = op;
  signature_.reset();
  operandTypes_ = op->operandTypes();
  signature_.emplace(op->def(), operandTypes_, op->attrs());
  operandNames_.clear();
  for (const Value *operand : op->operands())
    operandNames_.push_back(names_.lookup(operand));
}

const std::string &ExportContext::operand(unsigned i) const {
  return operandNames_[i];
}

std::string ExportContext::result(unsigned i) const {
  return op_->result(i)->name().str();
}

void ExportContext::emit(llvm::StringRef opType,
                         std::vector<std::string> inputs,
                         std::vector<std::string> outputs,
                         std::vector<NodeAttr> attrs) {
  onnx::NodeProto &node = *graph_.add_node();
  node.set_op_type(opType.str());
  node.set_name(freshName(opType));
  for (std::string &input : inputs)
    node.add_input(std::move(input));
  for (std::string &output : outputs) {
    taken_.insert(output);
    node.add_output(std::move(output));
  }
  for (NodeAttr &attr : attrs)
    *node.add_attribute() = std::move(attr);
}

std::string ExportContext::freshName(llvm::StringRef hint) {
  // Named after the op being lowered, so that a runtime's profile and
  // errors point back at it.
  std::string base = !nameBase_.empty()
                         ? fmt::format("{}.{}", nameBase_, hint.str())
                     : op_ ? fmt::format("{}.{}", result(), hint.str())
                           : hint.str();
  std::string name = base;
  while (taken_.contains(name))
    name = fmt::format("{}.{}", base, nextTemp_++);
  taken_.insert(name);
  return name;
}

std::string ExportContext::temp(llvm::StringRef opType,
                                std::vector<std::string> inputs,
                                std::vector<NodeAttr> attrs) {
  std::string output = freshName(opType);
  emit(opType, std::move(inputs), {output}, std::move(attrs));
  return output;
}

std::string ExportContext::int64s(llvm::ArrayRef<int64_t> values) {
  std::string name = freshName("const");
  onnx::TensorProto &tensor = *graph_.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(int64_t(values.size()));
  for (int64_t v : values)
    tensor.add_int64_data(v);
  return name;
}

std::string ExportContext::scalar(double value, DType dtype) {
  std::string name = freshName("const");
  onnx::TensorProto &tensor = *graph_.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnxElementType(dtype));
  switch (dtype) {
  case DType::F64:
    tensor.add_double_data(value);
    break;
  case DType::I64:
    tensor.add_int64_data(int64_t(value));
    break;
  case DType::I32:
  case DType::I8:
  case DType::Bool:
    tensor.add_int32_data(int32_t(value));
    break;
  default:
    // float32; f16 and bf16 are refused before any lowering runs.
    tensor.add_float_data(float(value));
    break;
  }
  return name;
}

std::string ExportContext::floats(llvm::ArrayRef<double> values,
                                  llvm::ArrayRef<int64_t> shape, DType dtype) {
  std::string name = freshName("const");
  onnx::TensorProto &tensor = *graph_.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnxElementType(dtype));
  for (int64_t dim : shape)
    tensor.add_dims(dim);
  for (double v : values) {
    if (dtype == DType::F64)
      tensor.add_double_data(v);
    else
      tensor.add_float_data(float(v));
  }
  return name;
}

std::string ExportContext::bools(const std::vector<bool> &values,
                                 llvm::ArrayRef<int64_t> shape) {
  std::string name = freshName("const");
  onnx::TensorProto &tensor = *graph_.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::BOOL);
  for (int64_t dim : shape)
    tensor.add_dims(dim);
  for (bool v : values)
    tensor.add_int32_data(v);
  return name;
}

std::string ExportContext::scalarBool(bool value) {
  return scalar(value ? 1 : 0, DType::Bool);
}

std::string ExportContext::reshaped(const std::string &name,
                                    llvm::ArrayRef<int64_t> shape) {
  return temp("Reshape", {name, int64s(shape)});
}

std::string ExportContext::filledLike(const std::string &like,
                                      llvm::ArrayRef<int64_t> shape,
                                      double fill, DType dtype) {
  std::string value = makeZero(like, dtype);
  if (fill != 0.0)
    value = temp("Add", {value, scalar(fill, dtype)});
  // makeZero's value is [1], which Expand to the shape [] would keep.
  if (shape.empty())
    return reshaped(value, {});
  return temp("Expand", {value, int64s(shape)});
}

std::string ExportContext::makeZero(const std::string &name, DType dtype) {
  std::string first =
      temp("Slice", {reshaped(name, {-1}), int64s({0}), int64s({1})});
  // 0 or 1 whatever the element, infinities and NaN included: times 0,
  // always +0 (a product of the element itself would be NaN for those).
  std::string flag =
      temp("Cast", {first}, {intAttr("to", onnx::TensorProto::BOOL)});
  std::string unit =
      temp("Cast", {flag}, {intAttr("to", onnxElementType(dtype))});
  return temp("Mul", {unit, scalar(0.0, dtype)});
}

std::string ExportContext::zeroFrom(const std::string &name, DType dtype) {
  if (auto it = zeros_.find(name); it != zeros_.end())
    return it->second;
  std::string zero = makeZero(name, dtype);
  zeros_[name] = zero;
  return zero;
}

void ExportContext::bind(const Value *value, std::string name) {
  taken_.insert(name);
  names_[value] = std::move(name);
}

void ExportContext::rebindOperand(unsigned i, std::string name) {
  operandNames_[i] = std::move(name);
}

absl::Status ExportContext::opError(const std::string &message) const {
  return remat::opError(*op_, message);
}

void ExportContext::reserve(llvm::StringRef name) { taken_.insert(name); }

std::string reduce(ExportContext &ctx, llvm::StringRef opType,
                   const std::string &x, llvm::ArrayRef<int64_t> axes,
                   bool keepdims, std::string output) {
  if (output.empty())
    output = ctx.freshName(opType);
  if (opType == "ReduceSum")
    ctx.emit(opType, {x, ctx.int64s(axes)}, {output},
             {intAttr("keepdims", keepdims)});
  else
    ctx.emit(opType, {x}, {output},
             {intsAttr("axes", axes), intAttr("keepdims", keepdims)});
  return output;
}

} // namespace remat::onnxexport

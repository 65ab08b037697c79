//===- OnnxGraph.cpp - The ONNX graph an export writes ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "OnnxGraph.h"

#include <fmt/format.h>

#include <iterator>

namespace remat::onnxexport {

int onnxElementType(DType dtype) {
  // By DType's enumerators, in their order.
  static constexpr int kTypes[] = {
      onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE,
      onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16,
      onnx::TensorProto::INT8, onnx::TensorProto::INT32,
      onnx::TensorProto::INT64, onnx::TensorProto::BOOL};
  static_assert(std::size(kTypes) == size_t(DType::Bool) + 1,
                "one ONNX type per DType");
  return kTypes[size_t(dtype)];
}

DType floatDType(int onnxType) {
  return onnxType == onnx::TensorProto::DOUBLE ? DType::F64 : DType::F32;
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

std::string OnnxGraph::freshName(llvm::StringRef base, llvm::StringRef hint) {
  std::string first =
      base.empty() ? hint.str() : fmt::format("{}.{}", base.str(), hint.str());
  std::string name = first;
  while (taken_.contains(name))
    name = fmt::format("{}.{}", first, nextName_++);
  taken_.insert(name);
  return name;
}

absl::Status OnnxGraph::index() {
  REMAT_ASSIGN_OR_RETURN(infos_, TensorInfos::infer(model_));
  return absl::OkStatus();
}

void OnnxGraph::rebuildNodes(
    llvm::function_ref<void(int, onnx::NodeProto &)> before,
    llvm::function_ref<void(int)> after) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph_.mutable_node());
  for (int i = 0; i < nodes.size(); ++i) {
    onnx::NodeProto &node = *nodes.Mutable(i);
    before(i, node);
    graph_.mutable_node()->Add(std::move(node));
    if (after)
      after(i);
  }
}

void NodeBuilder::emit(llvm::StringRef opType, std::vector<std::string> inputs,
                       std::vector<std::string> outputs,
                       std::vector<NodeAttr> attrs) {
  onnx::NodeProto &node = *graph_.proto().add_node();
  node.set_op_type(opType.str());
  node.set_name(freshName(opType));
  for (std::string &input : inputs)
    node.add_input(std::move(input));
  for (std::string &output : outputs) {
    graph_.reserve(output);
    node.add_output(std::move(output));
  }
  for (NodeAttr &attr : attrs)
    *node.add_attribute() = std::move(attr);
}

std::string NodeBuilder::temp(llvm::StringRef opType,
                              std::vector<std::string> inputs,
                              std::vector<NodeAttr> attrs) {
  std::string output = freshName(opType);
  emit(opType, std::move(inputs), {output}, std::move(attrs));
  return output;
}

onnx::TensorProto &NodeBuilder::initializer(int onnxType) {
  std::string name = freshName("const");
  onnx::TensorProto &tensor = *graph_.proto().add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnxType);
  return tensor;
}

std::string NodeBuilder::int64s(llvm::ArrayRef<int64_t> values) {
  onnx::TensorProto &tensor = initializer(onnx::TensorProto::INT64);
  tensor.add_dims(int64_t(values.size()));
  for (int64_t v : values)
    tensor.add_int64_data(v);
  return tensor.name();
}

std::string NodeBuilder::scalar(double value, DType dtype) {
  onnx::TensorProto &tensor = initializer(onnxElementType(dtype));
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
  return tensor.name();
}

std::string NodeBuilder::floats(llvm::ArrayRef<double> values,
                                llvm::ArrayRef<int64_t> shape, DType dtype) {
  onnx::TensorProto &tensor = initializer(onnxElementType(dtype));
  for (int64_t dim : shape)
    tensor.add_dims(dim);
  for (double v : values) {
    if (dtype == DType::F64)
      tensor.add_double_data(v);
    else
      tensor.add_float_data(float(v));
  }
  return tensor.name();
}

std::string NodeBuilder::bools(const std::vector<bool> &values,
                               llvm::ArrayRef<int64_t> shape) {
  onnx::TensorProto &tensor = initializer(onnx::TensorProto::BOOL);
  for (int64_t dim : shape)
    tensor.add_dims(dim);
  for (bool v : values)
    tensor.add_int32_data(v);
  return tensor.name();
}

std::string NodeBuilder::scalarBool(bool value) {
  return scalar(value ? 1 : 0, DType::Bool);
}

std::string NodeBuilder::reshaped(const std::string &name,
                                  llvm::ArrayRef<int64_t> shape) {
  return temp("Reshape", {name, int64s(shape)});
}

} // namespace remat::onnxexport

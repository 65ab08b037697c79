//===- OnnxModel.cpp - Loading and checking ONNX models ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"
#include "ImportContext.h"

#include "remat/Support/Status.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <limits>
#include <vector>

namespace remat::onnximport {

absl::StatusOr<onnx::ModelProto> parseModel(llvm::StringRef bytes,
                                            llvm::StringRef fileName) {
  onnx::ModelProto model;
  if (bytes.size() > size_t(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), int(bytes.size())))
    return invalidArgument("{}: error: not an ONNX model (the bytes do not parse as "
                           "a ModelProto)",
                           fileName.str());
  if (!model.has_graph())
    return invalidArgument("{}: error: not an ONNX model (no graph)", fileName.str());
  REMAT_RETURN_IF_ERROR(loadExternalData(model, fileName));
  return model;
}

absl::StatusOr<int64_t> defaultOpset(const onnx::ModelProto &model,
                                     llvm::StringRef fileName) {
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    if (!isDefaultDomain(opset.domain()))
      continue;
    if (opset.version() < kMinOpset || opset.version() > kMaxOpset)
      return invalidArgument("{}: error: opset {} is not supported (remat imports "
                             "opsets {} to {}; re-export with "
                             "opset_version={})",
                             fileName.str(), opset.version(), kMinOpset,
                             kMaxOpset, kMaxOpset);
    return opset.version();
  }
  return invalidArgument("{}: error: the model imports no default-domain opset",
                         fileName.str());
}

namespace {

/// Attributes that ONNX's shape inference divides by or sizes windows with
/// and does not check first: a 0 stride (or DepthToSpace's 0 blocksize) is
/// an integer division by zero inside libonnx (`convPoolShapeInference`),
/// which no exception reports.
/// Every node of every graph, subgraphs included (an explicit stack).
absl::Status checkWindowAttributes(const onnx::GraphProto &main,
                                   llvm::StringRef fileName) {
  std::vector<const onnx::GraphProto *> graphs = {&main};
  while (!graphs.empty()) {
    const onnx::GraphProto *graph = graphs.back();
    graphs.pop_back();
    for (const onnx::NodeProto &node : graph->node()) {
      for (const onnx::AttributeProto &attribute : node.attribute()) {
        const std::string &name = attribute.name();
        bool positive = name == "strides" || name == "dilations" ||
                        name == "kernel_shape" || name == "group" ||
                        name == "blocksize";
        for (int64_t value : attribute.ints())
          if (positive && value < 1)
            return invalidArgument(
                "{}: error: node '{}' ({}): attribute '{}' holds {}; it must "
                "be at least 1",
                fileName.str(), node.name(), node.op_type(), name, value);
        if (positive && attribute.has_i() && attribute.i() < 1)
          return invalidArgument(
              "{}: error: node '{}' ({}): attribute '{}' is {}; it must be at "
              "least 1",
              fileName.str(), node.name(), node.op_type(), name, attribute.i());
        if (attribute.has_g())
          graphs.push_back(&attribute.g());
        for (const onnx::GraphProto &subgraph : attribute.graphs())
          graphs.push_back(&subgraph);
      }
    }
  }
  return absl::OkStatus();
}

/// Runs `check`, a call into libonnx, which reports problems by throwing
/// (nothing else here throws); `who` names the part of ONNX that objects.
template <typename Check>
absl::Status rethrownAsError(llvm::StringRef fileName, llvm::StringRef who,
                             Check check) {
  try {
    check();
  } catch (const std::exception &e) {
    // ONNX's messages run over several lines, some naming the node on the
    // second ("... of node: \nname: /Relu_1 OpType: Relu\n is not ..."):
    // one line, its runs of blanks and newlines made one space.
    std::string message;
    for (char c : std::string(e.what())) {
      bool blank = c == '\n' || c == ' ' || c == '\t' || c == '\r';
      if (!blank)
        message.push_back(c);
      else if (!message.empty() && message.back() != ' ')
        message.push_back(' ');
    }
    while (!message.empty() && message.back() == ' ')
      message.pop_back();
    // A node ONNX prints may hold a whole tensor.
    constexpr size_t kMaxMessage = 400;
    if (message.size() > kMaxMessage)
      message = message.substr(0, kMaxMessage) + " ...";
    return invalidArgument("{}: error: {} rejects the model: {}",
                           fileName.str(), who.str(), message);
  }
  return absl::OkStatus();
}

} // namespace

absl::Status applyInputShapes(
    onnx::ModelProto &model, llvm::StringRef fileName,
    const std::map<std::string, std::vector<int64_t>, std::less<>>
        &inputShapes) {
  onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, bool, std::less<>> applied;
  for (onnx::ValueInfoProto &input : *graph.mutable_input()) {
    auto it = inputShapes.find(input.name());
    if (it == inputShapes.end())
      continue;
    applied[input.name()] = true;
    onnx::TypeProto_Tensor *tensor =
        input.mutable_type()->mutable_tensor_type();
    onnx::TensorShapeProto *shape = tensor->mutable_shape();
    const std::vector<int64_t> &dims = it->second;
    if (tensor->has_shape() && shape->dim_size() != 0 &&
        shape->dim_size() != int(dims.size()))
      return invalidArgument("{}: error: --input-shape gives input '{}' rank {}, the "
                             "model has rank {}",
                             fileName.str(), input.name(), dims.size(),
                             shape->dim_size());
    for (size_t i = 0; i < dims.size() && int(i) < shape->dim_size(); ++i) {
      const onnx::TensorShapeProto_Dimension &dim = shape->dim(int(i));
      if (dim.has_dim_value() && dim.dim_value() != dims[i])
        return invalidArgument("{}: error: --input-shape gives input '{}' dimension "
                               "{} the size {}, the model fixes it at {}",
                               fileName.str(), input.name(), i, dims[i],
                               dim.dim_value());
    }
    shape->clear_dim();
    for (int64_t dim : dims)
      shape->add_dim()->set_dim_value(dim);
  }
  for (const auto &[name, dims] : inputShapes)
    if (!applied.count(name))
      return invalidArgument("{}: error: --input-shape names '{}', which is not an "
                             "input of the model",
                             fileName.str(), name);
  return absl::OkStatus();
}

absl::Status checkModel(const onnx::ModelProto &model,
                        llvm::StringRef fileName) {
  REMAT_RETURN_IF_ERROR(checkWindowAttributes(model.graph(), fileName));
  return rethrownAsError(fileName, "the ONNX checker",
                         [&] { onnx::checker::check_model(model); });
}

absl::Status inferShapes(onnx::ModelProto &model, llvm::StringRef fileName) {
  return rethrownAsError(fileName, "ONNX's shape inference", [&] {
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(/*check_type_val=*/true,
                                    /*strict_mode_val=*/1,
                                    /*data_prop_val=*/true));
  });
}

absl::StatusOr<Type> staticType(const onnx::ValueInfoProto &info,
                                llvm::StringRef fileName,
                                llvm::StringRef what) {
  if (!info.type().has_tensor_type())
    return invalidArgument("{}: error: {} '{}' is not a tensor", fileName.str(),
                           what.str(), info.name());
  const onnx::TypeProto_Tensor &tensor = info.type().tensor_type();
  absl::StatusOr<DType> dtype = dtypeOfOnnx(tensor.elem_type());
  if (!dtype.ok())
    return invalidArgument("{}: error: {} '{}' has an {}", fileName.str(), what.str(),
                           info.name(), std::string(dtype.status().message()));
  if (!tensor.has_shape())
    return invalidArgument("{}: error: {} '{}' has no static shape; give one with "
                           "--input-shape={}=D0xD1x...",
                           fileName.str(), what.str(), info.name(),
                           info.name());
  std::vector<int64_t> shape;
  for (const onnx::TensorShapeProto_Dimension &dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      return invalidArgument(
          "{}: error: {} '{}' has a dynamic dimension{}; fix it with "
          "--input-shape={}=D0xD1x...",
          fileName.str(), what.str(), info.name(),
          dim.has_dim_param() ? fmt::format(" '{}'", dim.dim_param()) : "",
          info.name());
    shape.push_back(dim.dim_value());
  }
  return Type(*dtype, shape);
}

} // namespace remat::onnximport

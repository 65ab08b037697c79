//===- TensorInfos.cpp - Every tensor's type in an exported model ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "TensorInfos.h"

#include "llvm/ADT/ArrayRef.h"

#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>

#include <algorithm>
#include <exception>

namespace remat::onnxexport {

int64_t elementBytes(int type) {
  switch (type) {
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return 1;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return 2;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
    return 8;
  default:
    return 0;
  }
}

namespace {

TensorInfo makeInfo(int type, llvm::ArrayRef<int64_t> dims) {
  TensorInfo info{type, llvm::SmallVector<int64_t, 4>(dims.begin(), dims.end())};
  info.bytes = elementBytes(type);
  for (int64_t dim : dims)
    info.bytes *= dim;
  return info;
}

} // namespace

absl::StatusOr<TensorInfos> TensorInfos::infer(onnx::ModelProto &model) {
  onnx::GraphProto &graph = *model.mutable_graph();
  int kept = graph.value_info_size();
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception &e) {
    std::string message = e.what();
    message.resize(std::min(message.find('\n'), message.size()));
    return absl::InternalError(fmt::format(
        "ONNX's shape inference fails on the exported model (a bug in "
        "remat's export): {}",
        message));
  }
  TensorInfos infos;
  for (const auto *list : {&graph.input(), &graph.output(), &graph.value_info()})
    for (const onnx::ValueInfoProto &info : *list)
      infos.add(info);
  for (const onnx::TensorProto &tensor : graph.initializer())
    infos.infos_[tensor.name()] = makeInfo(
        tensor.data_type(),
        llvm::SmallVector<int64_t, 4>(tensor.dims().begin(), tensor.dims().end()));
  graph.mutable_value_info()->DeleteSubrange(kept,
                                             graph.value_info_size() - kept);
  return infos;
}

void TensorInfos::add(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type())
    return;
  const onnx::TypeProto_Tensor &tensor = info.type().tensor_type();
  if (!tensor.has_shape())
    return;
  llvm::SmallVector<int64_t, 4> dims;
  for (const onnx::TensorShapeProto_Dimension &dim : tensor.shape().dim()) {
    if (!dim.has_dim_value())
      return;
    dims.push_back(dim.dim_value());
  }
  infos_[info.name()] = makeInfo(tensor.elem_type(), dims);
}

} // namespace remat::onnxexport

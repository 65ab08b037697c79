//===- PinOrder.cpp - Each op's nodes kept after what the op follows ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "PinOrder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <optional>

namespace remat::onnxexport {
namespace {

/// Bytes of one element of an ONNX element type; 0 for strings and types
/// the export never writes.
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

/// A tensor's element type and size, where every dim is known.
struct TensorInfo {
  int type = 0;
  int64_t bytes = 0;
  bool isFloat() const {
    return type == onnx::TensorProto::FLOAT ||
           type == onnx::TensorProto::DOUBLE;
  }
};

/// What the model says of each tensor's type: its inputs, outputs,
/// initializers and the value infos shape inference added.
class TensorInfos {
public:
  explicit TensorInfos(const onnx::GraphProto &graph) {
    for (const auto *infos :
         {&graph.input(), &graph.output(), &graph.value_info()})
      for (const onnx::ValueInfoProto &info : *infos)
        add(info);
    for (const onnx::TensorProto &tensor : graph.initializer()) {
      int64_t elements = 1;
      for (int64_t dim : tensor.dims())
        elements *= dim;
      infos_[tensor.name()] = {tensor.data_type(),
                               elements * elementBytes(tensor.data_type())};
    }
  }

  std::optional<TensorInfo> find(const std::string &name) const {
    auto it = infos_.find(name);
    if (it == infos_.end())
      return std::nullopt;
    return it->second;
  }

private:
  void add(const onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type())
      return;
    const onnx::TypeProto_Tensor &tensor = info.type().tensor_type();
    if (!tensor.has_shape())
      return;
    int64_t elements = 1;
    for (const onnx::TensorShapeProto_Dimension &dim : tensor.shape().dim()) {
      if (!dim.has_dim_value())
        return;
      elements *= dim.dim_value();
    }
    infos_[info.name()] = {tensor.elem_type(),
                           elements * elementBytes(tensor.elem_type())};
  }

  llvm::StringMap<TensorInfo> infos_;
};

/// Ops whose result is a view of their first input in ONNX Runtime: they
/// write nothing, so where they run does not matter.
bool isView(const std::string &opType) {
  return opType == "Reshape" || opType == "Identity" ||
         opType == "Squeeze" || opType == "Unsqueeze" || opType == "Flatten";
}

/// The input slot through which `node` is made to wait: its smallest float
/// input of at most a quarter of what it writes (or 64 bytes), when it
/// writes at least `minBytes`; -1 when there is none.
int pinnedSlot(const onnx::NodeProto &node, const TensorInfos &infos,
               int64_t minBytes) {
  if (isView(node.op_type()) || node.output_size() == 0)
    return -1;
  int64_t written = 0;
  for (const std::string &output : node.output()) {
    std::optional<TensorInfo> info = infos.find(output);
    if (!info)
      return -1;
    written += info->bytes;
  }
  if (written < minBytes)
    return -1;
  int64_t cheap = std::max<int64_t>(written / 4, 64);
  int slot = -1;
  int64_t least = 0;
  for (int i = 0; i < node.input_size(); ++i) {
    std::optional<TensorInfo> info = infos.find(node.input(i));
    if (!info || !info->isFloat() || info->bytes > cheap)
      continue;
    if (slot < 0 || info->bytes < least) {
      slot = i;
      least = info->bytes;
    }
  }
  return slot;
}

} // namespace

absl::Status pinToOps(onnx::ModelProto &model, ExportContext &ctx,
                      llvm::ArrayRef<OpNodes> ops, int64_t minBytes) {
  onnx::GraphProto &graph = *model.mutable_graph();
  int keptInfos = graph.value_info_size();
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
  TensorInfos infos(graph);
  graph.mutable_value_info()->DeleteSubrange(
      keptInfos, graph.value_info_size() - keptInfos);

  // The nodes are taken out and put back in order, a pinned node after
  // the nodes that make its wait (`ExportContext::temp` appends).
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph.mutable_node());
  int next = 0;
  // Zeros made here, before the first node that waits on each. The
  // lowerings' (`ExportContext::zeroFrom`) may come after a node that
  // would reuse one.
  llvm::StringMap<std::string> zeros;
  auto putBack = [&](int index) {
    graph.mutable_node()->Add(std::move(*nodes.Mutable(index)));
  };
  for (const OpNodes &span : ops) {
    for (; next < span.begin; ++next)
      putBack(next);
    ctx.setOp(span.op);
    llvm::StringSet<> following;
    following.insert(span.follows);
    std::string zero;
    for (; next < span.end; ++next) {
      onnx::NodeProto &node = *nodes.Mutable(next);
      bool follows = llvm::any_of(node.input(), [&](const std::string &in) {
        return following.contains(in);
      });
      int slot = follows || span.follows.empty()
                     ? -1
                     : pinnedSlot(node, infos, minBytes);
      if (slot >= 0) {
        if (zero.empty() && span.isZero)
          zero = span.follows;
        if (zero.empty()) {
          std::string &made = zeros[span.follows];
          if (made.empty())
            made = ctx.makeZero(span.follows, span.dtype);
          zero = made;
        }
        std::string wait = zero;
        int type = infos.find(node.input(slot))->type;
        if (type != onnxElementType(span.dtype))
          wait = ctx.temp("Cast", {wait}, {intAttr("to", type)});
        node.set_input(slot, ctx.temp("Sub", {node.input(slot), wait}));
        follows = true;
      }
      if (follows)
        for (const std::string &output : node.output())
          following.insert(output);
      putBack(next);
    }
  }
  for (; next < nodes.size(); ++next)
    putBack(next);
  return absl::OkStatus();
}

} // namespace remat::onnxexport

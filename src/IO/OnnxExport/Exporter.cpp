//===- Exporter.cpp - Training graphs as ONNX models -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The export as a sequence of steps over one OnnxGraph. Lowering walks the
/// training graph in schedule order: leaves become graph inputs (and
/// initializers where weights are given), every other op goes through the
/// lowering its op definition has, and the forced order (ForcedOrder.h)
/// turns the order the runtime must keep into data dependencies. The
/// outputs are ordered loss, gradients, the rest. Then, on the indexed
/// graph, the pins (PinOrder.h), the peak-order waits (PeakOrder.h) and the
/// idle-buffer hiding (IdleBuffers.h), each returning what it found. The
/// model is checked by ONNX's checker before it is returned.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/OnnxExport.h"

#include "ExportContext.h"
#include "ForcedOrder.h"
#include "IdleBuffers.h"
#include "PeakOrder.h"
#include "PinOrder.h"
#include "Waits.h"

#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/checker.h>

#include <cstring>
#include <exception>

namespace remat {
namespace onnxexport {
namespace {

onnx::ValueInfoProto valueInfo(const Value &value) {
  onnx::ValueInfoProto info;
  info.set_name(value.name().str());
  onnx::TypeProto_Tensor &tensor = *info.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(onnxElementType(value.type().dtype()));
  onnx::TensorShapeProto &shape = *tensor.mutable_shape();
  for (int64_t dim : value.type().shape())
    shape.add_dim()->set_dim_value(dim);
  return info;
}

/// Writes `tensor`'s bytes as the initializer `name` (little-endian raw
/// data, as ONNX stores it).
void addInitializer(onnx::GraphProto &graph, const std::string &name,
                    const HostTensor &tensor) {
  onnx::TensorProto &proto = *graph.add_initializer();
  proto.set_name(name);
  proto.set_data_type(onnxElementType(tensor.dtype()));
  for (int64_t dim : tensor.type().shape())
    proto.add_dims(dim);
  Tensor view = tensor.view();
  proto.set_raw_data(std::string(reinterpret_cast<const char *>(view.raw()),
                                 size_t(tensor.type().byteSize())));
}

/// The outputs in the export's order: the loss, every param's gradient in
/// param order, then the others as the graph lists them.
std::vector<const Value *> orderedOutputs(const Graph &graph) {
  llvm::StringMap<const Value *> byName;
  for (const Value *output : graph.outputs())
    byName.try_emplace(output->name(), output);
  std::vector<const Value *> ordered = {graph.outputs().front()};
  llvm::DenseSet<const Value *> placed = {ordered.front()};
  for (const Value *param : graph.params()) {
    auto it = byName.find((param->name().str() + ".grad"));
    if (it != byName.end() && placed.insert(it->second).second)
      ordered.push_back(it->second);
  }
  for (const Value *output : graph.outputs())
    if (placed.insert(output).second)
      ordered.push_back(output);
  return ordered;
}

absl::Status checkExportable(const Graph &graph,
                             const OnnxExportOptions &options) {
  if (options.opset != 17)
    return invalidArgument("the export writes opset 17 (--opset=17), got {}",
                           options.opset);
  if (graph.outputs().empty())
    return invalidArgument("{}: error: graph @{} has no outputs",
                           graph.sourceName().str(), graph.name().str());
  llvm::StringSet<> outputs;
  for (const Value *output : graph.outputs())
    outputs.insert(output->name());
  bool hasGradient = llvm::any_of(graph.params(), [&](const Value *param) {
    return outputs.contains(param->name().str() + ".grad");
  });
  if (!hasGradient)
    return invalidArgument(
        "graph @{} is not a training graph: no output is a param's gradient "
        "(`<param>.grad`); build one with `remat opt` first",
        graph.name().str());
  for (const Op &op : graph.ops())
    for (const Value *result : op.results()) {
      if (result->type().dtype() == DType::F16 ||
          result->type().dtype() == DType::BF16)
        return opError(op, fmt::format("the export writes f32 and f64 "
                                       "tensors, not {}",
                                       result->type().str()));
      // A batch of 0: ONNX Runtime reads a 0 in Reshape's shape as "keep
      // the input's dim", and averages an empty loss to -0 where remat's
      // executor gives NaN.
      if (result->type().numElements() == 0)
        return opError(op, fmt::format("{} has no elements: the export "
                                       "takes no zero-size tensor (a batch "
                                       "of 0), which ONNX Runtime does not "
                                       "run as remat does",
                                       result->type().str()));
    }
  return absl::OkStatus();
}

} // namespace
} // namespace onnxexport

using namespace onnxexport;

absl::StatusOr<OnnxExport> exportOnnx(const Graph &graph,
                                      const OnnxExportOptions &options) {
  REMAT_RETURN_IF_ERROR(checkExportable(graph, options));
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("remat");
  onnx::OperatorSetIdProto &opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(options.opset);
  onnx::GraphProto &proto = *model.mutable_graph();
  proto.set_name(graph.name().str());

  OnnxGraph onnxGraph(model);
  for (const Op &op : graph.ops())
    for (const Value *result : op.results())
      onnxGraph.reserve(result->name());
  ValueNames names;
  Waits waits(onnxGraph);
  ForcedOrder order(waits, names);
  const LoweringTable &forms = onnxForms();
  for (const Op &op : graph.ops()) {
    if (op.hasFlag(OpFlagLeaf)) {
      const Value &leaf = *op.result();
      *proto.add_input() = valueInfo(leaf);
      names[&leaf] = leaf.name().str();
      if (options.initializers) {
        auto it = options.initializers->find(leaf.name());
        if (it != options.initializers->end()) {
          if (it->second.type() != leaf.type())
            return opError(op, fmt::format("the weight given has type {}",
                                           it->second.type().str()));
          addInitializer(proto, leaf.name().str(), it->second);
        }
      }
      continue;
    }
    const OnnxForm *form = forms.find(op.def());
    if (!form)
      return opError(op, fmt::format("op '{}' has no ONNX lowering",
                                     op.kind().str()));
    if (!form->lower)
      return opError(op, form->refusal);
    ExportContext ctx(onnxGraph, names, op);
    if (options.forceDependencies)
      REMAT_RETURN_IF_ERROR(order.apply(ctx));
    // The lowering's own nodes: not those of the zero it may wait for.
    int begin = proto.node_size();
    REMAT_RETURN_IF_ERROR(form->lower(ctx));
    if (options.forceDependencies)
      order.lowered(op, begin, proto.node_size());
    for (const Value *result : op.results())
      names[result] = result->name().str();
  }
  for (const Value *output : orderedOutputs(graph))
    *proto.add_output() = valueInfo(*output);
  OnnxExport result;
  if (options.forceDependencies) {
    REMAT_RETURN_IF_ERROR(onnxGraph.index());
    pinToOps(onnxGraph, waits, order.takeOpNodes(), options.pinnedNodeBytes);
    if (options.peakOrderRounds > 0)
      result.peakOrder =
          orderPeakAsScheduled(onnxGraph, waits, options.peakOrderRounds,
                               options.pinnedNodeBytes);
    if (options.idleBufferRounds > 0)
      result.idleBuffers = hideIdleBuffers(onnxGraph, options.idleBufferRounds,
                                           options.pinnedNodeBytes);
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    std::string message = e.what();
    if (size_t newline = message.find('\n'); newline != std::string::npos)
      message.resize(newline);
    return absl::InternalError(fmt::format(
        "the exported model of @{} fails ONNX's checker (a bug in remat's "
        "export): {}",
        graph.name().str(), message));
  }
  if (!model.SerializeToString(&result.model))
    return absl::InternalError("cannot serialize the exported model");
  return result;
}

} // namespace remat

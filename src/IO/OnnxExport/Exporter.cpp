//===- Exporter.cpp - Training graphs as ONNX models -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Walks the training graph in schedule order: leaves become graph inputs
/// (and initializers where weights are given), every other op goes through
/// its lowering, the order the runtime must keep becomes forced data
/// dependencies, and the outputs are ordered loss, gradients, the rest. The model is checked
/// by ONNX's checker before it is returned.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/OnnxExport.h"

#include "ExportContext.h"
#include "IdleBuffers.h"
#include "PeakOrder.h"
#include "PinOrder.h"

#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/checker.h>

#include <cstring>
#include <exception>

namespace remat {
namespace onnxexport {
namespace {

/// The ops no ONNX form replays exactly.
absl::Status unexportable(ExportContext &ctx) {
  llvm::StringRef kind = ctx.op().kind();
  if (kind == "dropout")
    return ctx.error("dropout has no ONNX form that replays remat's mask "
                     "(ONNX's Dropout and RandomUniform draw other numbers), "
                     "so a recomputed copy could not match; export a graph "
                     "without dropout (rate 0)");
  return ctx.error("{} belongs to a graph on several devices, which one ONNX "
                   "model cannot run",
                   kind.str());
}

const LoweringTable &lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t;
    addElementwiseLowerings(t);
    addNeuralLowerings(t);
    addNormalizationLowerings(t);
    addShapeLowerings(t);
    t["dropout"] = unexportable;
    t["all_reduce"] = unexportable;
    t["transfer"] = unexportable;
    return t;
  }();
  return table;
}

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

/// Whether an op can wait for `value` by data: a zero is made from its
/// first element (`ExportContext::zeroFrom`).
bool isAwaitable(const Value &value) {
  return isFloatDType(value.type().dtype()) && value.type().numElements() > 0;
}

/// The value an op's dependents wait for: its first awaitable result.
const Value *awaitedResult(const Op &op) {
  for (const Value *result : op.results())
    if (isAwaitable(*result))
      return result;
  return nullptr;
}

/// The runtime's order follows data alone (ONNX Runtime's default is a
/// depth-first walk back from the unread nodes: a node runs just before its
/// first reader, and unread ones, the parameter gradients, all at the
/// end). So the current op also waits, by data, for the ops it follows by
/// control and for the unread results scheduled before it: its smallest
/// float operand `k` is read as `k - (z1 + z2 + ...)`, each `z` a zero that
/// exists only once its value does (docs/export.md).
class ForcedOrder {
public:
  explicit ForcedOrder(ExportContext &ctx) : ctx_(ctx) {}

  absl::Status apply() {
    const Op &op = ctx_.op();
    std::vector<const Value *> awaited;
    for (const Op *trigger : op.controlDeps()) {
      const Value *value = awaitedResult(*trigger);
      if (!value)
        return ctx_.error("its control dependency on '{}' has no ONNX form: "
                          "the op has no float result to wait for",
                          trigger->describe());
      awaited.push_back(value);
    }
    awaitedZero_.clear();
    int slot = smallestFloatOperand(op);
    if (slot < 0 && !awaited.empty())
      return ctx_.error("its control dependencies have no ONNX form: no "
                        "float operand to carry them");
    if (slot < 0)
      return absl::OkStatus();
    llvm::append_range(awaited, unread_);
    unread_.clear();
    if (awaited.empty())
      return absl::OkStatus();
    DType dtype = op.operand(unsigned(slot))->type().dtype();
    std::string total;
    for (const Value *value : awaited) {
      std::string zero =
          ctx_.zeroFrom(ctx_.nameOf(value), value->type().dtype());
      if (value->type().dtype() != dtype)
        zero = ctx_.temp("Cast", {zero},
                         {intAttr("to", onnxElementType(dtype))});
      total = total.empty() ? zero : ctx_.temp("Add", {total, zero});
    }
    ctx_.rebindOperand(unsigned(slot),
                       ctx_.temp("Sub", {ctx_.operand(unsigned(slot)), total}));
    awaitedZero_ = total;
    awaitedDType_ = dtype;
    return absl::OkStatus();
  }

  /// What the op's nodes follow (PinOrder.h): the zero its rebound operand
  /// waits for, else its operand written last (none where every operand is
  /// a leaf).
  OpNodes follows(int begin, int end) const {
    const Op &op = ctx_.op();
    OpNodes nodes{&op, begin, end};
    if (!awaitedZero_.empty()) {
      nodes.follows = awaitedZero_;
      nodes.dtype = awaitedDType_;
      nodes.followsZero = true;
      return nodes;
    }
    const Value *latest = nullptr;
    for (const Value *operand : op.operands())
      if (isAwaitable(*operand) && !operand->producer()->hasFlag(OpFlagLeaf) &&
          (!latest || position_.lookup(operand->producer()) >
                          position_.lookup(latest->producer())))
        latest = operand;
    if (latest) {
      nodes.follows = ctx_.nameOf(latest);
      nodes.dtype = latest->type().dtype();
    }
    return nodes;
  }

  /// Notes the lowered op: the next op waits for each of its results that
  /// nothing reads. Those of an op whose other results are read count too:
  /// a batch norm's gradient has its input's gradient read on, and the
  /// nodes of its scale's and bias's, left unread, would run at the step's
  /// end, holding two activation-sized operands until then.
  void lowered(const Op &op) {
    position_[&op] = int(position_.size());
    for (const Value *result : op.results())
      if (result->uses().empty() && isAwaitable(*result))
        unread_.push_back(result);
  }

private:
  static int smallestFloatOperand(const Op &op) {
    int slot = -1;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Type &type = op.operand(i)->type();
      if (isFloatDType(type.dtype()) &&
          (slot < 0 ||
           type.byteSize() < op.operand(unsigned(slot))->type().byteSize()))
        slot = int(i);
    }
    return slot;
  }

  ExportContext &ctx_;
  std::vector<const Value *> unread_;
  /// The zero the current op's rebound operand waits for.
  std::string awaitedZero_;
  DType awaitedDType_ = DType::F32;
  /// Each lowered op's place in the schedule.
  llvm::DenseMap<const Op *, int> position_;
};

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

absl::StatusOr<std::string> exportOnnx(const Graph &graph,
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

  ExportContext ctx(proto);
  for (const Op &op : graph.ops())
    for (const Value *result : op.results())
      ctx.reserve(result->name());
  ForcedOrder order(ctx);
  std::vector<OpNodes> opNodes;
  const LoweringTable &table = lowerings();
  for (const Op &op : graph.ops()) {
    if (op.hasFlag(OpFlagLeaf)) {
      const Value &leaf = *op.result();
      *proto.add_input() = valueInfo(leaf);
      ctx.bind(&leaf, leaf.name().str());
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
    auto lowering = table.find(op.kind());
    if (lowering == table.end())
      return opError(op, fmt::format("op '{}' has no ONNX lowering",
                                     op.kind().str()));
    ctx.setOp(&op);
    if (options.forceDependencies)
      REMAT_RETURN_IF_ERROR(order.apply());
    // The lowering's own nodes: not those of the zero it may wait for.
    int begin = proto.node_size();
    REMAT_RETURN_IF_ERROR(lowering->second(ctx));
    if (options.forceDependencies)
      opNodes.push_back(order.follows(begin, proto.node_size()));
    order.lowered(op);
    for (const Value *result : op.results())
      ctx.bind(result, result->name().str());
  }
  for (const Value *output : orderedOutputs(graph))
    *proto.add_output() = valueInfo(*output);
  if (options.forceDependencies) {
    REMAT_ASSIGN_OR_RETURN(TensorInfos infos, TensorInfos::infer(model));
    REMAT_RETURN_IF_ERROR(
        pinToOps(model, ctx, opNodes, options.pinnedNodeBytes, infos));
    if (options.peakOrderRounds > 0) {
      REMAT_ASSIGN_OR_RETURN(
          PeakOrderReplay order,
          orderPeakAsScheduled(model, ctx, infos, options.peakOrderRounds,
                               options.pinnedNodeBytes));
      if (options.peakOrder)
        *options.peakOrder = order;
    }
    if (options.idleBufferRounds > 0) {
      REMAT_ASSIGN_OR_RETURN(
          IdleBufferReplay idle,
          hideIdleBuffers(model, ctx, infos, options.idleBufferRounds,
                          options.pinnedNodeBytes));
      if (options.idleBuffers)
        *options.idleBuffers = idle;
    }
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
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return absl::InternalError("cannot serialize the exported model");
  return bytes;
}

} // namespace remat

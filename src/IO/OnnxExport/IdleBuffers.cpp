//===- IdleBuffers.cpp - No buffer held idle for reuse at the peak --------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "IdleBuffers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace remat::onnxexport {
namespace {

/// ONNX Runtime's default order: a depth-first walk back from the nodes
/// whose outputs no node reads, taken in node order; a node's producers are
/// pushed in node order, so the last written is entered first, and a node
/// runs when the walk leaves it (GraphViewer's reverse DFS).
std::vector<int> runtimeOrder(const onnx::GraphProto &graph) {
  int n = graph.node_size();
  llvm::StringMap<int> producer;
  for (int i = 0; i < n; ++i)
    for (const std::string &output : graph.node(i).output())
      if (!output.empty())
        producer[output] = i;
  std::vector<llvm::SmallVector<int, 4>> producers(static_cast<size_t>(n));
  std::vector<bool> read(size_t(n), false);
  for (int i = 0; i < n; ++i) {
    llvm::SmallVector<int, 4> &from = producers[size_t(i)];
    for (const std::string &input : graph.node(i).input())
      if (auto it = producer.find(input); it != producer.end())
        from.push_back(it->second);
    llvm::sort(from);
    from.erase(std::unique(from.begin(), from.end()), from.end());
    for (int j : from)
      read[size_t(j)] = true;
  }
  std::vector<std::pair<int, bool>> stack;
  for (int i = 0; i < n; ++i)
    if (!read[size_t(i)])
      stack.push_back({i, false});
  std::vector<bool> entered(size_t(n), false);
  std::vector<int> order;
  order.reserve(size_t(n));
  while (!stack.empty()) {
    std::pair<int, bool> top = stack.back();
    stack.pop_back();
    if (top.second) {
      order.push_back(top.first);
      continue;
    }
    if (entered[size_t(top.first)])
      continue;
    entered[size_t(top.first)] = true;
    stack.push_back({top.first, true});
    for (int j : producers[size_t(top.first)])
      stack.push_back({j, false});
  }
  return order;
}

/// Unary kernels that may write their result over their input's buffer
/// when that input is read by nothing else (`MayInplace(0, 0)`).
bool mayRunInPlace(const std::string &opType) {
  static const llvm::StringSet<> kinds = {
      "Relu",  "Sigmoid",  "Tanh",        "LeakyRelu",       "Elu",  "Selu",
      "Softplus", "Softsign", "HardSigmoid", "ThresholdedRelu", "Cast", "Dropout"};
  return kinds.contains(opType);
}

/// Ops whose result's dims do not follow from their inputs' dims: hiding
/// the inputs' dims would not hide the result's.
bool dimsFromValues(const std::string &opType) {
  return opType == "Expand" || opType == "ConstantOfShape" ||
         opType == "Shape" || opType == "Size" || opType == "Range";
}

/// The planner's key for reuse: element size and dims.
std::string reuseKey(const TensorInfo &info) {
  std::string key = fmt::format("{}", elementBytes(info.type));
  for (int64_t dim : info.dims)
    key += fmt::format(",{}", dim);
  return key;
}

/// Makes `node` read its first input, and every input of its result's
/// dims, through a Reshape to dims computed from data (`Shape(x) + z`, `z`
/// an int64 zero of its first float input), so that the runtime knows its
/// result's rank but not its dims. The nodes it adds go before `node`.
void hideResultDims(onnx::NodeProto &node, const TensorInfos &infos,
                    ExportContext &ctx) {
  auto firstFloat = llvm::find_if(node.input(), [&](const std::string &in) {
    const TensorInfo *info = infos.find(in);
    return info && info->isFloat() && info->bytes > 0;
  });
  if (firstFloat == node.input().end())
    return;
  DType dtype = infos.find(*firstFloat)->type == onnx::TensorProto::DOUBLE
                    ? DType::F64
                    : DType::F32;
  std::string offset =
      ctx.temp("Cast", {ctx.makeZero(*firstFloat, dtype)},
               {intAttr("to", onnx::TensorProto::INT64)});
  const TensorInfo *result = infos.find(node.output(0));
  for (int i = 0; i < node.input_size(); ++i) {
    const TensorInfo *info = infos.find(node.input(i));
    if (!info || info->dims.empty() ||
        (i > 0 && (!result || info->dims != result->dims)))
      continue;
    std::string dims =
        ctx.temp("Add", {ctx.temp("Shape", {node.input(i)}), offset});
    node.set_input(i, ctx.temp("Reshape", {node.input(i), dims}));
  }
}

/// The graph as the replay walks it, indexed once for every round: nodes
/// in the runtime's order, values by number, each with its planner key.
struct ReplayGraph {
  struct Node {
    llvm::SmallVector<int, 4> inputs, outputs;
    bool view = false, mayInPlace = false;
  };
  struct Value {
    llvm::StringRef name;
    const TensorInfo *info = nullptr;
    /// The planner's reuse key (element size and dims); -1 without dims.
    int key = -1;
    /// Uses as the planner counts them: one per read, one for the
    /// definition, one for a graph output, one for what the caller owns.
    int uses = 0;
    bool output = false;
  };
  std::vector<Node> nodes;
  std::vector<Value> values;
  int keys = 0;

  ReplayGraph(const onnx::GraphProto &graph, llvm::ArrayRef<int> order,
              const TensorInfos &infos) {
    llvm::StringMap<int> ids, keyIds;
    auto id = [&](const std::string &name) {
      auto [it, inserted] = ids.try_emplace(name, int(values.size()));
      if (inserted) {
        Value value{name, infos.find(name)};
        if (value.info && !value.info->dims.empty())
          value.key = keyIds.try_emplace(reuseKey(*value.info), int(keyIds.size()))
                          .first->second;
        values.push_back(value);
      }
      return it->second;
    };
    for (const onnx::ValueInfoProto &input : graph.input())
      values[size_t(id(input.name()))].uses += 1;
    for (const onnx::TensorProto &tensor : graph.initializer())
      values[size_t(id(tensor.name()))].uses += 1;
    nodes.reserve(order.size());
    for (int i : order) {
      const onnx::NodeProto &proto = graph.node(i);
      Node node;
      node.view = isViewOp(proto.op_type());
      node.mayInPlace = mayRunInPlace(proto.op_type());
      for (const std::string &input : proto.input())
        if (!input.empty()) {
          node.inputs.push_back(id(input));
          values[size_t(node.inputs.back())].uses += 1;
        }
      for (const std::string &output : proto.output())
        if (!output.empty()) {
          node.outputs.push_back(id(output));
          values[size_t(node.outputs.back())].uses += 1;
        }
      // The first input, where a view or an in-place kernel reads it.
      if (!proto.input().empty() && proto.input(0).empty())
        node.inputs.insert(node.inputs.begin(), -1);
      nodes.push_back(std::move(node));
    }
    for (const onnx::ValueInfoProto &output : graph.output()) {
      Value &value = values[size_t(id(output.name()))];
      value.uses += 1;
      value.output = true;
    }
    keys = int(keyIds.size());
  }
};

/// One replay of ONNX Runtime's sequential allocation planner over the
/// runtime's order, with the values of `hidden` unknown to it.
class PlannerReplay {
public:
  /// With `reuseFreed` false, no dead buffer is given to another tensor:
  /// the replay's peak is then that of the live bytes alone.
  PlannerReplay(const ReplayGraph &graph, const std::vector<bool> &hidden,
                bool reuseFreed = true)
      : graph_(graph), hidden_(hidden), reuseFreed_(reuseFreed),
        uses_(graph.values.size()), bufferOf_(graph.values.size(), -1),
        freeByKey_(size_t(graph.keys)) {
    for (size_t v = 0; v < graph.values.size(); ++v)
      uses_[v] = graph.values[v].uses;
  }

  /// Replays the planner; returns the peak of held bytes.
  int64_t run() {
    int steps = int(graph_.nodes.size());
    std::vector<int64_t> live(size_t(steps) + 1, 0);
    for (int step = 0; step < steps; ++step) {
      const ReplayGraph::Node &node = graph_.nodes[size_t(step)];
      for (int output : node.outputs)
        place(node, output, step);
      for (int input : node.inputs)
        if (input >= 0)
          release(input, step);
      for (int output : node.outputs)
        release(output, step);
    }
    // Each buffer holds its bytes from its allocation to its last release;
    // between a release and the next tensor that takes it, it is idle.
    for (Buffer &buffer : buffers_) {
      int end = buffer.released < 0 ? steps - 1 : buffer.released;
      live[size_t(buffer.allocated)] += buffer.bytes;
      live[size_t(end) + 1] -= buffer.bytes;
    }
    held_.assign(size_t(steps), 0);
    int64_t bytes = 0, peak = 0;
    for (int step = 0; step < steps; ++step) {
      bytes += live[size_t(step)];
      held_[size_t(step)] = bytes;
      peak = std::max(peak, bytes);
    }
    return peak;
  }

  /// The first values of the buffers idle at a step that holds more than
  /// `bytes`.
  std::vector<int> idleAbove(int64_t bytes) const {
    // above[s]: how many steps before s hold more than `bytes`.
    std::vector<int> above(held_.size() + 1, 0);
    for (size_t step = 0; step < held_.size(); ++step)
      above[step + 1] = above[step] + (held_[step] > bytes);
    std::vector<int> idle;
    for (const Buffer &buffer : buffers_)
      if (llvm::any_of(buffer.gaps, [&](std::pair<int, int> gap) {
            return above[size_t(gap.second)] > above[size_t(gap.first) + 1];
          }))
        idle.push_back(buffer.value);
    return idle;
  }

private:
  struct Buffer {
    int value = 0;
    int64_t bytes = 0;
    int allocated = 0;
    /// The step of its last release; -1 while held (or never released).
    int released = -1;
    /// Idle spans: released at `first`, taken again at `second`.
    std::vector<std::pair<int, int>> gaps;
  };

  const ReplayGraph::Value &value(int id) const {
    return graph_.values[size_t(id)];
  }

  bool reusable(int id) const {
    return value(id).key >= 0 && !hidden_[size_t(id)];
  }

  void share(int id, int buffer) {
    bufferOf_[size_t(id)] = buffer;
    int owner = buffers_[size_t(buffer)].value;
    if (owner != id)
      uses_[size_t(owner)] += uses_[size_t(id)];
  }

  void place(const ReplayGraph::Node &node, int id, int step) {
    const ReplayGraph::Value &result = value(id);
    int input = node.inputs.empty() ? -1 : node.inputs.front();
    int inputBuffer = input >= 0 ? bufferOf_[size_t(input)] : -1;
    if (!result.output && input >= 0 && node.view) {
      // A view of a graph input or initializer is the caller's too.
      if (inputBuffer >= 0)
        share(id, inputBuffer);
      return;
    }
    if (!result.output && inputBuffer >= 0 && node.mayInPlace &&
        uses_[size_t(buffers_[size_t(inputBuffer)].value)] == 1 &&
        reusable(id) && reusable(input) &&
        value(input).info->dims == result.info->dims &&
        value(input).info->bytes == result.info->bytes) {
      share(id, inputBuffer);
      return;
    }
    if (!result.output && reuseFreed_ && reusable(id)) {
      std::vector<int> &free = freeByKey_[size_t(result.key)];
      if (!free.empty()) {
        int buffer = free.back();
        free.pop_back();
        buffers_[size_t(buffer)].gaps.back().second = step;
        buffers_[size_t(buffer)].released = -1;
        share(id, buffer);
        return;
      }
    }
    bufferOf_[size_t(id)] = int(buffers_.size());
    buffers_.push_back({id, result.info ? result.info->bytes : 0, step});
  }

  void release(int id, int step) {
    int buffer = bufferOf_[size_t(id)];
    if (buffer < 0)
      return; // a graph input or initializer: the caller's
    Buffer &held = buffers_[size_t(buffer)];
    if (--uses_[size_t(held.value)] != 0)
      return;
    held.released = step;
    if (reusable(held.value)) {
      held.gaps.push_back({step, step});
      freeByKey_[size_t(value(held.value).key)].push_back(buffer);
    }
  }

  const ReplayGraph &graph_;
  const std::vector<bool> &hidden_;
  bool reuseFreed_;
  std::vector<int> uses_;
  std::vector<int> bufferOf_;
  std::vector<Buffer> buffers_;
  std::vector<std::vector<int>> freeByKey_;
  /// Bytes held at each step of the last run.
  std::vector<int64_t> held_;
};

} // namespace

absl::StatusOr<IdleBufferReplay>
hideIdleBuffers(onnx::ModelProto &model, ExportContext &ctx,
                const TensorInfos &infos, int rounds, int64_t minBytes) {
  onnx::GraphProto &graph = *model.mutable_graph();
  std::vector<int> order = runtimeOrder(graph);
  llvm::StringMap<int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const std::string &output : graph.node(i).output())
      producer[output] = i;
  ReplayGraph replayGraph(graph, order, infos);
  std::vector<bool> hiddenIds(replayGraph.values.size(), false);
  llvm::StringSet<> hidden;
  IdleBufferReplay report;
  // Nothing held for reuse: what hiding every buffer would leave.
  report.peakLive =
      PlannerReplay(replayGraph, hiddenIds, /*reuseFreed=*/false).run();
  // Hiding a buffer sends its reusers to other buffers, which may then sit
  // idle at the new peak: rounds go on until none does.
  for (int round = 0; round <= rounds; ++round) {
    PlannerReplay replay(replayGraph, hiddenIds);
    int64_t peak = replay.run();
    if (round == 0)
      report.peakBefore = peak;
    report.peakAfter = peak;
    if (round == rounds || peak <= report.peakLive)
      break;
    int added = 0;
    for (int id : replay.idleAbove(peak - 1)) {
      const ReplayGraph::Value &value = replayGraph.values[size_t(id)];
      auto it = producer.find(value.name);
      if (hiddenIds[size_t(id)] || value.info->bytes < minBytes ||
          it == producer.end() ||
          dimsFromValues(graph.node(it->second).op_type()))
        continue;
      hiddenIds[size_t(id)] = true;
      hidden.insert(value.name);
      ++added;
    }
    if (added == 0)
      break;
  }
  report.hidden = int(hidden.size());
  if (hidden.empty())
    return report;

  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph.mutable_node());
  for (onnx::NodeProto &node : nodes) {
    if (llvm::any_of(node.output(), [&](const std::string &output) {
          return hidden.contains(output);
        })) {
      ctx.setNameBase(node.name());
      hideResultDims(node, infos, ctx);
    }
    graph.mutable_node()->Add(std::move(node));
  }
  ctx.setNameBase("");
  return report;
}

} // namespace remat::onnxexport

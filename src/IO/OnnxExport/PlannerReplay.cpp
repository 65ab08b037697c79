//===- PlannerReplay.cpp - ONNX Runtime's order and planner ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "PlannerReplay.h"

#include "RuntimeFacts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <algorithm>

namespace remat::onnxexport {
namespace {

/// The planner's key for reuse: element size and dims.
std::string reuseKey(const TensorInfo &info) {
  std::string key = fmt::format("{}", elementBytes(info.type));
  for (int64_t dim : info.dims)
    key += fmt::format(",{}", dim);
  return key;
}

} // namespace

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

ReplayGraph::ReplayGraph(const onnx::GraphProto &graph,
                         llvm::ArrayRef<int> order, const TensorInfos &infos) {
  llvm::StringMap<int> keyIds;
  auto id = [&](const std::string &name) {
    auto [it, inserted] = ids.try_emplace(name, int(values.size()));
    if (inserted) {
      Value value{name, infos.find(name)};
      if (value.info && !value.info->dims.empty())
        value.key =
            keyIds.try_emplace(reuseKey(*value.info), int(keyIds.size()))
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
        values[size_t(node.outputs.back())].producer = i;
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

int64_t PlannerReplay::run() {
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
    if (bytes > peak) {
      peak = bytes;
      peakStep_ = step;
    }
  }
  return peak;
}

std::vector<int> PlannerReplay::idleAbove(int64_t bytes) const {
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

std::vector<int> PlannerReplay::heldAt(int step) const {
  int last = int(held_.size()) - 1;
  std::vector<int> held;
  for (const Buffer &buffer : buffers_)
    if (buffer.allocated <= step &&
        step <= (buffer.released < 0 ? last : buffer.released))
      held.push_back(buffer.value);
  return held;
}

void PlannerReplay::place(const ReplayGraph::Node &node, int id, int step) {
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
      uses_[size_t(buffers_[size_t(inputBuffer)].value)] == 1 && reusable(id) &&
      reusable(input) && value(input).info->dims == result.info->dims &&
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

void PlannerReplay::release(int id, int step) {
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

} // namespace remat::onnxexport

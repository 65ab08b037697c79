//===- PeakOrder.cpp - The runtime's peak in the schedule's order ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "PeakOrder.h"

#include "PinOrder.h"
#include "PlannerReplay.h"
#include "RuntimeFacts.h"

#include "llvm/ADT/STLExtras.h"

#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <vector>

namespace remat::onnxexport {
namespace {

/// Rounds in a row whose waits may leave the peak where it was, before the
/// pass gives up.
constexpr int kRoundsWithoutGain = 8;

/// The live bytes' peak over the graph's nodes in `order`.
int64_t livePeak(const onnx::GraphProto &graph, llvm::ArrayRef<int> order,
                 const TensorInfos &infos) {
  ReplayGraph replayGraph(graph, order, infos);
  std::vector<bool> hidden(replayGraph.values.size(), false);
  return PlannerReplay(replayGraph, hidden, /*reuseFreed=*/false).run();
}

/// The first float output of `node` with an element, to wait for; empty
/// when it has none.
std::string awaitable(const onnx::NodeProto &node, const TensorInfos &infos) {
  for (const std::string &output : node.output()) {
    const TensorInfo *info = infos.find(output);
    if (info && info->isFloat() && info->bytes > 0)
      return output;
  }
  return {};
}

/// The input through which `node` waits: its smallest float input, of at
/// most what it writes (the wait copies it); -1 when there is none.
int waitSlot(const onnx::NodeProto &node, const TensorInfos &infos) {
  return smallestFloatInput(node, infos,
                            std::max<int64_t>(bytesWritten(node, infos), 64));
}

} // namespace

PeakOrderReplay orderPeakAsScheduled(OnnxGraph &onnxGraph, Waits &waits,
                                     int rounds, int64_t minBytes) {
  onnx::GraphProto &graph = onnxGraph.proto();
  TensorInfos &infos = onnxGraph.infos();
  PeakOrderReplay report;
  // The zero of each tensor waited for is made once, for every round.
  waits.beginStep();
  // A round's waits may move the peak rather than lower it; the graph is
  // left as it was at its least peak.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> bestNodes;
  int bestWaits = 0, sinceBest = 0;
  bool best = true;
  {
    std::vector<int> scheduled(size_t(graph.node_size()));
    std::iota(scheduled.begin(), scheduled.end(), 0);
    report.schedulePeak = livePeak(graph, scheduled, infos);
  }
  for (int round = 0; round <= rounds; ++round) {
    std::vector<int> order = runtimeOrder(graph);
    ReplayGraph replayGraph(graph, order, infos);
    std::vector<bool> hidden(replayGraph.values.size(), false);
    PlannerReplay replay(replayGraph, hidden, /*reuseFreed=*/false);
    int64_t peak = replay.run();
    if (round == 0)
      report.peakBefore = peak;
    best = round == 0 || peak < report.peakAfter;
    if (best) {
      report.peakAfter = peak;
      sinceBest = 0;
    }
    if (round == rounds || peak <= report.schedulePeak ||
        ++sinceBest > kRoundsWithoutGain)
      break;

    // Where each value is made and read, by step of the runtime's order,
    // and its first reader in the node order.
    size_t values = replayGraph.values.size();
    std::vector<int> madeAt(values, -1), firstReader(values, -1);
    std::vector<std::vector<int>> readAt(values);
    for (int step = 0; step < int(order.size()); ++step) {
      for (int output : replayGraph.nodes[size_t(step)].outputs)
        madeAt[size_t(output)] = step;
      for (int input : replayGraph.nodes[size_t(step)].inputs) {
        if (input < 0)
          continue;
        readAt[size_t(input)].push_back(step);
        int &first = firstReader[size_t(input)];
        if (first < 0 || order[size_t(step)] < first)
          first = order[size_t(step)];
      }
    }
    auto producerOf = [&](const std::string &name) {
      auto it = replayGraph.ids.find(name);
      return it == replayGraph.ids.end()
                 ? -1
                 : replayGraph.values[size_t(it->second)].producer;
    };
    int peakStep = replay.peakStep();
    int peakNode = order[size_t(peakStep)];
    // Waits as (waiting node, node waited for), both by node index: each
    // agrees with the node order, the waited-for node first.
    std::set<std::pair<int, int>> edges;
    for (int id : replay.heldAt(peakStep)) {
      const ReplayGraph::Value &value = replayGraph.values[size_t(id)];
      if (!value.info || value.info->bytes < minBytes || madeAt[size_t(id)] < 0)
        continue;
      int producer = order[size_t(madeAt[size_t(id)])];
      if (producer > peakNode) {
        // A view writes nothing: what it views is made by its producer.
        while (isViewOp(graph.node(producer).op_type())) {
          int viewed = producerOf(graph.node(producer).input(0));
          if (viewed <= peakNode)
            break;
          producer = viewed;
        }
        edges.insert({producer, peakNode});
        continue;
      }
      for (int step : readAt[size_t(id)])
        if (step > peakStep && order[size_t(step)] < peakNode)
          edges.insert({peakNode, order[size_t(step)]});
    }
    // A node waits through the zero of what it waits for, made right after
    // that tensor and read by its first reader too (the anchor): so the
    // runtime makes the zero when it first reads the tensor, and a wait
    // never keeps the tensor alive.
    std::map<int, std::vector<std::string>> awaited, anchored;
    std::map<int, std::vector<std::string>> zeroAfter;
    std::set<std::string> anchoredNow;
    for (auto [waiting, waitedFor] : edges) {
      std::string tensor = awaitable(graph.node(waitedFor), infos);
      if (tensor.empty() || waitSlot(graph.node(waiting), infos) < 0)
        continue;
      if (!waits.hasZeroOf(tensor) && !anchoredNow.count(tensor)) {
        int reader = firstReader[size_t(replayGraph.ids.find(tensor)->second)];
        if (reader < 0 || waitSlot(graph.node(reader), infos) < 0)
          continue;
        anchoredNow.insert(tensor);
        zeroAfter[waitedFor].push_back(tensor);
        anchored[reader].push_back(tensor);
      }
      awaited[waiting].push_back(std::move(tensor));
    }
    if (awaited.empty())
      break;
    if (best) {
      bestNodes = graph.node();
      bestWaits = report.waits;
    }
    report.waits += int(awaited.size());

    std::optional<NodeBuilder> at;
    onnxGraph.rebuildNodes(
        [&](int i, onnx::NodeProto &node) {
          at.emplace(onnxGraph, node.name());
          int slot = waitSlot(node, infos);
          for (auto *edits : {&anchored, &awaited})
            if (auto it = edits->find(i); it != edits->end())
              for (const std::string &tensor : it->second)
                waits.wait(*at, node, slot, tensor);
        },
        [&](int i) {
          if (auto it = zeroAfter.find(i); it != zeroAfter.end())
            for (const std::string &tensor : it->second)
              waits.zeroOf(*at, tensor,
                           floatDType(infos.find(tensor)->type));
        });
  }
  if (!best) {
    graph.mutable_node()->Swap(&bestNodes);
    report.waits = bestWaits;
  }
  return report;
}

} // namespace remat::onnxexport

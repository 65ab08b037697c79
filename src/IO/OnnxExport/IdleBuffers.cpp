//===- IdleBuffers.cpp - No buffer held idle for reuse at the peak --------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "IdleBuffers.h"

#include "PlannerReplay.h"
#include "RuntimeFacts.h"
#include "Waits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace remat::onnxexport {
namespace {

/// Makes `node` read its first input, and every input of its result's
/// dims, through a Reshape to dims computed from data (`Shape(x) + z`, `z`
/// an int64 zero of its first float input), so that the runtime knows its
/// result's rank but not its dims. The nodes it adds go before `node`.
void hideResultDims(onnx::NodeProto &node, const TensorInfos &infos,
                    NodeBuilder &at) {
  auto firstFloat = llvm::find_if(node.input(), [&](const std::string &in) {
    const TensorInfo *info = infos.find(in);
    return info && info->isFloat() && info->bytes > 0;
  });
  if (firstFloat == node.input().end())
    return;
  DType dtype = floatDType(infos.find(*firstFloat)->type);
  std::string offset =
      at.temp("Cast", {makeZero(at, *firstFloat, dtype)},
              {intAttr("to", onnx::TensorProto::INT64)});
  const TensorInfo *result = infos.find(node.output(0));
  for (int i = 0; i < node.input_size(); ++i) {
    const TensorInfo *info = infos.find(node.input(i));
    if (!info || info->dims.empty() ||
        (i > 0 && (!result || info->dims != result->dims)))
      continue;
    std::string dims =
        at.temp("Add", {at.temp("Shape", {node.input(i)}), offset});
    node.set_input(i, at.temp("Reshape", {node.input(i), dims}));
  }
}

} // namespace

IdleBufferReplay hideIdleBuffers(OnnxGraph &onnxGraph, int rounds,
                                 int64_t minBytes) {
  const onnx::GraphProto &graph = onnxGraph.proto();
  const TensorInfos &infos = onnxGraph.infos();
  ReplayGraph replayGraph(graph, runtimeOrder(graph), infos);
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
      if (hiddenIds[size_t(id)] || value.info->bytes < minBytes ||
          value.producer < 0 ||
          dimsFromValues(graph.node(value.producer).op_type()))
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

  onnxGraph.rebuildNodes([&](int, onnx::NodeProto &node) {
    if (llvm::any_of(node.output(), [&](const std::string &output) {
          return hidden.contains(output);
        })) {
      NodeBuilder at(onnxGraph, node.name());
      hideResultDims(node, infos, at);
    }
  });
  return report;
}

} // namespace remat::onnxexport

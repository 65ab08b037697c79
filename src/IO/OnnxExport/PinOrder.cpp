//===- PinOrder.cpp - Each op's nodes kept after what the op follows ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "PinOrder.h"

#include "RuntimeFacts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <optional>

namespace remat::onnxexport {

int64_t bytesWritten(const onnx::NodeProto &node, const TensorInfos &infos) {
  int64_t written = 0;
  for (const std::string &output : node.output()) {
    const TensorInfo *info = infos.find(output);
    if (!info)
      return -1;
    written += info->bytes;
  }
  return written;
}

int smallestFloatInput(const onnx::NodeProto &node, const TensorInfos &infos,
                       int64_t most) {
  int slot = -1;
  int64_t least = 0;
  for (int i = 0; i < node.input_size(); ++i) {
    const TensorInfo *info = infos.find(node.input(i));
    if (!info || !info->isFloat() || info->bytes > most)
      continue;
    if (slot < 0 || info->bytes < least) {
      slot = i;
      least = info->bytes;
    }
  }
  return slot;
}

int pinnedSlot(const onnx::NodeProto &node, const TensorInfos &infos,
               int64_t minBytes) {
  if (isViewOp(node.op_type()) || node.output_size() == 0)
    return -1;
  int64_t written = bytesWritten(node, infos);
  if (written < 0 || written < minBytes)
    return -1;
  return smallestFloatInput(node, infos, std::max<int64_t>(written / 4, 64));
}

int pinToOps(OnnxGraph &graph, Waits &waits, llvm::ArrayRef<OpNodes> ops,
             int64_t minBytes) {
  waits.beginStep();
  TensorInfos &infos = graph.infos();
  size_t next = 0;
  const OpNodes *span = nullptr;
  std::optional<NodeBuilder> at;
  // The op's nodes that follow what it follows, by their outputs.
  llvm::StringSet<> following;
  int pinned = 0;
  graph.rebuildNodes([&](int i, onnx::NodeProto &node) {
    for (; next < ops.size() && ops[next].begin <= i; ++next) {
      span = &ops[next];
      at.emplace(graph, span->op->result(0)->name().str());
      following.clear();
      following.insert(span->follows);
    }
    if (!span || i >= span->end)
      return;
    bool follows = llvm::any_of(node.input(), [&](const std::string &in) {
      return following.contains(in);
    });
    int slot =
        follows || span->follows.empty() ? -1 : pinnedSlot(node, infos, minBytes);
    if (slot >= 0) {
      if (span->followsZero)
        waits.waitThrough(*at, node, slot, span->follows);
      else
        waits.wait(*at, node, slot, span->follows);
      follows = true;
      ++pinned;
    }
    if (follows)
      for (const std::string &output : node.output())
        following.insert(output);
  });
  return pinned;
}

} // namespace remat::onnxexport

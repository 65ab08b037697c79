//===- PinOrder.cpp - Each op's nodes kept after what the op follows ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "PinOrder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

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


void waitThrough(onnx::NodeProto &node, int slot, const std::string &zero,
                 DType zeroType, TensorInfos &infos, ExportContext &ctx) {
  std::string wait = zero;
  TensorInfo read = *infos.find(node.input(slot));
  if (read.type != onnxElementType(zeroType))
    wait = ctx.temp("Cast", {wait}, {intAttr("to", read.type)});
  std::string waiting = ctx.temp("Sub", {node.input(slot), wait});
  infos.add(waiting, std::move(read));
  node.set_input(slot, waiting);
}

absl::Status pinToOps(onnx::ModelProto &model, ExportContext &ctx,
                      llvm::ArrayRef<OpNodes> ops, int64_t minBytes,
                      TensorInfos &infos) {
  onnx::GraphProto &graph = *model.mutable_graph();
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
    std::string zero = span.followsZero ? span.follows : std::string();
    for (; next < span.end; ++next) {
      onnx::NodeProto &node = *nodes.Mutable(next);
      bool follows = llvm::any_of(node.input(), [&](const std::string &in) {
        return following.contains(in);
      });
      int slot = follows || span.follows.empty()
                     ? -1
                     : pinnedSlot(node, infos, minBytes);
      if (slot >= 0) {
        if (zero.empty()) {
          std::string &made = zeros[span.follows];
          if (made.empty())
            made = ctx.makeZero(span.follows, span.dtype);
          zero = made;
        }
        waitThrough(node, slot, zero, span.dtype, infos, ctx);
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

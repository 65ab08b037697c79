//===- PlannerReplay.h - ONNX Runtime's order and planner -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What ONNX Runtime 1.30 does with an exported graph on the CPU, replayed
/// without it: the order its sequential executor runs the nodes in, and
/// the buffers its allocation planner gives their results (in-place unary
/// kernels, views, a dead buffer kept for the next tensor of its element
/// size and dims). Matched against the runtime's profile and an allocation
/// log on ResNet-50 (docs/export.md); the optimizer's fusions are not
/// replayed.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_PLANNERREPLAY_H
#define REMAT_SRC_IO_ONNXEXPORT_PLANNERREPLAY_H

#include "TensorInfos.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace remat::onnxexport {

/// ONNX Runtime's default order: a depth-first walk back from the nodes
/// whose outputs no node reads, taken in node order; a node's producers are
/// pushed in node order, so the last written is entered first, and a node
/// runs when the walk leaves it (GraphViewer's reverse DFS).
std::vector<int> runtimeOrder(const onnx::GraphProto &graph);

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
    /// The graph's node that writes it, by index; -1 for the graph's
    /// inputs and initializers.
    int producer = -1;
  };
  std::vector<Node> nodes;
  std::vector<Value> values;
  int keys = 0;
  /// Each value's number, by name.
  llvm::StringMap<int> ids;

  /// Indexes `graph`'s nodes in `order` (runtimeOrder's).
  ReplayGraph(const onnx::GraphProto &graph, llvm::ArrayRef<int> order,
              const TensorInfos &infos);
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
  int64_t run();

  /// The first values of the buffers idle at a step that holds more than
  /// `bytes`.
  std::vector<int> idleAbove(int64_t bytes) const;

  /// The first step of the last run's peak.
  int peakStep() const { return peakStep_; }
  /// The first values of the buffers held at `step`.
  std::vector<int> heldAt(int step) const;

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

  void place(const ReplayGraph::Node &node, int id, int step);
  void release(int id, int step);

  const ReplayGraph &graph_;
  const std::vector<bool> &hidden_;
  bool reuseFreed_;
  std::vector<int> uses_;
  std::vector<int> bufferOf_;
  std::vector<Buffer> buffers_;
  std::vector<std::vector<int>> freeByKey_;
  /// Bytes held at each step of the last run.
  std::vector<int64_t> held_;
  int peakStep_ = 0;
};

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_PLANNERREPLAY_H

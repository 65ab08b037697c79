//===- MinimumCut.h - Minimum s-t cuts of a flow network --------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A directed flow network with integer capacities and its minimum s-t cut,
/// for the `mincut` planner. The maximum flow is Boost.Graph's
/// Boykov-Kolmogorov; this header keeps Boost out of its users.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_MINCUT_MINIMUMCUT_H
#define REMAT_PASSES_PLANNING_MINCUT_MINIMUMCUT_H

#include "llvm/ADT/BitVector.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace remat::mincut {

/// A capacity no cut may cross. Every source-sink path must cross a finite
/// edge, and the finite capacities must sum below it.
inline constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

/// A minimum cut: its capacity and the vertices on the source's side.
struct Cut {
  int64_t capacity = 0;
  llvm::BitVector sourceSide;
};

class FlowNetwork {
public:
  explicit FlowNetwork(int numVertices) : numVertices_(numVertices) {}

  int numVertices() const { return numVertices_; }
  /// An edge `from` -> `to`; parallel edges add up.
  void addEdge(int from, int to, int64_t capacity);

  /// The minimum `source`-`sink` cut: the source side is what the source
  /// reaches in the residual network of a maximum flow, so of all minimum
  /// cuts the one with the smallest source side. O(E * V^2 * |cut|) in
  /// theory, near linear on dataflow graphs.
  Cut minimumCut(int source, int sink) const;

private:
  struct Edge {
    int from, to;
    int64_t capacity;
  };
  int numVertices_;
  std::vector<Edge> edges_;
};

} // namespace remat::mincut

#endif // REMAT_PASSES_PLANNING_MINCUT_MINIMUMCUT_H

//===- Bottlenecks.h - Values every path to the loss crosses ----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A bottleneck is a value that every path from the graph's sources to the
/// loss passes through: cutting that one value disconnects the loss from every
/// source, so keeping it splits the forward pass into segments that can be
/// recomputed independently (the `memory` strategy of the seed, which tested
/// each candidate with two walks, quadratic in the graph).
///
/// Here the bottlenecks are the value nodes on the dominator-tree path of the
/// loss, in the bipartite DAG "value -> ops reading it -> their results" with a
/// virtual root feeding the sources. Ops are visited in schedule order (a
/// topological order of a verified graph); an op's immediate dominator is the
/// lowest common ancestor of its operands' nodes, found with skew-binary jump
/// pointers (depth, parent, one jump per node: O(log n) per query, O(1) memory
/// per node). O((ops + edges) log ops) in all. Only ops on some source-to-loss
/// path can dominate the loss, so the restriction to them is implicit.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_BOTTLENECKS_H
#define REMAT_ANALYSIS_BOTTLENECKS_H

#include <functional>
#include <vector>

namespace remat {

class Graph;
class Value;

/// Where the paths that a bottleneck must cut start.
enum class BottleneckSourceKind {
  /// At every input and param. A param or input that joins the graph late
  /// (a layer's weights, the labels of the loss) opens a path around every
  /// earlier value, so on a real network few values qualify.
  LeafValues,
  /// At the entry ops: ops whose operands are all results of operand-less ops
  /// (inputs, params, constants). Operand-less values are always live or free
  /// to recompute, so paths from them do not count: in an MLP every layer's
  /// activation is a bottleneck even though each layer reads its own weights.
  EntryOps,
};

/// What `findBottlenecks` looks for.
struct BottleneckOptions {
  BottleneckSourceKind sources = BottleneckSourceKind::LeafValues;
  /// Where the paths end; null means the loss, `graph.outputs()[0]`.
  const Value *target = nullptr;
  /// Values for which this returns true are left out of the result. They
  /// still carry paths: excluding a value never makes another one a
  /// bottleneck.
  std::function<bool(const Value &)> exclude;
};

/// The bottlenecks between the sources and the target, in schedule order. The
/// target itself and the source values are not included; results of a
/// multi-result op are bottlenecks only one at a time (when the op's other
/// results do not lead to the target). Empty when the graph has no outputs or
/// no source reaches the target. The graph's schedule must be topological
/// (a verified graph); edges that run against the schedule are ignored.
std::vector<Value *> findBottlenecks(const Graph &graph,
                                     const BottleneckOptions &options = {});

} // namespace remat

#endif // REMAT_ANALYSIS_BOTTLENECKS_H

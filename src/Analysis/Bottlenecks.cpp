//===- Bottlenecks.cpp - Values every path to the loss runs through -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Bottlenecks.h"

#include "remat/IR/Graph.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <optional>

namespace remat {
namespace {

/// A tree grown leaf by leaf (a parent before its children) that answers
/// lowest-common-ancestor queries in O(log n) with skew-binary jump pointers:
/// each node's jump target depends only on its depth, so two nodes at equal
/// depth can jump in lockstep.
class JumpPointerTree {
public:
  using Node = uint32_t;
  static constexpr Node kRoot = 0;

  explicit JumpPointerTree(size_t numNodes)
      : parent_(numNodes, kAbsent), jump_(numNodes, kAbsent),
        depth_(numNodes, 0) {
    parent_[kRoot] = jump_[kRoot] = kRoot;
  }

  bool contains(Node node) const { return parent_[node] != kAbsent; }
  Node parent(Node node) const { return parent_[node]; }

  void addLeaf(Node node, Node parent) {
    assert(contains(parent) && !contains(node) && "grown leaf by leaf");
    parent_[node] = parent;
    depth_[node] = depth_[parent] + 1;
    Node up = jump_[parent];
    bool equalStrides =
        depth_[parent] - depth_[up] == depth_[up] - depth_[jump_[up]];
    jump_[node] = equalStrides ? jump_[up] : parent;
  }

  Node lowestCommonAncestor(Node a, Node b) const {
    if (depth_[a] < depth_[b])
      std::swap(a, b);
    a = ancestorAtDepth(a, depth_[b]);
    while (a != b) {
      if (jump_[a] == jump_[b]) {
        a = parent_[a];
        b = parent_[b];
      } else {
        a = jump_[a];
        b = jump_[b];
      }
    }
    return a;
  }

private:
  static constexpr Node kAbsent = std::numeric_limits<Node>::max();

  Node ancestorAtDepth(Node node, uint32_t depth) const {
    while (depth_[node] > depth)
      node = depth_[jump_[node]] < depth ? parent_[node] : jump_[node];
    return node;
  }

  std::vector<Node> parent_;
  std::vector<Node> jump_;
  std::vector<uint32_t> depth_;
};

/// Grows the dominator tree of the bipartite DAG op by op in schedule order.
/// Nodes: the root (0), then one per op id, then one per value id.
class BottleneckFinder {
public:
  BottleneckFinder(const Graph &graph, const BottleneckOptions &options)
      : graph_(graph), options_(options),
        tree_(1 + size_t(graph.opIdBound()) + graph.valueIdBound()),
        valuesById_(graph.valueIdBound(), nullptr) {}

  std::vector<Value *> run(const Value &target) {
    for (const Op &op : graph_.ops()) {
      addOp(op);
      if (&op == target.producer())
        break;
    }
    return dominatingValues(target);
  }

private:
  using Node = JumpPointerTree::Node;

  Node opNode(const Op &op) const { return 1 + op.id(); }
  Node valueNode(const Value &value) const {
    return 1 + graph_.opIdBound() + value.id();
  }
  bool isValueNode(Node node) const { return node > graph_.opIdBound(); }

  void addOp(const Op &op) {
    if (op.numOperands() == 0) {
      if (options_.sources == BottleneckSourceKind::LeafValues &&
          op.hasFlag(OpFlagLeaf))
        addResults(op, JumpPointerTree::kRoot);
      return;
    }
    std::optional<Node> dominator;
    for (const Value *operand : op.operands()) {
      Node node = valueNode(*operand);
      // Values of other graphs or later in the schedule carry no path here.
      if (operand->producer()->graph() != &graph_ ||
          operand->id() >= graph_.valueIdBound() || !tree_.contains(node))
        continue;
      dominator =
          dominator ? tree_.lowestCommonAncestor(*dominator, node) : node;
    }
    if (!dominator && options_.sources == BottleneckSourceKind::EntryOps)
      dominator = JumpPointerTree::kRoot;
    if (!dominator)
      return;
    tree_.addLeaf(opNode(op), *dominator);
    addResults(op, opNode(op));
  }

  void addResults(const Op &op, Node parent) {
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      Value *result = op.result(i);
      tree_.addLeaf(valueNode(*result), parent);
      valuesById_[result->id()] = result;
    }
  }

  /// The value nodes strictly between the root and `target`, leaving out the
  /// sources (the root's value children) and excluded values.
  std::vector<Value *> dominatingValues(const Value &target) const {
    std::vector<Value *> found;
    Node node = valueNode(target);
    if (!tree_.contains(node))
      return found;
    for (node = tree_.parent(node); node != JumpPointerTree::kRoot;
         node = tree_.parent(node)) {
      if (!isValueNode(node) || tree_.parent(node) == JumpPointerTree::kRoot)
        continue;
      Value *value = valuesById_[node - 1 - graph_.opIdBound()];
      if (!options_.exclude || !options_.exclude(*value))
        found.push_back(value);
    }
    std::reverse(found.begin(), found.end());
    return found;
  }

  const Graph &graph_;
  const BottleneckOptions &options_;
  JumpPointerTree tree_;
  std::vector<Value *> valuesById_;
};

} // namespace

std::vector<Value *> findBottlenecks(const Graph &graph,
                                     const BottleneckOptions &options) {
  const Value *target = options.target;
  if (!target) {
    if (graph.outputs().empty())
      return {};
    target = graph.outputs()[0];
  }
  if (target->producer()->graph() != &graph)
    return {};
  return BottleneckFinder(graph, options).run(*target);
}

} // namespace remat

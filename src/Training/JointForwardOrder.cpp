//===- JointForwardOrder.cpp - A joint graph's forward, in block order ----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Training/JointForwardOrder.h"

#include "remat/Analysis/Walk.h"
#include "remat/IR/Op.h"
#include "remat/IR/OpRegistry.h"
#include "remat/IR/Value.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>
#include <vector>

namespace remat {
namespace {

/// Where an op goes: ops sort by (anchor, group, after, self). The loss's
/// ancestors are anchors (group 0); an op placed after the anchor `a` has
/// group 1, one placed just before the loss's op (which is the last anchor,
/// `lossAnchor`) sits after everything anchored at `lossAnchor - 1`
/// (group 2). `after` and `self` order the ops of one anchor: an op placed
/// just before another takes its reader's (anchor, group, after) and its
/// own, smaller, position as `self`.
struct Place {
  int anchor = 0;
  int group = 0;
  int after = 0;
  int self = 0;

  friend bool operator<(const Place &a, const Place &b) {
    return std::tie(a.anchor, a.group, a.after, a.self) <
           std::tie(b.anchor, b.group, b.after, b.self);
  }
};

/// The data and control edges among the forward's compute ops, by
/// position (declarations are constants: no edge).
struct ForwardEdges {
  std::vector<llvm::SmallVector<int, 4>> deps, readers;
};

/// The edges of `forward`, whose ops' positions `position` holds by id, or
/// nothing when an op reads one outside the forward or at or after its own
/// position.
std::optional<ForwardEdges> forwardEdges(llvm::ArrayRef<Op *> forward,
                                         const std::vector<int> &position) {
  int n = int(forward.size());
  ForwardEdges edges;
  edges.deps.resize(n);
  edges.readers.resize(n);
  for (int i = 0; i < n; ++i) {
    if (forward[i]->hasFlag(OpFlagLeaf))
      continue;
    llvm::SmallVector<int, 4> &deps = edges.deps[i];
    auto read = [&](const Op *producer) {
      deps.push_back(position[producer->id()]);
    };
    for (const Value *operand : forward[i]->operands())
      read(operand->producer());
    for (const Op *dep : forward[i]->controlDeps())
      read(dep);
    llvm::sort(deps);
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    if (!deps.empty() && (deps.front() < 0 || deps.back() >= i))
      return std::nullopt;
    llvm::erase_if(deps,
                   [&](int p) { return forward[p]->hasFlag(OpFlagLeaf); });
    for (int p : deps)
      edges.readers[p].push_back(i);
  }
  return edges;
}

/// The loss's ancestors (`isAncestor`) in the order the reverse walk gives:
/// from the loss back, an op is placed once all its readers among them are,
/// the most recently readied first, then the one of shallowest ancestry,
/// then the later in the old order.
std::vector<int> ancestorsLatestFirst(const ForwardEdges &edges, int loss,
                                      const std::vector<char> &isAncestor) {
  int n = int(edges.deps.size());
  std::vector<int> depth(n, 0), waiting(n, 0);
  for (int i = 0; i < n; ++i) {
    if (!isAncestor[i])
      continue;
    for (int p : edges.deps[i]) {
      depth[i] = std::max(depth[i], depth[p] + 1);
      ++waiting[p];
    }
  }
  // (ready time, -depth, position): the greatest comes out first.
  using Ready = std::tuple<int, int, int>;
  std::priority_queue<Ready> ready;
  ready.push({0, -depth[loss], loss});
  std::vector<int> reversed;
  while (!ready.empty()) {
    int op = std::get<2>(ready.top());
    ready.pop();
    reversed.push_back(op);
    for (int p : edges.deps[op])
      if (--waiting[p] == 0)
        ready.push({int(reversed.size()), -depth[p], p});
  }
  std::reverse(reversed.begin(), reversed.end());
  return reversed;
}

} // namespace

void orderJointForward(Graph &joint, unsigned forwardOps) {
  if (forwardOps > joint.numOps() || joint.outputs().empty())
    return;
  std::vector<Op *> schedule;
  schedule.reserve(joint.numOps());
  for (Op &op : joint.ops())
    schedule.push_back(&op);
  llvm::ArrayRef<Op *> forward =
      llvm::ArrayRef(schedule).take_front(forwardOps);
  std::vector<int> position(joint.opIdBound(), -1);
  for (int i = 0; i < int(forward.size()); ++i)
    position[forward[i]->id()] = i;
  int loss = position[joint.outputs()[0]->producer()->id()];
  if (loss < 0 || forward[loss]->hasFlag(OpFlagLeaf))
    return;
  std::optional<ForwardEdges> edges = forwardEdges(forward, position);
  if (!edges)
    return;

  int n = int(forward.size());
  // The loss and its ancestors (declarations among them, which have no
  // edges): all forward ops, as the edges' check found.
  OpSet ancestors = backwardWalk(joint, forward[loss]).set;
  std::vector<char> isAncestor(n);
  for (int i = 0; i < n; ++i)
    isAncestor[i] = ancestors.test(forward[i]->id());
  std::vector<Place> place(n);
  std::vector<int> anchors = ancestorsLatestFirst(*edges, loss, isAncestor);
  for (int k = 0; k < int(anchors.size()); ++k)
    place[anchors[k]] = {k, 0, 0, 0};
  int lossAnchor = place[loss].anchor;
  // Ops that read an ancestor, directly or through others, go after their
  // last operand; the rest (`floating`) before their first reader.
  std::vector<char> floating(n, 0);
  for (int i = 0; i < n; ++i) {
    if (isAncestor[i] || forward[i]->hasFlag(OpFlagLeaf))
      continue;
    int anchor = -1;
    for (int p : edges->deps[i])
      if (!floating[p])
        anchor = std::max(anchor, place[p].anchor);
    floating[i] = anchor < 0;
    place[i] = {anchor, 1, i, i};
  }
  for (int i = n; i-- > 0;) {
    if (!floating[i])
      continue;
    place[i] = {lossAnchor - 1, 2, 0, i};
    for (int r : edges->readers[i]) {
      Place before = place[r];
      before.self = i;
      place[i] = std::min(place[i], before);
    }
  }

  std::vector<int> compute;
  std::vector<Op *> order;
  order.reserve(schedule.size());
  for (int i = 0; i < n; ++i)
    (forward[i]->hasFlag(OpFlagLeaf) ? order.push_back(forward[i])
                                     : compute.push_back(i));
  llvm::sort(compute, [&](int a, int b) { return place[a] < place[b]; });
  for (int i : compute)
    order.push_back(forward[i]);
  llvm::append_range(order, llvm::ArrayRef(schedule).drop_front(forwardOps));
  if (order == schedule)
    return;
  joint.setSchedule(order);
  std::unique_ptr<Graph> renumbered = joint.clone();
  joint.swap(*renumbered);
}

} // namespace remat

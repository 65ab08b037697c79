//===- TopoSort.cpp - Deterministic topological orders --------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Kahn's algorithm with the ready ops in a min-heap keyed by schedule
/// position. Edges are counted per operand slot (an op reading a value twice
/// waits for two decrements) and per control dependency.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/TopoSort.h"

#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/BitVector.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <queue>

namespace remat {
namespace {

/// The ops of the schedule with their positions, and the in-degree of each.
struct ScheduleTables {
  explicit ScheduleTables(const Graph &graph)
      : position(graph.opIdBound(), 0), inDegree(graph.opIdBound(), 0) {
    // A const graph still hands out mutable ops, as Graph::inputs() does.
    for (Op &op : const_cast<Graph &>(graph).ops()) {
      position[op.id()] = schedule.size();
      schedule.push_back(&op);
    }
    for (Op *op : schedule) {
      for (const Value *operand : op->operands())
        if (isHere(graph, operand->producer()))
          ++inDegree[op->id()];
      for (const Op *dep : op->controlDeps())
        if (isHere(graph, dep))
          ++inDegree[op->id()];
    }
  }

  static bool isHere(const Graph &graph, const Op *op) {
    return op->graph() == &graph && op->id() < graph.opIdBound();
  }

  std::vector<Op *> schedule;
  std::vector<unsigned> position;
  std::vector<unsigned> inDegree;
};

/// An op on a dependency cycle among the ops Kahn's algorithm could not
/// emit. Every unemitted op has an unemitted predecessor, so following those
/// must revisit an op; the first revisited one is on a cycle.
const Op *findOpOnCycle(const Graph &graph, const ScheduleTables &tables,
                        const llvm::BitVector &emitted) {
  const Op *current = nullptr;
  for (const Op *op : tables.schedule)
    if (!emitted.test(op->id())) {
      current = op;
      break;
    }
  llvm::BitVector seen(graph.opIdBound());
  auto isPending = [&](const Op *op) {
    return ScheduleTables::isHere(graph, op) && !emitted.test(op->id());
  };
  while (!seen.test(current->id())) {
    seen.set(current->id());
    const Op *next = nullptr;
    for (const Value *operand : current->operands())
      if (isPending(operand->producer())) {
        next = operand->producer();
        break;
      }
    if (!next)
      for (const Op *dep : current->controlDeps())
        if (isPending(dep)) {
          next = dep;
          break;
        }
    assert(next && "an op left by Kahn's algorithm has a pending predecessor");
    current = next;
  }
  return current;
}

} // namespace

absl::StatusOr<std::vector<Op *>> topologicalOrder(const Graph &graph) {
  ScheduleTables tables(graph);
  using Entry = std::pair<unsigned, Op *>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (Op *op : tables.schedule)
    if (tables.inDegree[op->id()] == 0)
      ready.push({tables.position[op->id()], op});

  std::vector<Op *> order;
  order.reserve(tables.schedule.size());
  llvm::BitVector emitted(graph.opIdBound());
  auto release = [&](Op *op) {
    if (ScheduleTables::isHere(graph, op) && --tables.inDegree[op->id()] == 0)
      ready.push({tables.position[op->id()], op});
  };
  while (!ready.empty()) {
    Op *op = ready.top().second;
    ready.pop();
    order.push_back(op);
    emitted.set(op->id());
    for (unsigned i = 0, e = op->numResults(); i < e; ++i)
      for (const Use &use : op->result(i)->uses())
        release(use.user);
    for (Op *user : op->controlUsers())
      release(user);
  }

  if (order.size() != tables.schedule.size())
    return opError(*findOpOnCycle(graph, tables, emitted),
                   "is on a cycle of data and control dependencies");
  return order;
}

absl::StatusOr<std::vector<std::vector<Op *>>> levelOrder(const Graph &graph) {
  REMAT_ASSIGN_OR_RETURN(std::vector<Op *> order, topologicalOrder(graph));
  std::vector<unsigned> level(graph.opIdBound(), 0);
  unsigned numLevels = 0;
  for (const Op *op : order) {
    unsigned &mine = level[op->id()];
    for (const Value *operand : op->operands())
      if (ScheduleTables::isHere(graph, operand->producer()))
        mine = std::max(mine, level[operand->producer()->id()] + 1);
    for (const Op *dep : op->controlDeps())
      if (ScheduleTables::isHere(graph, dep))
        mine = std::max(mine, level[dep->id()] + 1);
    numLevels = std::max(numLevels, mine + 1);
  }

  std::vector<std::vector<Op *>> levels(numLevels);
  for (Op &op : const_cast<Graph &>(graph).ops())
    levels[level[op.id()]].push_back(&op);
  return levels;
}

} // namespace remat

//===- GraphProblem.cpp - A training graph as an ILP problem --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Planning/Problem/GraphProblem.h"

#include "remat/Analysis/Cost.h"
#include "remat/Analysis/Memory.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Schedule.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <tuple>

namespace remat::problem {
namespace {

bool isViewOp(const Op &op) {
  if (op.numOperands() == 0 || op.numResults() == 0)
    return false;
  for (unsigned i = 0, e = op.numResults(); i < e; ++i)
    if (!isAlias(op, i))
      return false;
  return true;
}

/// The graph's ops in the order the memory-aware scheduler gives plain
/// autodiff, which is how the built graph runs them: the MILP's stages follow
/// it, so that its memory model keeping everything is the plain graph's
/// simulated peak (autodiff's own order holds, on an LSTM, every step's
/// weight-gradient terms until the sums at the end: 40% more). The graph's
/// own order when it cannot be scheduled.
std::vector<Op *> scheduledOps(const Graph &graph) {
  std::vector<Op *> byId(graph.opIdBound(), nullptr);
  std::vector<Op *> order;
  for (const Op &op : graph.ops()) {
    byId[op.id()] = const_cast<Op *>(&op);
    order.push_back(const_cast<Op *>(&op));
  }
  std::unique_ptr<Graph> copy = graph.clone(Graph::CloneIds::Keep);
  if (!scheduleForMemory(*copy).ok())
    return order;
  order.clear();
  for (const Op &op : copy->ops())
    order.push_back(byId[op.id()]);
  return order;
}

} // namespace

GraphProblem buildGraphProblem(const PlanningProblem &planning,
                               GraphModel model) {
  const Graph &graph = *planning.graph;
  GraphProblem result;
  RematProblem &problem = result.problem;
  // By op id: the node an op belongs to, or -1 (leaves, constants).
  std::vector<int> nodeOf(graph.opIdBound(), -1);
  auto nodeOfValue = [&](const Value *value) {
    return nodeOf[storageOwner(value)->producer()->id()];
  };

  // Forward ops first, then gradient ops, each in the graph's or the
  // scheduled order: a valid topological order, as autodiff only appends.
  std::vector<Op *> order;
  if (model == GraphModel::Scheduled) {
    order = scheduledOps(graph);
  } else {
    for (const Op &op : graph.ops())
      order.push_back(const_cast<Op *>(&op));
  }
  for (bool forward : {true, false}) {
    for (Op *opPointer : order) {
      Op &op = *opPointer;
      if (planning.isForward(op) != forward)
        continue;
      if (op.numOperands() == 0 && (forward || op.hasFlag(OpFlagLeaf))) {
        for (const Value *value : op.results())
          problem.constantBytes += ownedBytes(*value);
        continue;
      }
      if (forward && isViewOp(op)) {
        int owner = nodeOfValue(op.result(0));
        nodeOf[op.id()] = owner;
        if (owner >= 0)
          result.ops[owner].push_back(&op);
        continue;
      }
      int node = int(problem.nodes.size());
      nodeOf[op.id()] = node;
      RematNode info;
      info.backward = !forward;
      info.cost = opFlops(op);
      for (const Value *value : op.results())
        info.bytes += ownedBytes(*value);
      for (const Value *operand : op.operands()) {
        // A reader of a view holds the view's storage owner, and the view
        // itself when it is a node of its own (a gradient op's view).
        int owner = nodeOfValue(operand);
        int producer = nodeOf[operand->producer()->id()];
        for (int dep : {owner, producer})
          if (dep >= 0 && !llvm::is_contained(info.deps, dep))
            info.deps.push_back(dep);
      }
      problem.nodes.push_back(std::move(info));
      result.ops.push_back({&op});
    }
  }

  // What the outputs hold is live to the end. The forward pass's outputs
  // count as constant (recomputing the loss after the backward pass would
  // have no op to run before); a gradient node whose results are all
  // outputs is read by a last node, so that it counts from the stage that
  // computes it. A gradient node with other results too (a batch norm's
  // input gradient beside its scale and shift gradients) keeps those, freed
  // after their last reader, and its outputs count as constant: the last
  // node would hold its whole storage to the end.
  std::vector<int64_t> outputBytes(problem.nodes.size(), 0);
  // In the order of the outputs that first name them.
  std::vector<int> outputNodes;
  llvm::BitVector holdsOutput(problem.nodes.size());
  llvm::DenseSet<const Value *> counted;
  for (const Value *output : graph.outputs()) {
    const Value *owner = storageOwner(output);
    int node = nodeOf[owner->producer()->id()];
    if (node < 0 || !counted.insert(owner).second)
      continue;
    if (!holdsOutput.test(node))
      outputNodes.push_back(node);
    holdsOutput.set(node);
    outputBytes[node] += ownedBytes(*owner);
  }
  RematNode sink;
  sink.backward = true;
  for (int node : outputNodes) {
    RematNode &info = problem.nodes[node];
    bool whole =
        model == GraphModel::Emitted || outputBytes[node] == info.bytes;
    if (info.backward && whole) {
      sink.deps.push_back(node);
      continue;
    }
    int64_t constant = info.backward || model == GraphModel::Scheduled
                           ? outputBytes[node]
                           : info.bytes;
    problem.constantBytes += constant;
    info.bytes -= constant;
  }
  if (!sink.deps.empty()) {
    problem.nodes.push_back(std::move(sink));
    result.ops.emplace_back();
  }
  return result;
}

PlannedGraph PlannedGraph::of(const PlanningProblem &problem) {
  const Graph &graph = *problem.graph;
  return {&graph, problem.forwardOpIdBound, graph.opIdBound(),
          graph.valueIdBound(), graph.numOps()};
}

const GraphProblem &GraphProblemCache::get(const PlanningProblem &problem,
                                           bool *fresh) {
  PlannedGraph planned = PlannedGraph::of(problem);
  bool build = !nodes_ || planned != planned_;
  if (build) {
    nodes_ = buildGraphProblem(problem, model_);
    planned_ = planned;
  }
  if (fresh)
    *fresh = build;
  return *nodes_;
}

std::vector<RecomputeStep> stepsOf(const GraphProblem &graph,
                                   const RematSchedule &schedule) {
  std::vector<RecomputeStep> steps;
  for (size_t t = 0; t < schedule.compute.size(); ++t) {
    if (graph.ops[t].empty())
      continue;
    RecomputeStep step;
    step.before = graph.ops[t].front();
    for (int i : schedule.compute[t].set_bits()) {
      if (size_t(i) == t || graph.problem.nodes[i].backward)
        continue;
      llvm::append_range(step.ops, graph.ops[i]);
    }
    if (!step.ops.empty())
      steps.push_back(std::move(step));
  }
  return steps;
}

std::optional<RematSchedule>
scheduleOfSteps(const GraphProblem &graph,
                llvm::ArrayRef<RecomputeStep> steps) {
  const RematProblem &problem = graph.problem;
  int n = int(problem.nodes.size());
  llvm::DenseMap<const Op *, int> nodeOfOp;
  for (int i = 0; i < n; ++i)
    for (const Op *op : graph.ops[i])
      nodeOfOp[op] = i;
  RematSchedule schedule = RematSchedule::empty(n);
  for (int t = 0; t < n; ++t)
    schedule.compute[t].set(t);
  for (const RecomputeStep &step : steps) {
    auto stage = nodeOfOp.find(step.before);
    if (stage == nodeOfOp.end() ||
        graph.ops[stage->second].front() != step.before)
      return std::nullopt;
    for (const Op *op : step.ops) {
      auto node = nodeOfOp.find(op);
      if (node == nodeOfOp.end() || problem.nodes[node->second].backward ||
          node->second >= stage->second)
        return std::nullopt;
      schedule.compute[stage->second].set(node->second);
    }
  }
  keepUntilRead(problem, schedule);
  return schedule;
}

std::vector<RecomputeStep> stepsOfCopies(const GraphProblem &graph,
                                         std::vector<NodeCopy> copies) {
  llvm::sort(copies, [](const NodeCopy &a, const NodeCopy &b) {
    return std::tie(a.before, a.node) < std::tie(b.before, b.node);
  });
  std::vector<RecomputeStep> steps;
  for (size_t i = 0; i < copies.size(); ++i) {
    const NodeCopy &copy = copies[i];
    if (i > 0 && copy.before == copies[i - 1].before &&
        copy.node == copies[i - 1].node)
      continue;
    if (steps.empty() ||
        steps.back().before != graph.ops[copy.before].front())
      steps.push_back({graph.ops[copy.before].front(), {}});
    llvm::append_range(steps.back().ops, graph.ops[copy.node]);
  }
  return steps;
}

std::vector<std::vector<int>> readersOf(const RematProblem &problem) {
  return buildDag(problem).readers;
}

} // namespace remat::problem

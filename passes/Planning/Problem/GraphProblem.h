//===- GraphProblem.h - A training graph as an ILP problem ------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The bridge between a training graph and the abstract problem of
/// CheckmateIlp.h: which ops become nodes, what they cost and hold, and how a
/// schedule over the nodes becomes the recompute steps the rewrite realises.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_PROBLEM_GRAPHPROBLEM_H
#define REMAT_PASSES_PLANNING_PROBLEM_GRAPHPROBLEM_H

#include "Planning/Problem/RematProblem.h"

#include "remat/Pass/Planner.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace remat::problem {

/// A training graph's ops as nodes. An op that owns storage (or has no
/// operand of the forward pass to alias) is a node; a forward view op joins
/// the node owning its storage, so that recomputing the storage recomputes
/// the view with it. Leaves, constants and the forward outputs are
/// `constantBytes`.
struct GraphProblem {
  RematProblem problem;
  /// By node: its ops in schedule order, the storage owner first; empty for
  /// the last node, which reads the gradient outputs to keep them live.
  /// Most nodes are one op, held inline.
  std::vector<llvm::SmallVector<Op *, 1>> ops;
};

/// How closely the nodes model the built graph.
enum class GraphModel {
  /// Forward ops then gradient ops in the graph's order (autodiff's), and a
  /// gradient node holding an output read whole by the last node: what the
  /// chain, mincut, xla and AP planners are calibrated on.
  Emitted,
  /// Forward ops then gradient ops in the order the memory-aware scheduler
  /// gives plain autodiff, and the outputs of a gradient node with other
  /// results counted as constant, the rest freed after its last reader:
  /// keeping everything then costs the plain graph's simulated peak or a
  /// little more (the `ilp` planner; one schedule of a clone, O((ops +
  /// edges) log ops)).
  Scheduled,
};

/// Nodes forward ops first (`problem.isForward`), as `model` says.
/// `budgetBytes` is left 0.
GraphProblem buildGraphProblem(const PlanningProblem &problem,
                               GraphModel model = GraphModel::Emitted);

/// Which graph a planner planned last: a planner that keeps what it made of
/// a graph for its next plan (Planner's contract) keeps it while the next
/// problem's identity is equal.
struct PlannedGraph {
  const Graph *graph = nullptr;
  unsigned forwardOpIdBound = 0, opIdBound = 0, valueIdBound = 0;
  size_t numOps = 0;

  static PlannedGraph of(const PlanningProblem &problem);
  bool operator==(const PlannedGraph &) const = default;
};

/// `buildGraphProblem` of the graph planned last, built again only when
/// the graph is another (`PlannedGraph`): the nodes do not depend on the
/// budget.
class GraphProblemCache {
public:
  explicit GraphProblemCache(GraphModel model = GraphModel::Emitted)
      : model_(model) {}

  /// The nodes of `problem`'s graph, `budgetBytes` 0; `fresh` says whether
  /// they were built now.
  const GraphProblem &get(const PlanningProblem &problem,
                          bool *fresh = nullptr);

private:
  GraphModel model_;
  PlannedGraph planned_;
  std::optional<GraphProblem> nodes_;
};

/// The steps that realise `schedule`: before each stage's node, the other
/// forward nodes the stage computes.
std::vector<RecomputeStep> stepsOf(const GraphProblem &graph,
                                   const RematSchedule &schedule);

/// The schedule that `steps` make over `graph`'s nodes, the inverse of
/// `stepsOf`: each stage computes its own node and the forward nodes of the
/// step before its first op, and each value is kept from its latest
/// computation to its next read (`keepUntilRead`). Nullopt when a step
/// precedes an op that starts no node, or recomputes an op of no forward
/// node earlier than the step's. Steps planned on the `Emitted` model map
/// onto the `Scheduled` one: the nodes are the same, in another order.
std::optional<RematSchedule>
scheduleOfSteps(const GraphProblem &graph, llvm::ArrayRef<RecomputeStep> steps);

/// A copy of forward node `node` made just before node `before`.
struct NodeCopy {
  int before = 0;
  int node = 0;
};

/// The steps that make `copies` (duplicates allowed): one per `before`
/// node, its copies' ops in forward order. O(C log C) for C copies, not
/// O(nodes^2) as a `RematSchedule`.
std::vector<RecomputeStep> stepsOfCopies(const GraphProblem &graph,
                                         std::vector<NodeCopy> copies);

/// By node: the nodes that read it, increasing, each once (`buildDag`'s
/// readers). O(nodes + edges log edges).
std::vector<std::vector<int>> readersOf(const RematProblem &problem);

} // namespace remat::problem

#endif // REMAT_PASSES_PLANNING_PROBLEM_GRAPHPROBLEM_H

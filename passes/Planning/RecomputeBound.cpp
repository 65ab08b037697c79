//===- RecomputeBound.cpp - A proven floor under recompute cost -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The training graph as the `ilp` planner sees it (GraphModel::Scheduled),
/// and the relaxation of Ilp/LowerBound.cpp solved on it for its bound alone.
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/RecomputeBound.h"

#include "Planning/Ilp/CheckmateIlp.h"
#include "Planning/Problem/GraphProblem.h"

#include "remat/Analysis/Memory.h"
#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

namespace remat {

absl::StatusOr<RecomputeCostBound>
boundRecomputeCost(const PlanningProblem &problem, double seconds) {
  if (!problem.budgetBytes)
    return invalidArgument("a recompute bound needs a budget (--budget=SIZE)");
  // The relaxation counts every result's bytes: where the simulation lets a
  // result share a dead operand's storage, a plan may fit that it rules out.
  for (const Op &op : problem.graph->ops())
    if (!inPlaceOperands(op).empty())
      return opError(op, "writes its result in place ('inplace'), which the "
                         "recompute bound does not model");
  problem::GraphProblem graph =
      problem::buildGraphProblem(problem, problem::GraphModel::Scheduled);
  graph.problem.budgetBytes = *problem.budgetBytes;
  ilp::IlpOptions options;
  options.timeLimitSeconds = seconds;
  REMAT_ASSIGN_OR_RETURN(ilp::RecomputeBound bound,
                         ilp::boundRecomputeCost(graph.problem, options));
  RecomputeCostBound result;
  result.infeasible = bound.infeasible;
  result.bound = bound.bound;
  result.solved = bound.proven;
  result.nodes = int64_t(graph.problem.nodes.size());
  result.seconds = bound.seconds;
  result.failure = bound.solverFailure;
  return result;
}

} // namespace remat

//===- ChainToIlp.cpp - Chains and their schedules as R/S over a DAG ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The chain's training DAG as an `ilp::RematProblem` and an op sequence as
/// Checkmate's R and S matrices, so that the ILP core's checker validates
/// DP schedules and the MILP solves the same problem.
///
//===----------------------------------------------------------------------===//

#include "ChainDp.h"
#include "ChainInternal.h"

#include "remat/Support/Status.h"

namespace remat::chain {

ilp::RematProblem toRematProblem(const ChainProblem &problem) {
  int numStages = int(problem.stages.size());
  ilp::RematProblem dag;
  dag.constantBytes = problem.constantBytes;
  dag.budgetBytes = problem.budgetBytes;
  dag.nodes.resize(numDagNodes(numStages));
  auto add = [&](ChainOpKind kind, int stage) {
    ilp::RematNode &node = dag.nodes[dagNode(numStages, kind, stage)];
    node.cost = opCost(problem, kind, stage);
    node.bytes = opBytes(problem, kind, stage);
    llvm::SmallVector<int, 3> reads = dagReads(numStages, kind, stage);
    node.deps.assign(reads.begin(), reads.end());
    node.backward = kind == ChainOpKind::Backward;
  };
  for (int i = 0; i < numStages; ++i) {
    add(ChainOpKind::Forward, i);
    if (i + 1 < numStages)
      add(ChainOpKind::Output, i);
    add(ChainOpKind::Backward, i);
  }
  return dag;
}

absl::StatusOr<ilp::RematSchedule>
toRematSchedule(const ChainProblem &problem, const ChainSchedule &schedule) {
  REMAT_RETURN_IF_ERROR(evaluateChainSchedule(problem, schedule).status());
  int numStages = int(problem.stages.size());
  int numNodes = numDagNodes(numStages);
  int numOps = int(schedule.ops.size());
  // Checkmate's stage t is where node t is first computed: first
  // computations must come in node order, and every other op belongs to the
  // stage of the next first computation.
  std::vector<int> nodeOf(numOps), stageOf(numOps);
  std::vector<bool> seen(numNodes, false), first(numOps, false);
  int nextNew = 0;
  for (int k = 0; k < numOps; ++k) {
    const ChainOp &op = schedule.ops[k];
    if (op.run != 0)
      return invalidArgument("chain schedule: op {} ({}) is a lean run, "
                             "which the DAG does not model",
                             k, describeOp(op));
    nodeOf[k] = dagNode(numStages, op.kind, op.stage);
    if (seen[nodeOf[k]])
      continue;
    if (nodeOf[k] != nextNew)
      return invalidArgument(
          "chain schedule: op {} ({}) computes node {} before node {}", k,
          describeOp(op), nodeOf[k], nextNew);
    seen[nodeOf[k]] = true;
    first[k] = true;
    ++nextNew;
  }
  if (!first[numOps - 1])
    return invalidArgument("chain schedule: op {} ({}) comes after the last "
                           "backward",
                           numOps - 1, describeOp(schedule.ops.back()));
  for (int k = numOps - 1, stage = 0; k >= 0; --k) {
    if (first[k])
      stage = nodeOf[k];
    stageOf[k] = stage;
  }

  ilp::RematSchedule result = ilp::RematSchedule::empty(numNodes);
  for (int k = 0; k < numOps; ++k) {
    int stage = stageOf[k], node = nodeOf[k];
    if (k > 0 && stageOf[k - 1] == stage && nodeOf[k - 1] >= node)
      return invalidArgument(
          "chain schedule: op {} ({}) is out of node order in stage {}", k,
          describeOp(schedule.ops[k]), stage);
    result.compute[stage].set(node);
    for (int t = stage + 1; t <= stageOf[schedule.ops[k].lastUse]; ++t)
      result.resident[t].set(node);
  }
  return result;
}

} // namespace remat::chain

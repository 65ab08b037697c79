//===- ChainToIlp.cpp - Chains and their schedules as R/S over a DAG ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The chain's training DAG as an `problem::RematProblem` and an op sequence as
/// Checkmate's R and S matrices, so that the ILP core's checker validates
/// DP schedules and the MILP solves the same problem.
///
//===----------------------------------------------------------------------===//

#include "ChainDp.h"
#include "ChainInternal.h"

#include "remat/Support/Status.h"

namespace remat::chain {
namespace {

/// Where the nodes of the chain's DAG land in `toRematProblem`'s order: the
/// ops' nodes (`dagNode`), with a node of parameter gradients inserted
/// before the Backward of each stage that has some.
struct DagLayout {
  /// By `dagNode`: the index in the DAG.
  std::vector<int> indexOf;
  /// By stage: the index of its parameter gradients' node, or -1.
  std::vector<int> paramGradientsOf;
  int numNodes = 0;

  explicit DagLayout(const ChainProblem &problem) {
    int numStages = int(problem.stages.size());
    int numForward = 2 * numStages - 1;
    indexOf.resize(numDagNodes(numStages));
    paramGradientsOf.assign(numStages, -1);
    for (int node = 0; node < numForward; ++node)
      indexOf[node] = numNodes++;
    for (int stage = numStages - 1; stage >= 0; --stage) {
      if (problem.stages[stage].paramGradientBytes > 0)
        paramGradientsOf[stage] = numNodes++;
      indexOf[dagNode(numStages, ChainOpKind::Backward, stage)] = numNodes++;
    }
  }
};

} // namespace

problem::RematProblem toRematProblem(const ChainProblem &problem) {
  int numStages = int(problem.stages.size());
  DagLayout layout(problem);
  problem::RematProblem dag;
  dag.constantBytes = problem.constantBytes;
  dag.budgetBytes = problem.budgetBytes;
  dag.nodes.resize(layout.numNodes);
  auto add = [&](ChainOpKind kind, int stage) {
    problem::RematNode &node =
        dag.nodes[layout.indexOf[dagNode(numStages, kind, stage)]];
    node.cost = opCost(problem, kind, stage);
    node.bytes = opBytes(problem, kind, stage);
    for (int read : dagReads(numStages, kind, stage))
      node.deps.push_back(layout.indexOf[read]);
    node.backward = kind == ChainOpKind::Backward;
  };
  for (int i = 0; i < numStages; ++i) {
    add(ChainOpKind::Forward, i);
    if (i + 1 < numStages)
      add(ChainOpKind::Output, i);
    add(ChainOpKind::Backward, i);
  }
  // Parameter gradients: made once, read by the last backward to stay live.
  problem::RematNode &lastBackward =
      dag.nodes[layout.indexOf[dagNode(numStages, ChainOpKind::Backward, 0)]];
  for (int i = 0; i < numStages; ++i)
    if (int index = layout.paramGradientsOf[i]; index >= 0) {
      dag.nodes[index].bytes = problem.stages[i].paramGradientBytes;
      dag.nodes[index].backward = true;
      lastBackward.deps.push_back(index);
    }
  return dag;
}

absl::StatusOr<problem::RematSchedule>
toRematSchedule(const ChainProblem &problem, const ChainSchedule &schedule) {
  REMAT_RETURN_IF_ERROR(evaluateChainSchedule(problem, schedule).status());
  int numStages = int(problem.stages.size());
  for (int i = 0; i < numStages; ++i)
    if (problem.stages[i].forwardTempBytes > 0 ||
        problem.stages[i].backwardTempBytes > 0 || problem.stages[i].late)
      return invalidArgument("chain schedule: stage {} has temporaries or a "
                             "late run, which the DAG does not model",
                             i);
  DagLayout layout(problem);
  int numNodes = layout.numNodes;
  // The computations: the ops, each Backward of a stage with parameter
  // gradients preceded by their node (op -1), live to the last op.
  struct Step {
    int op = 0, node = 0, lastUse = 0;
  };
  std::vector<Step> steps;
  std::vector<int> stepOfOp(schedule.ops.size());
  for (int k = 0, e = int(schedule.ops.size()); k < e; ++k) {
    const ChainOp &op = schedule.ops[k];
    if (op.run != 0)
      return invalidArgument("chain schedule: op {} ({}) is a lean run, "
                             "which the DAG does not model",
                             k, describeOp(op));
    if (op.kind == ChainOpKind::Backward)
      if (int index = layout.paramGradientsOf[op.stage]; index >= 0)
        steps.push_back({-1, index, e - 1});
    stepOfOp[k] = int(steps.size());
    steps.push_back(
        {k, layout.indexOf[dagNode(numStages, op.kind, op.stage)], op.lastUse});
  }
  // "op 4 (backward 2)"; a node of parameter gradients by its backward's.
  auto describe = [&](int k) {
    int op = steps[k].op >= 0 ? steps[k].op : steps[k + 1].op;
    return fmt::format("op {} ({}{})", op, steps[k].op >= 0 ? "" : "before ",
                       describeOp(schedule.ops[op]));
  };
  int numSteps = int(steps.size());
  for (Step &step : steps)
    step.lastUse = stepOfOp[step.lastUse];

  // Checkmate's stage t is where node t is first computed: first
  // computations must come in node order, and every other step belongs to
  // the stage of the next first computation.
  std::vector<int> stageOf(numSteps);
  std::vector<bool> seen(numNodes, false), first(numSteps, false);
  int nextNew = 0;
  for (int k = 0; k < numSteps; ++k) {
    int node = steps[k].node;
    if (seen[node])
      continue;
    if (node != nextNew)
      return invalidArgument(
          "chain schedule: {} computes node {} before node {}", describe(k),
          node, nextNew);
    seen[node] = true;
    first[k] = true;
    ++nextNew;
  }
  if (!first[numSteps - 1])
    return invalidArgument(
        "chain schedule: {} comes after the last backward",
        describe(numSteps - 1));
  for (int k = numSteps - 1, stage = 0; k >= 0; --k) {
    if (first[k])
      stage = steps[k].node;
    stageOf[k] = stage;
  }

  problem::RematSchedule result = problem::RematSchedule::empty(numNodes);
  for (int k = 0; k < numSteps; ++k) {
    int stage = stageOf[k], node = steps[k].node;
    if (k > 0 && stageOf[k - 1] == stage && steps[k - 1].node >= node)
      return invalidArgument(
          "chain schedule: {} is out of node order in stage {}", describe(k),
          stage);
    result.compute[stage].set(node);
    for (int t = stage + 1; t <= stageOf[steps[k].lastUse]; ++t)
      result.resident[t].set(node);
  }
  return result;
}

} // namespace remat::chain

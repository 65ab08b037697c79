//===- ChainModel.cpp - Chains, their DAG nodes and schedule costs --------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Validation of chain problems, what each op reads, and the exact cost and
/// peak of an op sequence: the accounting the DP's recurrence follows and
/// that `problem::checkSchedule` confirms on the chain's DAG.
///
//===----------------------------------------------------------------------===//

#include "ChainDp.h"
#include "ChainInternal.h"

#include "remat/Support/Status.h"

#include "llvm/Support/MathExtras.h"

namespace remat::chain {

absl::Status validateChain(const ChainProblem &problem) {
  int numStages = int(problem.stages.size());
  if (numStages == 0)
    return invalidArgument("chain problem: no stage");
  if (problem.constantBytes < 0 || problem.budgetBytes < 0)
    return invalidArgument("chain problem: negative constant bytes or budget");
  // A DP schedule runs each stage's forward at most once per backward step
  // plus once in the first pass, so (L + 1) * forward + backward bounds it.
  int64_t forward = 0, backward = 0, bytes = problem.constantBytes;
  bool overflow = false;
  for (int i = 0; i < numStages; ++i) {
    const ChainStage &stage = problem.stages[i];
    if (stage.forwardCost < 0 || stage.backwardCost < 0 ||
        stage.outputBytes < 0 || stage.savedBytes < 0 ||
        stage.gradientBytes < 0 || stage.paramGradientBytes < 0 ||
        stage.forwardTempBytes < 0 || stage.backwardTempBytes < 0)
      return invalidArgument(
          "chain problem: stage {} has a negative cost or size", i);
    overflow |= llvm::AddOverflow(forward, stage.forwardCost, forward);
    overflow |= llvm::AddOverflow(backward, stage.backwardCost, backward);
    for (int64_t size : {stage.outputBytes, stage.savedBytes,
                         stage.gradientBytes, stage.paramGradientBytes,
                         stage.forwardTempBytes, stage.backwardTempBytes})
      overflow |= llvm::AddOverflow(bytes, size, bytes);
    // A backward recomputes for one run only: its most costly and largest.
    int64_t extraCost = 0, extraBytes = 0;
    for (const StageRun &run : stage.leanRuns) {
      if (run.savedBytes < 0 || run.extraBytes < 0 || run.extraCost < 0 ||
          run.forwardBytes < 0)
        return invalidArgument(
            "chain problem: stage {} has a lean run of negative cost or size",
            i);
      int64_t runBytes = 0;
      overflow |= llvm::AddOverflow(
          run.savedBytes, std::max(run.extraBytes, run.forwardBytes),
          runBytes);
      extraCost = std::max(extraCost, run.extraCost);
      extraBytes = std::max(extraBytes, runBytes);
    }
    // A late run does less than the run: it keeps, holds and costs no more.
    for (int r = 0; r <= int(stage.leanRuns.size()); ++r) {
      RunFootprint early = forwardRun(problem, i, r, false);
      RunFootprint late = forwardRun(problem, i, r, true);
      if (late.savedBytes < 0 || late.forwardBytes < 0 || late.cost < 0 ||
          late.savedBytes > early.savedBytes ||
          late.savedBytes + late.forwardBytes >
              early.savedBytes + early.forwardBytes ||
          late.cost > early.cost)
        return invalidArgument(
            "chain problem: stage {} has a late run that is not within its "
            "run",
            i);
    }
    overflow |= llvm::AddOverflow(backward, extraCost, backward);
    overflow |= llvm::AddOverflow(bytes, extraBytes, bytes);
  }
  int64_t bound = 0;
  overflow |= llvm::MulOverflow(forward, int64_t(numStages) + 1, bound);
  overflow |= llvm::AddOverflow(bound, backward, bound);
  if (overflow)
    return invalidArgument("chain problem: cost or byte totals overflow int64");
  return absl::OkStatus();
}

int dagNode(int numStages, ChainOpKind kind, int stage) {
  switch (kind) {
  case ChainOpKind::Forward:
    return 2 * stage;
  case ChainOpKind::Output:
    return 2 * stage + 1;
  case ChainOpKind::Backward:
    return 2 * numStages - 1 + (numStages - 1 - stage);
  }
  llvm_unreachable("unknown chain op kind");
}

llvm::SmallVector<int, 3> dagReads(int numStages, ChainOpKind kind,
                                   int stage) {
  llvm::SmallVector<int, 3> reads;
  switch (kind) {
  case ChainOpKind::Forward:
    if (stage > 0)
      reads.push_back(dagNode(numStages, ChainOpKind::Output, stage - 1));
    break;
  case ChainOpKind::Output:
    reads.push_back(dagNode(numStages, ChainOpKind::Forward, stage));
    break;
  case ChainOpKind::Backward:
    if (stage + 1 < numStages)
      reads.push_back(dagNode(numStages, ChainOpKind::Backward, stage + 1));
    if (stage > 0)
      reads.push_back(dagNode(numStages, ChainOpKind::Output, stage - 1));
    reads.push_back(dagNode(numStages, ChainOpKind::Forward, stage));
    break;
  }
  return reads;
}

int64_t opBytes(const ChainProblem &problem, ChainOpKind kind, int stage,
                int run) {
  const ChainStage &s = problem.stages[stage];
  switch (kind) {
  case ChainOpKind::Forward:
    return run > 0 ? s.leanRuns[run - 1].savedBytes : s.savedBytes;
  case ChainOpKind::Output:
    return s.outputBytes;
  case ChainOpKind::Backward:
    return s.gradientBytes;
  }
  llvm_unreachable("unknown chain op kind");
}

int64_t opCost(const ChainProblem &problem, ChainOpKind kind, int stage) {
  const ChainStage &s = problem.stages[stage];
  switch (kind) {
  case ChainOpKind::Forward:
    return s.forwardCost;
  case ChainOpKind::Output:
    return 0;
  case ChainOpKind::Backward:
    return s.backwardCost;
  }
  llvm_unreachable("unknown chain op kind");
}

RunFootprint forwardRun(const ChainProblem &problem, int stage, int run,
                        bool late) {
  const ChainStage &s = problem.stages[stage];
  const StageRun *lean = run > 0 ? &s.leanRuns[run - 1] : nullptr;
  const std::optional<RunFootprint> &lateRun = lean ? lean->late : s.late;
  if (late && lateRun && stage + 1 < int(problem.stages.size()))
    return *lateRun;
  return lean
             ? RunFootprint{lean->savedBytes, lean->forwardBytes, s.forwardCost}
             : RunFootprint{s.savedBytes, s.forwardTempBytes, s.forwardCost};
}

int numDagNodes(int numStages) { return 3 * numStages - 1; }

void setLastUses(int numStages, ChainSchedule &schedule) {
  std::vector<int> latest(numDagNodes(numStages), -1);
  for (int k = 0, e = int(schedule.ops.size()); k < e; ++k) {
    ChainOp &op = schedule.ops[k];
    op.lastUse = k;
    for (int node : dagReads(numStages, op.kind, op.stage))
      if (latest[node] >= 0)
        schedule.ops[latest[node]].lastUse = k;
    latest[dagNode(numStages, op.kind, op.stage)] = k;
  }
}

std::string describeOp(const ChainOp &op) {
  const char *kind = op.kind == ChainOpKind::Forward  ? "forward"
                     : op.kind == ChainOpKind::Output ? "output"
                                                      : "backward";
  return fmt::format("{} {}", kind, op.stage);
}

absl::StatusOr<ChainCost> evaluateChainSchedule(const ChainProblem &problem,
                                                const ChainSchedule &schedule) {
  REMAT_RETURN_IF_ERROR(validateChain(problem));
  int numStages = int(problem.stages.size());
  int numOps = int(schedule.ops.size());
  auto opError = [&](int k, std::string_view what) {
    return invalidArgument("chain schedule: op {} ({}): {}", k,
                           describeOp(schedule.ops[k]), what);
  };
  // The op holding each node's latest result, and the bytes freed after
  // each op.
  std::vector<int> latest(numDagNodes(numStages), -1);
  std::vector<int64_t> freedAfter(numOps, 0), resultBytes(numOps, 0);
  int nextBackward = numStages - 1;
  ChainCost result;
  result.peakBytes = problem.constantBytes;
  int64_t live = problem.constantBytes;
  bool overflow = false;
  for (int k = 0; k < numOps; ++k) {
    const ChainOp &op = schedule.ops[k];
    if (op.stage < 0 || op.stage >= numStages ||
        (op.kind == ChainOpKind::Output && op.stage == numStages - 1))
      return invalidArgument("chain schedule: op {}: no such op", k);
    if (op.lastUse < k || op.lastUse >= numOps)
      return opError(k, "its last use is out of range");
    if (op.run < 0 || op.run > int(problem.stages[op.stage].leanRuns.size()) ||
        (op.run > 0 && op.kind != ChainOpKind::Forward))
      return opError(k, "no such run");
    if (op.kind == ChainOpKind::Backward) {
      if (op.stage != nextBackward)
        return opError(k, "backward out of order");
      --nextBackward;
    }
    for (int node : dagReads(numStages, op.kind, op.stage))
      if (latest[node] < 0 || schedule.ops[latest[node]].lastUse < k)
        return opError(k, fmt::format("reads node {}, which is not in memory",
                                      node));
    int node = dagNode(numStages, op.kind, op.stage);
    if (latest[node] >= 0 && schedule.ops[latest[node]].lastUse >= k)
      return opError(k, "recomputes a value that is in memory");
    // Backward i+1 is the last reader of output i.
    bool afterNextBackward = nextBackward < op.stage + 1;
    if (op.kind == ChainOpKind::Output && afterNextBackward)
      return opError(k, "takes an output that nothing reads any more");
    // A forward run holds what it drops until its last forward reader, and
    // a backward after a lean one recomputes that, live during its step
    // only.
    int64_t bytes = opBytes(problem, op.kind, op.stage, op.run);
    int64_t cost = opCost(problem, op.kind, op.stage);
    int64_t extraBytes = 0, extraCost = 0;
    if (op.kind == ChainOpKind::Forward) {
      RunFootprint run =
          forwardRun(problem, op.stage, op.run, afterNextBackward);
      bytes = run.savedBytes;
      extraBytes = run.forwardBytes;
      cost = run.cost;
    }
    if (op.kind == ChainOpKind::Backward) {
      extraBytes = problem.stages[op.stage].backwardTempBytes;
      int run = schedule.ops[latest[dagNode(numStages, ChainOpKind::Forward,
                                            op.stage)]]
                    .run;
      if (run > 0) {
        extraBytes += problem.stages[op.stage].leanRuns[run - 1].extraBytes;
        extraCost = problem.stages[op.stage].leanRuns[run - 1].extraCost;
      }
    }
    latest[node] = k;
    resultBytes[k] = bytes;
    // validateChain bounds the sum of all sizes, and at most one result of
    // each node is live.
    live += bytes;
    // Parameter gradients live from their backward to the end.
    if (op.kind == ChainOpKind::Backward)
      live += problem.stages[op.stage].paramGradientBytes;
    result.peakBytes = std::max(result.peakBytes, live + extraBytes);
    freedAfter[op.lastUse] += bytes;
    // After backward i+1, a run of stage i held from before it shrinks to
    // what its late run keeps.
    if (op.kind == ChainOpKind::Backward && op.stage > 0) {
      int held = latest[dagNode(numStages, ChainOpKind::Forward, op.stage - 1)];
      if (held >= 0 && schedule.ops[held].lastUse > k) {
        int64_t dropped =
            resultBytes[held] -
            forwardRun(problem, op.stage - 1, schedule.ops[held].run, true)
                .savedBytes;
        resultBytes[held] -= dropped;
        live -= dropped;
        freedAfter[schedule.ops[held].lastUse] -= dropped;
      }
    }
    live -= freedAfter[k];
    overflow |= llvm::AddOverflow(result.cost, cost, result.cost);
    overflow |= llvm::AddOverflow(result.cost, extraCost, result.cost);
  }
  if (nextBackward >= 0)
    return invalidArgument("chain schedule: backward {} never runs",
                           nextBackward);
  if (overflow)
    return invalidArgument("chain schedule: total cost overflows int64");
  int64_t baseCost = 0;
  for (const ChainStage &stage : problem.stages)
    baseCost += stage.forwardCost + stage.backwardCost;
  result.recomputeCost = result.cost - baseCost;
  return result;
}

} // namespace remat::chain

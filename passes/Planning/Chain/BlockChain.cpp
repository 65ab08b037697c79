//===- BlockChain.cpp - A training graph as a chain of blocks -------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Planning/Chain/BlockChain.h"

#include "Planning/ApBaselines.h"

#include "remat/IR/Value.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace remat::chain {
namespace {

/// Bottleneck blocks: block b ends at `cuts[b]` (the last block at the last
/// forward node). Returns the block of every forward node.
std::vector<int> blockOfNodes(int numForward, llvm::ArrayRef<int> cuts) {
  std::vector<int> block(numForward, 0);
  for (int node = 0, b = 0; node < numForward; ++node) {
    block[node] = b;
    if (b < int(cuts.size()) && cuts[b] == node)
      ++b;
  }
  return block;
}

/// Groups `weights.size()` consecutive blocks into at most `maxStages`
/// stages of about equal weight; returns the stage of each block.
std::vector<int> mergeBlocks(llvm::ArrayRef<int64_t> weights, int maxStages) {
  int numBlocks = int(weights.size());
  std::vector<int> stage(numBlocks, 0);
  if (numBlocks <= maxStages) {
    for (int b = 0; b < numBlocks; ++b)
      stage[b] = b;
    return stage;
  }
  __int128 total = 0;
  for (int64_t weight : weights)
    total += weight;
  // Close stage k once the weight so far reaches (k+1)/maxStages of the
  // total; empty weights fall back to equal block counts.
  __int128 prefix = 0;
  for (int b = 0, k = 0; b < numBlocks; ++b) {
    stage[b] = k;
    prefix += weights[b];
    bool reached =
        total > 0 ? prefix * maxStages >= total * (k + 1)
                  : int64_t(b + 1) * maxStages >= int64_t(numBlocks) * (k + 1);
    if (reached && k + 1 < maxStages && b + 1 < numBlocks)
      ++k;
  }
  return stage;
}

/// How far a stage's backward, its gradient nodes `nodes` (consecutive, in
/// order), goes over `counted` bytes while it runs: what the chain counts
/// at its step (its input, what it keeps, the incoming gradient and what it
/// makes). Its steps hold the values it reads from elsewhere until its last
/// reader of them, and its own results until their last reader where that
/// is in the stage, else to its end. Sums are within the problem's total,
/// which `validateProblem` bounds.
int64_t backwardExcess(const problem::RematProblem &problem,
                       llvm::ArrayRef<int> nodes,
                       llvm::ArrayRef<int> lastReader, int64_t counted) {
  if (nodes.empty())
    return 0;
  int first = nodes.front(), last = nodes.back();
  auto inStage = [&](int node) { return node >= first && node <= last; };
  std::vector<int64_t> freedAfter(last - first + 1, 0);
  // What the stage reads from elsewhere, live from its start.
  llvm::DenseSet<int> read;
  int64_t live = 0, most = 0;
  for (int node : nodes)
    for (int dep : problem.nodes[node].deps)
      if (!inStage(dep) && read.insert(dep).second) {
        live += problem.nodes[dep].bytes;
        if (lastReader[dep] <= last)
          freedAfter[lastReader[dep] - first] += problem.nodes[dep].bytes;
      }
  for (int node : nodes) {
    int64_t bytes = problem.nodes[node].bytes;
    live += bytes;
    if (lastReader[node] <= last)
      freedAfter[std::max(node, lastReader[node]) - first] += bytes;
    most = std::max(most, live);
    live -= freedAfter[node - first];
  }
  return std::max<int64_t>(0, most - counted);
}

} // namespace

absl::StatusOr<BlockChain> buildBlockChain(const problem::GraphProblem &graph,
                                           llvm::ArrayRef<const Value *> gradientOutputs,
                                           int maxStages) {
  const problem::RematProblem &problem = graph.problem;
  // Bounds the sum of all nodes' bytes, which the walks below add up.
  REMAT_RETURN_IF_ERROR(problem::validateProblem(problem));
  int numNodes = int(problem.nodes.size());
  int numForward = problem::numForward(problem);
  if (numForward == 0)
    return invalidArgument("chain: the graph has no forward op to recompute");

  // Forward nodes some gradient op reads (the sink, which only holds the
  // gradient outputs, has no ops).
  std::vector<char> readByBackward(numForward, 0);
  std::vector<int> firstReader(numForward, -1), lastReader(numForward, -1);
  for (int node = numForward; node < numNodes; ++node)
    if (!graph.ops[node].empty())
      for (int dep : problem.nodes[node].deps)
        if (dep < numForward) {
          readByBackward[dep] = 1;
          if (firstReader[dep] < 0)
            firstReader[dep] = node;
          lastReader[dep] = node;
        }
  // A block ends at a bottleneck the backward reads: one it does not read
  // would make the model's free `Output` (from what the block keeps) false,
  // so its block runs on into the next.
  std::vector<int> cuts = cutNodes(problem);
  llvm::erase_if(cuts, [&](int node) { return !readByBackward[node]; });
  std::vector<int> blockOf = blockOfNodes(numForward, cuts);
  int numBlocks = int(cuts.size()) + 1;
  std::vector<int64_t> blockBytes(numBlocks, 0);
  bool overflow = false;
  for (int node = 0; node < numForward; ++node)
    overflow |=
        llvm::AddOverflow(blockBytes[blockOf[node]], problem.nodes[node].bytes,
                          blockBytes[blockOf[node]]);
  std::vector<int> stageOfBlock =
      mergeBlocks(blockBytes, std::max(1, maxStages));
  int numStages = stageOfBlock.back() + 1;

  BlockChain chain;
  chain.numBlocks = numBlocks;
  chain.stageNodes.resize(numStages);
  std::vector<int> stageOf(numForward);
  for (int node = 0; node < numForward; ++node) {
    stageOf[node] = stageOfBlock[blockOf[node]];
    chain.stageNodes[stageOf[node]].push_back(node);
  }
  // The node each stage hands to the next: its last, a bottleneck.
  std::vector<int> outputOf(numStages);
  for (int s = 0; s < numStages; ++s)
    outputOf[s] = chain.stageNodes[s].back();
  auto isOutput = [&](int node) {
    return stageOf[node] + 1 < numStages && outputOf[stageOf[node]] == node;
  };

  // Backward nodes come in the reverse order of the forward ops they
  // differentiate, so their stage only falls: a read of a stage's inner
  // node puts the reader in that stage; a read of a bottleneck, which the
  // next stage's backward reads as its input too, in the next one.
  ChainProblem &chainProblem = chain.problem;
  chainProblem.stages.resize(numStages);
  // Whether each stage's output is read at or after its own backward.
  std::vector<char> outputRead(numStages, 0);
  chain.firstBackwardNode.assign(numStages, -1);
  // The stage whose backward runs each gradient op, and its nodes.
  llvm::DenseMap<const Op *, int> backwardStage;
  std::vector<std::vector<int>> backwardNodes(numStages);
  int current = numStages - 1;
  for (int node = numForward; node < numNodes; ++node) {
    const problem::RematNode &info = problem.nodes[node];
    if (graph.ops[node].empty()) {
      // The sink holding the gradient outputs.
      continue;
    }
    for (int dep : info.deps) {
      if (dep >= numForward)
        continue;
      current =
          std::min(current, isOutput(dep) ? stageOf[dep] + 1 : stageOf[dep]);
    }
    // A stage whose backward reads nothing of its own starts with the next.
    for (int s = current; s < numStages && chain.firstBackwardNode[s] < 0; ++s)
      chain.firstBackwardNode[s] = node;
    for (const Op *op : graph.ops[node])
      backwardStage[op] = current;
    backwardNodes[current].push_back(node);
    ChainStage &stage = chainProblem.stages[current];
    // An output read at or after its own stage's backward.
    for (int dep : info.deps)
      if (dep < numForward && isOutput(dep) && stageOf[dep] >= current)
        outputRead[stageOf[dep]] = 1;
    overflow |=
        llvm::AddOverflow(stage.backwardCost, info.cost, stage.backwardCost);
  }
  // Each gradient output lives from the backward that makes it; one made
  // by no stage's backward counts throughout.
  chainProblem.constantBytes = problem.constantBytes;
  for (const Value *output : gradientOutputs) {
    auto stage = backwardStage.find(output->producer());
    int64_t &bytes = stage != backwardStage.end()
                         ? chainProblem.stages[stage->second].paramGradientBytes
                         : chainProblem.constantBytes;
    overflow |= llvm::AddOverflow(bytes, output->type().byteSize(), bytes);
  }

  for (int node = 0; node < numForward; ++node) {
    ChainStage &stage = chainProblem.stages[stageOf[node]];
    int64_t bytes = problem.nodes[node].bytes;
    overflow |= llvm::AddOverflow(stage.forwardCost, problem.nodes[node].cost,
                                  stage.forwardCost);
    // What a run keeps for the backward includes the stage's output, which
    // is among its values: holding them holds it.
    if (readByBackward[node] || isOutput(node))
      overflow |= llvm::AddOverflow(stage.savedBytes, bytes, stage.savedBytes);
    if (isOutput(node)) {
      stage.outputBytes = bytes;
      chainProblem.stages[stageOf[node] + 1].gradientBytes = bytes;
    }
  }
  if (overflow)
    return invalidArgument("chain: the graph's cost or byte totals overflow "
                           "int64");
  std::vector<int> lastNodeReader(numNodes, -1);
  for (int node = 0; node < numNodes; ++node)
    for (int dep : problem.nodes[node].deps)
      lastNodeReader[dep] = node;
  // After the stages' late runs, below, which say what each keeps for its
  // backward.
  auto countBackwardExcess = [&](int s) {
    ChainStage &stage = chainProblem.stages[s];
    int64_t counted = stage.late ? stage.late->savedBytes : stage.savedBytes;
    for (int64_t bytes :
         {s > 0 ? chainProblem.stages[s - 1].outputBytes : int64_t(0),
          s + 1 < numStages ? chainProblem.stages[s + 1].gradientBytes
                            : int64_t(0),
          stage.gradientBytes, stage.paramGradientBytes})
      counted += bytes;
    stage.backwardTempBytes =
        backwardExcess(problem, backwardNodes[s], lastNodeReader, counted);
  };

  std::vector<char> saved(numForward), blockEnd(numForward, 0);
  for (int node = 0; node < numForward; ++node)
    saved[node] = readByBackward[node] || isOutput(node);
  for (int node : cuts)
    blockEnd[node] = 1;
  std::vector<int> lastForwardReader(numForward, -1);
  for (int node = 0; node < numForward; ++node)
    for (int dep : problem.nodes[node].deps)
      lastForwardReader[dep] = node;
  StageValues values{stageOf,     saved,      blockEnd,
                     firstReader, lastReader, lastForwardReader};
  chain.leanRuns.resize(numStages);
  for (int s = 0; s < numStages; ++s) {
    const std::vector<int> &nodes = chain.stageNodes[s];
    llvm::ArrayRef<char> kept =
        llvm::ArrayRef<char>(saved).slice(nodes.front(), nodes.size());
    ChainStage &stage = chainProblem.stages[s];
    stage.forwardTempBytes =
        stageRunFootprint(problem, nodes, kept, false, outputRead[s])
            .forwardBytes;
    stage.late = stageRunFootprint(problem, nodes, kept, true, outputRead[s]);
    chain.leanRuns[s] = leanRunsOfStage(problem, nodes, values, outputRead[s]);
    countBackwardExcess(s);
    for (const LeanRun &lean : chain.leanRuns[s])
      chainProblem.stages[s].leanRuns.push_back(lean.run);
  }
  return chain;
}

std::vector<RecomputeStep> stepsOfChain(const problem::GraphProblem &graph,
                                        const BlockChain &chain,
                                        const ChainSchedule &schedule) {
  // Steps with the node they precede, sorted by it at the end.
  std::vector<std::pair<int, RecomputeStep>> placed;
  auto startStep = [&](int before) {
    placed.push_back({before, {graph.ops[before].front(), {}}});
  };
  auto appendNode = [&](int node) {
    llvm::append_range(placed.back().second.ops, graph.ops[node]);
  };
  int numStages = int(chain.stageNodes.size());
  // The run of each stage's latest forward, which its backward reads.
  std::vector<int> runOf(numStages, 0);
  // Stage runs waiting for the backward they prepare.
  std::vector<int> pending;
  bool afterFirstBackward = false;
  for (const ChainOp &op : schedule.ops) {
    if (op.kind == ChainOpKind::Forward) {
      runOf[op.stage] = op.run;
      if (afterFirstBackward)
        pending.push_back(op.stage);
      continue;
    }
    if (op.kind != ChainOpKind::Backward)
      continue;
    afterFirstBackward = true;
    int before = chain.firstBackwardNode[op.stage];
    if (before >= 0 && !pending.empty()) {
      // A stage run twice before one backward starts a second step, as a
      // step copies each op once.
      int previous = -1;
      for (int stage : pending) {
        if (stage <= previous || previous < 0)
          startStep(before);
        for (int node : chain.stageNodes[stage])
          appendNode(node);
        previous = stage;
      }
    }
    pending.clear();
    if (int run = runOf[op.stage]; run > 0)
      for (const LeanSegment &segment :
           chain.leanRuns[op.stage][run - 1].segments) {
        startStep(segment.before);
        for (int node : segment.nodes)
          appendNode(node);
      }
  }
  std::stable_sort(placed.begin(), placed.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  std::vector<RecomputeStep> steps;
  steps.reserve(placed.size());
  for (auto &[before, step] : placed)
    steps.push_back(std::move(step));
  return steps;
}

} // namespace remat::chain

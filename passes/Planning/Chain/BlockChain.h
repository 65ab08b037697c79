//===- BlockChain.h - A training graph as a chain of blocks -----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The bridge between a training graph and the chain DP: the forward pass
/// cut at its bottleneck values (nodes no forward edge jumps over) into
/// blocks, each block a stage of a `ChainProblem`, and a chain schedule
/// turned back into the recompute steps the rewrite realises. Residual nets
/// and transformers are chains of blocks this way; skips stay inside a block.
/// docs/planning-chain.md#on-a-graph describes the mapping and what it
/// does not model.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_CHAIN_BLOCKCHAIN_H
#define REMAT_PASSES_PLANNING_CHAIN_BLOCKCHAIN_H

#include "Planning/Chain/ChainDp.h"
#include "Planning/Chain/LeanRuns.h"
#include "Planning/Problem/GraphProblem.h"

#include <vector>

namespace remat::chain {

/// A training graph's forward nodes grouped into the stages of a chain.
struct BlockChain {
  ChainProblem problem;
  /// By stage: its forward nodes of the graph problem, in order. The last
  /// one of every stage but the last is the bottleneck the next stage reads.
  std::vector<std::vector<int>> stageNodes;
  /// By stage: the first backward node of the stage's backward, where its
  /// recomputations go; -1 when it has none (they go to the next stage's).
  std::vector<int> firstBackwardNode;
  /// By stage: its lean runs, `problem.stages[s].leanRuns` with the
  /// recomputations that realise them.
  std::vector<std::vector<LeanRun>> leanRuns;
  /// Bottleneck blocks before merging into at most `maxStages`.
  int numBlocks = 0;
};

/// The blocks between the bottlenecks of `graph`'s forward nodes, merged
/// into at most `maxStages` stages of balanced bytes. The gradient outputs
/// (their storage owners, each once) count from the backward of the stage
/// that makes them (`paramGradientBytes`), or, made by none, as held
/// throughout as the params are. Byte and cost totals are checked: an
/// overflow is an error. O(nodes + edges).
absl::StatusOr<BlockChain> buildBlockChain(const problem::GraphProblem &graph,
                                           llvm::ArrayRef<const Value *> gradientOutputs,
                                           int maxStages);

/// The steps that realise `schedule` on the graph: the forward runs that
/// come after the first backward, each stage's ops before the first
/// backward node of the backward that follows them, and within the backward
/// of a stage whose last run was lean, that run's segments.
std::vector<RecomputeStep> stepsOfChain(const problem::GraphProblem &graph,
                                        const BlockChain &chain,
                                        const ChainSchedule &schedule);

} // namespace remat::chain

#endif // REMAT_PASSES_PLANNING_CHAIN_BLOCKCHAIN_H

//===- LeanRuns.h - Stage runs that keep less for the backward --*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A stage's lean forward runs on a graph: each keeps a subset of the
/// stage's saved values (always its output) and lets the stage's backward
/// rebuild the rest, one segment at a time, from what was kept. The chain DP
/// prices them as `StageRun`s; `stepsOfChain` realises them as recompute
/// steps. docs/planning-chain.md#lean-runs gives the runs.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_CHAIN_LEANRUNS_H
#define REMAT_PASSES_PLANNING_CHAIN_LEANRUNS_H

#include "Planning/Chain/ChainDp.h"
#include "Planning/Problem/GraphProblem.h"

#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace remat::chain {

/// Forward nodes recomputed, in order, before backward node `before`.
struct LeanSegment {
  int before = 0;
  std::vector<int> nodes;
};

/// One lean run of a stage: its price for the DP and its segments.
struct LeanRun {
  StageRun run;
  std::vector<LeanSegment> segments;
};

/// What the lean runs of a stage are built from, by forward node.
struct StageValues {
  /// The stage of each forward node.
  llvm::ArrayRef<int> stageOf;
  /// Whether the stage's backward reads it (the stage's output included).
  llvm::ArrayRef<char> saved;
  /// Whether it ends a bottleneck block, or its stage.
  llvm::ArrayRef<char> blockEnd;
  /// The first and the last backward node that read it; -1 when none does.
  llvm::ArrayRef<int> firstReader;
  llvm::ArrayRef<int> lastReader;
  /// The last forward node that reads it; -1 when none does.
  llvm::ArrayRef<int> lastForwardReader;
};

/// A forward run of the stage made of `nodes` (in order, consecutive) that
/// keeps the values marked in `kept` (by offset from `nodes.front()`):
/// early, all its nodes computed, each value not kept live until its last
/// forward reader; late (`late`), only the kept values and what they depend
/// on in the stage computed, and the stage's output not kept unless
/// `outputRead` (backward i reads it). Linear in the stage's nodes and
/// edges; `problem` passed `problem::validateProblem`, so no sum overflows.
RunFootprint stageRunFootprint(const problem::RematProblem &problem,
                               llvm::ArrayRef<int> nodes,
                               llvm::ArrayRef<char> kept, bool late,
                               bool outputRead);

/// The lean runs of the stage made of `nodes` (in order, its output last):
/// distinct, each keeping less than all the saved values. Linear in the
/// stage's nodes and edges per run, but for a segment's rebuild reaching
/// back through earlier segments' unkept values.
std::vector<LeanRun> leanRunsOfStage(const problem::RematProblem &problem,
                                     llvm::ArrayRef<int> nodes,
                                     const StageValues &values,
                                     bool outputRead);

} // namespace remat::chain

#endif // REMAT_PASSES_PLANNING_CHAIN_LEANRUNS_H

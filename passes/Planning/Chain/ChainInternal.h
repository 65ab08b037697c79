//===- ChainInternal.h - Shared internals of the chain DP -------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the files of passes/Planning/Chain/ share and nobody else uses: the
/// DAG nodes each op reads, and each op's cost and size.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_CHAIN_CHAININTERNAL_H
#define REMAT_PASSES_PLANNING_CHAIN_CHAININTERNAL_H

#include "ChainDp.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace remat::chain {

/// Nodes of the chain's DAG: 2L - 1 forward, L backward.
int numDagNodes(int numStages);

/// The DAG nodes that the op (kind, stage) reads.
llvm::SmallVector<int, 3> dagReads(int numStages, ChainOpKind kind, int stage);

/// Bytes of the op's result (`run` of a Forward) and cost of one run of it.
int64_t opBytes(const ChainProblem &problem, ChainOpKind kind, int stage,
                int run = 0);
int64_t opCost(const ChainProblem &problem, ChainOpKind kind, int stage);

/// Run `run` of `stage` (0 full, r > 0 the lean run r - 1) as a late run
/// when `late` and the stage has one (never for the last stage), else as
/// the run itself: what it keeps, holds beyond that while it runs, and costs.
RunFootprint forwardRun(const ChainProblem &problem, int stage, int run,
                        bool late);

/// "forward 3", for messages.
std::string describeOp(const ChainOp &op);

} // namespace remat::chain

#endif // REMAT_PASSES_PLANNING_CHAIN_CHAININTERNAL_H

//===- Cost.h - FLOP costs from the registry ---------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// FLOPs per op from the registry's cost rules, or from the op's `cost`
/// attribute when it has one (profiled costs override estimates), and which
/// ops are expensive to recompute.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_COST_H
#define REMAT_ANALYSIS_COST_H

#include <cstdint>

namespace remat {

class Graph;
class Op;

/// FLOPs of one execution of `op`.
int64_t opFlops(const Op &op);
/// Sum of `opFlops` over the schedule.
int64_t graphFlops(const Graph &graph);

/// FLOPs per result byte up to which an op is cheap to recompute.
inline constexpr int64_t kCheapFlopsPerByte = 4;

/// Whether `flops` are over `kCheapFlopsPerByte` per byte of `bytes` (a
/// product past int64 is never exceeded).
bool overCheapFlops(int64_t flops, int64_t bytes);

/// Whether recomputing `op` costs much for the bytes it frees: the registry
/// flags it `expensive` (matmul, convolution), or it is another framework's
/// op (`extern`, which carries no flags) of more than `kCheapFlopsPerByte`
/// FLOPs per result byte by its `flops` (a measured `cost` aside): PyTorch's
/// convolutions and matmuls, and reductions to a much smaller result, which
/// PyTorch's partitioner does not recompute either.
bool isExpensive(const Op &op);

} // namespace remat

#endif // REMAT_ANALYSIS_COST_H

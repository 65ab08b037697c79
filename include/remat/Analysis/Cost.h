//===- Cost.h - FLOP costs from the registry ---------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// FLOPs per op from the registry's cost rules, or from the op's `cost`
/// attribute when it has one (profiled costs override estimates).
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

} // namespace remat

#endif // REMAT_ANALYSIS_COST_H

//===- TopoSort.h - Deterministic topological orders -------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Topological sorts over data and control edges. Both are deterministic:
/// among ready ops, the one earlier in the current schedule goes first, so a
/// graph whose schedule is already topological keeps it. Non-recursive;
/// O((ops + edges) log ops) at worst.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_TOPOSORT_H
#define REMAT_ANALYSIS_TOPOSORT_H

#include "absl/status/statusor.h"

#include <vector>

namespace remat {

class Graph;
class Op;

/// Every op of `graph` in a topological order; an error naming an op on the
/// cycle if there is one.
absl::StatusOr<std::vector<Op *>> topologicalOrder(const Graph &graph);

/// Ops grouped into levels: every op's operands and control dependencies are
/// produced in earlier levels. Ops within a level keep schedule order.
absl::StatusOr<std::vector<std::vector<Op *>>> levelOrder(const Graph &graph);

} // namespace remat

#endif // REMAT_ANALYSIS_TOPOSORT_H

//===- OnceSchedule.cpp - Recompute each chosen node once -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Rounds the relaxation of LowerBound.cpp to a schedule: the nodes its
/// solution computes again in the backward pass are recomputed once, as late
/// as their readers allow, and kept until their last reader. When that fits
/// the budget, its cost is the relaxation's bound and the bound proves it.
///
//===----------------------------------------------------------------------===//

#include "CheckmateIlp.h"
#include "IlpInternal.h"

namespace remat::ilp {

RematSchedule recomputeOnceSchedule(const RematProblem &problem,
                                    const RematDag &dag,
                                    const llvm::BitVector &recomputed) {
  int n = int(problem.nodes.size());
  int numForward = 0;
  while (numForward < n && !problem.nodes[numForward].backward)
    ++numForward;
  // The backward stage of each recomputation, -1 for none: the first
  // backward reader, or earlier where a recomputed reader needs it. Readers
  // come later in the order, so one pass from the last node settles it.
  std::vector<int> again(n, -1);
  for (int i = numForward - 1; i >= 0; --i) {
    if (!recomputed.test(i))
      continue;
    for (int reader : dag.readers[i]) {
      int stage = problem.nodes[reader].backward ? reader : again[reader];
      if (stage >= 0 && (again[i] < 0 || stage < again[i]))
        again[i] = stage;
    }
  }

  RematSchedule schedule = RematSchedule::empty(n);
  for (int i = 0; i < n; ++i) {
    schedule.compute[i].set(i);
    if (again[i] >= 0)
      schedule.compute[again[i]].set(i);
  }
  // Each read at stage u is served by the latest computation at or before
  // u; in between the node is resident.
  for (int i = 0; i < n; ++i) {
    auto keepUntil = [&](int use) {
      int from = again[i] >= 0 && again[i] <= use ? again[i] : i;
      for (int t = from + 1; t <= use; ++t)
        schedule.resident[t].set(i);
    };
    for (int reader : dag.readers[i]) {
      keepUntil(reader);
      if (again[reader] >= 0)
        keepUntil(again[reader]);
    }
  }
  return schedule;
}

} // namespace remat::ilp

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

namespace {

/// The most times `fitRecomputeOnce` moves a stage's recomputations, and
/// the most bits of schedules it builds in all (each move builds N^2).
constexpr int kMaxMoves = 200;
constexpr int64_t kMaxScheduleBits = int64_t(1) << 29;

/// The backward stage of each recomputation, -1 for none: the first
/// backward reader, or earlier where a recomputed reader needs it. Readers
/// come later in the order, so one pass from the last node settles it.
std::vector<int> latestStages(const RematProblem &problem, const RematDag &dag,
                              const llvm::BitVector &recomputed) {
  int forwardCount = numForward(problem);
  std::vector<int> again(problem.nodes.size(), -1);
  for (int i = forwardCount - 1; i >= 0; --i) {
    if (!recomputed.test(i))
      continue;
    for (int reader : dag.readers[i]) {
      int stage = problem.nodes[reader].backward ? reader : again[reader];
      if (stage >= 0 && (again[i] < 0 || stage < again[i]))
        again[i] = stage;
    }
  }
  return again;
}

/// Every node at its own stage and at `again[i]` when that is set, kept
/// from its latest computation to each read (`keepUntilRead`). Valid when
/// every recomputed node's recomputed inputs run at its stage or earlier.
RematSchedule scheduleWithStages(const RematProblem &problem,
                                 llvm::ArrayRef<int> again) {
  int n = int(problem.nodes.size());
  RematSchedule schedule = RematSchedule::empty(n);
  for (int i = 0; i < n; ++i) {
    schedule.compute[i].set(i);
    if (again[i] >= 0)
      schedule.compute[again[i]].set(i);
  }
  keepUntilRead(problem, schedule);
  return schedule;
}

} // namespace

RematSchedule recomputeOnceSchedule(const RematProblem &problem,
                                    const RematDag &dag,
                                    const llvm::BitVector &recomputed) {
  return scheduleWithStages(problem, latestStages(problem, dag, recomputed));
}

std::optional<std::pair<RematSchedule, ScheduleCost>>
fitRecomputeOnce(const RematProblem &problem, const RematDag &dag,
                 const llvm::BitVector &recomputed) {
  int forwardCount = numForward(problem);
  std::vector<int> again = latestStages(problem, dag, recomputed);
  int64_t n = int64_t(problem.nodes.size());
  int64_t maxMoves = std::min<int64_t>(kMaxMoves, kMaxScheduleBits / (n * n));
  for (int64_t move = 0; move <= maxMoves; ++move) {
    RematSchedule schedule = scheduleWithStages(problem, again);
    absl::StatusOr<ScheduleCost> cost = evaluateSchedule(problem, schedule);
    if (!cost.ok())
      return std::nullopt;
    if (cost->peakBytes <= problem.budgetBytes)
      return std::make_pair(std::move(schedule), *cost);
    // The peak is where a stage recomputes: run those recomputations a
    // stage earlier, where the node of the stage and its inputs are not yet
    // live beside them. Moving a whole stage keeps inputs before readers.
    int stage = cost->peakStage;
    if (stage - 1 < forwardCount || !llvm::is_contained(again, stage))
      return std::nullopt;
    for (int &when : again)
      if (when == stage)
        when = stage - 1;
  }
  return std::nullopt;
}

} // namespace remat::ilp

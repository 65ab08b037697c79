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

/// Where `fitRecomputeOnce` has moved recomputations: a node's is at or
/// after `notBefore` (0: anywhere), and at `earlier` when that is set and
/// earlier than its readers need.
struct Moves {
  std::vector<int> notBefore, earlier;
  explicit Moves(int n) : notBefore(n, 0), earlier(n, -1) {}
};

/// The backward stage of each recomputation, -1 for none: the first
/// backward reader at or after `moves.notBefore[i]`, or earlier where a
/// recomputed reader needs it or `moves.earlier[i]` says; reads before it
/// are of the forward pass's value, kept. Readers come later in the order,
/// so one pass from the last node settles it.
std::vector<int> latestStages(const RematProblem &problem, const RematDag &dag,
                              const llvm::BitVector &recomputed,
                              const Moves &moves) {
  int forwardCount = numForward(problem);
  std::vector<int> again(problem.nodes.size(), -1);
  for (int i = forwardCount - 1; i >= 0; --i) {
    if (!recomputed.test(i))
      continue;
    for (int reader : dag.readers[i]) {
      int stage = problem.nodes[reader].backward ? reader : again[reader];
      if (stage >= moves.notBefore[i] && (again[i] < 0 || stage < again[i]))
        again[i] = stage;
    }
    if (again[i] >= 0 && moves.earlier[i] >= 0)
      again[i] = std::min(again[i], moves.earlier[i]);
  }
  return again;
}

/// Whether node `i` is read at `stage` of `schedule`.
bool readAt(const RematSchedule &schedule, const RematDag &dag, int i,
            int stage) {
  for (int reader : dag.readers[i])
    if (schedule.compute[stage].test(reader))
      return true;
  return false;
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

/// The schedule of `recomputed` with `moves` made, its stages and cost.
struct Rounding {
  Moves moves;
  std::vector<int> again;
  RematSchedule schedule;
  absl::StatusOr<ScheduleCost> cost;

  Rounding(const RematProblem &problem, const RematDag &dag,
           const llvm::BitVector &recomputed, Moves made)
      : moves(std::move(made)),
        again(latestStages(problem, dag, recomputed, moves)),
        schedule(scheduleWithStages(problem, again)),
        cost(evaluateSchedule(problem, schedule)) {}
};

} // namespace

RematSchedule recomputeOnceSchedule(const RematProblem &problem,
                                    const RematDag &dag,
                                    const llvm::BitVector &recomputed) {
  return scheduleWithStages(
      problem,
      latestStages(problem, dag, recomputed, Moves(int(problem.nodes.size()))));
}

std::optional<std::pair<RematSchedule, ScheduleCost>>
fitRecomputeOnce(const RematProblem &problem, const RematDag &dag,
                 const llvm::BitVector &recomputed) {
  int forwardCount = numForward(problem);
  int64_t n = int64_t(problem.nodes.size());
  int64_t maxMoves = std::min<int64_t>(kMaxMoves, kMaxScheduleBits / (n * n));
  Rounding current(problem, dag, recomputed, Moves(int(n)));
  for (int64_t move = 0; move <= maxMoves; ++move) {
    if (!current.cost.ok())
      return std::nullopt;
    if (current.cost->peakBytes <= problem.budgetBytes)
      return std::make_pair(std::move(current.schedule), *current.cost);
    int stage = current.cost->peakStage;
    // A node recomputed before the peak's stage for a reader before it and
    // read after it: kept from the forward pass for the early readers and
    // recomputed after the peak instead, it is not live there. The move
    // that lowers the peak most.
    std::optional<Rounding> postponed;
    for (int i = 0; i < forwardCount && move < maxMoves; ++i) {
      if (current.again[i] < 0 || current.again[i] >= stage ||
          !current.schedule.resident[stage].test(i) ||
          readAt(current.schedule, dag, i, stage))
        continue;
      Moves tried = current.moves;
      tried.notBefore[i] = stage + 1;
      tried.earlier[i] = -1;
      Rounding candidate(problem, dag, recomputed, std::move(tried));
      ++move;
      int64_t best =
          postponed ? postponed->cost->peakBytes : current.cost->peakBytes;
      if (candidate.cost.ok() && candidate.cost->peakBytes < best)
        postponed.emplace(std::move(candidate));
    }
    if (postponed) {
      current = std::move(*postponed);
      continue;
    }
    // The peak is where a stage recomputes: run those recomputations a
    // stage earlier, where the node of the stage and its inputs are not yet
    // live beside them. Moving a whole stage keeps inputs before readers.
    if (stage - 1 < forwardCount || !llvm::is_contained(current.again, stage))
      return std::nullopt;
    Moves earlier = current.moves;
    for (int i = 0; i < forwardCount; ++i)
      if (current.again[i] == stage)
        earlier.earlier[i] = stage - 1;
    current = Rounding(problem, dag, recomputed, std::move(earlier));
  }
  return std::nullopt;
}

} // namespace remat::ilp

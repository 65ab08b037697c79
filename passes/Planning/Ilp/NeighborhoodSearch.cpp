//===- NeighborhoodSearch.cpp - Large-neighbourhood search on CBC ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The `ilp` planner past the MILP's size: from a schedule that fits, solve
/// the MILP restricted to a window of consecutive forward nodes
/// (NeighborhoodModel.cpp), keep what it improves, slide the window; when a
/// whole sweep improves nothing, double the window. Anytime: each accepted
/// schedule is checked exactly and reported with its gap to the
/// relaxation's bound.
///
//===----------------------------------------------------------------------===//

#include "CheckmateIlp.h"
#include "IlpInternal.h"

#include "remat/Support/Stopwatch.h"

#include <algorithm>

namespace remat::ilp {

namespace {

/// The first window's forward nodes; windows overlap by half. Columns grow
/// with the square of the width: on ResNet-50 at 50%, windows of 16 take
/// 0.1-1 s each, of 32 about 10 s (200 nodes, CBC's root dearer than its
/// tree).
constexpr int kFirstWindow = 16;
/// Branch-and-bound nodes of one window's solve: it stops at the same point
/// on any machine.
constexpr int64_t kWindowSearchNodes = 200;

/// The forward nodes worth freeing: read by something.
std::vector<int> recomputable(const RematProblem &problem,
                              const RematDag &dag) {
  std::vector<int> nodes;
  for (int i = 0, f = numForward(problem); i < f; ++i)
    if (!dag.readers[i].empty())
      nodes.push_back(i);
  return nodes;
}

} // namespace

IlpResult searchNeighborhoods(const RematProblem &problem,
                              const RematDag &dag, RematSchedule schedule,
                              ScheduleCost cost, double bound,
                              const IlpOptions &options) {
  Stopwatch stopwatch;
  IlpResult result;
  std::vector<int> candidates = recomputable(problem, dag);
  auto report = [&] {
    if (!options.onProgress)
      return;
    IlpProgress progress;
    progress.seconds = stopwatch.seconds();
    progress.incumbent = double(cost.recomputeCost);
    progress.bound = bound;
    progress.gap = gapOf(*progress.incumbent, bound);
    progress.neighborhoods = result.neighborhoods;
    options.onProgress(progress);
  };
  int window = kFirstWindow;
  bool settled = double(cost.recomputeCost) <= bound || candidates.empty();
  while (!settled) {
    bool improved = false;
    int size = int(candidates.size());
    int stride = window >= size ? size : std::max(1, window / 2);
    for (int first = 0; first < size && !settled; first += stride) {
      double left = options.timeLimitSeconds - stopwatch.seconds();
      if (left <= 0 || result.neighborhoods == options.maxNeighborhoods)
        break;
      int last = std::min(size, first + window);
      NeighborhoodModel model = buildNeighborhoodModel(
          problem, dag, schedule,
          llvm::ArrayRef<int>(candidates).slice(first, last - first));
      IlpOptions windowOptions;
      windowOptions.timeLimitSeconds = left;
      windowOptions.maxNodes = kWindowSearchNodes;
      windowOptions.logLevel = options.logLevel;
      windowOptions.seed = options.seed;
      windowOptions.inSolverProcess = options.inSolverProcess;
      CbcOutcome outcome =
          solveRows(model.rows, model.columns, windowOptions, model.start);
      ++result.neighborhoods;
      if (result.solverFailure.empty())
        result.solverFailure = outcome.failure;
      // A window of every node, searched to the end: more sweeps repeat it.
      if (last == size && first == 0 && !outcome.reachedLimit)
        settled = true;
      if (outcome.values.empty())
        continue;
      RematSchedule next =
          neighborhoodSchedule(model, schedule, outcome.values);
      // A solution the exact check rejects (CBC's tolerances on the live
      // bytes) is passed over, and said.
      absl::StatusOr<ScheduleCost> nextCost = checkSchedule(problem, next);
      if (!nextCost.ok() && result.solverFailure.empty())
        result.solverFailure = fmt::format(
            "a window's solution failed the exact check: {}",
            std::string(nextCost.status().message()));
      if (!nextCost.ok() || nextCost->recomputeCost >= cost.recomputeCost)
        continue;
      schedule = std::move(next);
      cost = *nextCost;
      improved = true;
      settled = settled || double(cost.recomputeCost) <= bound;
      report();
    }
    if (stopwatch.seconds() >= options.timeLimitSeconds ||
        result.neighborhoods == options.maxNeighborhoods)
      break;
    if (!improved) {
      if (window >= size)
        break;
      window *= 2;
    }
  }
  result.schedule = std::move(schedule);
  result.cost = cost;
  double recompute = double(cost.recomputeCost);
  result.bestBound = std::min(bound, recompute);
  result.gap = gapOf(recompute, result.bestBound);
  result.status = result.gap == 0 ? IlpStatusKind::Optimal
                                  : IlpStatusKind::Feasible;
  return result;
}

} // namespace remat::ilp

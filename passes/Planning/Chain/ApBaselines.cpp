//===- ApBaselines.cpp - Checkmate's AP-sqrtn and AP-greedy ---------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "ApBaselines.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>

namespace remat::chain {

/// Forward nodes come first: the first backward node's index.
static int numForward(const ilp::RematProblem &problem) {
  auto it = llvm::find_if(problem.nodes, [](const ilp::RematNode &node) {
    return node.backward;
  });
  return int(it - problem.nodes.begin());
}

std::vector<int> cutNodes(const ilp::RematProblem &problem) {
  int numFwd = numForward(problem);
  // jumps[v]: forward edges u -> w with u < v < w, by a difference array.
  std::vector<int> jumps(numFwd + 1, 0);
  for (int w = 0; w < numFwd; ++w)
    for (int u : problem.nodes[w].deps)
      if (w - u >= 2) {
        ++jumps[u + 1];
        --jumps[w];
      }
  std::vector<int> cuts;
  for (int v = 0, open = 0; v + 1 < numFwd; ++v) {
    open += jumps[v];
    if (open == 0)
      cuts.push_back(v);
  }
  return cuts;
}

ilp::RematSchedule segmentSchedule(const ilp::RematProblem &problem,
                                   llvm::ArrayRef<int> checkpoints) {
  int n = int(problem.nodes.size());
  int numFwd = numForward(problem);
  // Segment g: the forward nodes after checkpoint g-1 up to checkpoint g.
  std::vector<int> segment(numFwd, -1);
  for (int i = 0, g = 0; i < numFwd; ++i) {
    if (g < int(checkpoints.size()) && checkpoints[g] == i) {
      ++g;
      continue;
    }
    segment[i] = g;
  }
  int numSegments = int(checkpoints.size()) + 1;
  std::vector<int> lastReader(n, -1), lastForwardReader(n, -1),
      firstBackwardReader(n, n);
  for (int k = 0; k < n; ++k)
    for (int dep : problem.nodes[k].deps) {
      lastReader[dep] = std::max(lastReader[dep], k);
      if (k < numFwd)
        lastForwardReader[dep] = std::max(lastForwardReader[dep], k);
      else
        firstBackwardReader[dep] = std::min(firstBackwardReader[dep], k);
    }
  // Each segment is run again at the first backward stage that reads it,
  // unless that is the first backward stage: then it is simply kept.
  std::vector<int> rerunAt(numSegments, n);
  for (int i = 0; i < numFwd; ++i)
    if (segment[i] >= 0)
      rerunAt[segment[i]] = std::min(rerunAt[segment[i]], firstBackwardReader[i]);
  auto rerun = [&](int i) {
    return segment[i] >= 0 && rerunAt[segment[i]] < n &&
           rerunAt[segment[i]] > numFwd;
  };

  ilp::RematSchedule schedule = ilp::RematSchedule::empty(n);
  auto keep = [&](int node, int from, int until) {
    for (int t = from + 1; t <= until; ++t)
      schedule.resident[t].set(node);
  };
  std::vector<int> checkpointUntil(n, -1);
  for (int k = 0; k < numFwd; ++k)
    if (rerun(k))
      for (int dep : problem.nodes[k].deps)
        if (segment[dep] < 0)
          checkpointUntil[dep] =
              std::max(checkpointUntil[dep], rerunAt[segment[k]]);
  for (int i = 0; i < n; ++i) {
    schedule.compute[i].set(i);
    if (i >= numFwd || segment[i] < 0)
      keep(i, i, std::max(lastReader[i], checkpointUntil[i]));
    else if (!rerun(i))
      keep(i, i, lastReader[i]);
    else {
      keep(i, i, lastForwardReader[i]);
      int stage = rerunAt[segment[i]];
      schedule.compute[stage].set(i);
      keep(i, stage, lastReader[i]);
    }
  }
  return schedule;
}

std::vector<int> sqrtnCheckpoints(const ilp::RematProblem &problem) {
  std::vector<int> cuts = cutNodes(problem);
  int step = int(std::ceil(std::sqrt(double(cuts.size()))));
  std::vector<int> checkpoints;
  for (int j = step - 1; j < int(cuts.size()); j += step)
    checkpoints.push_back(cuts[j]);
  return checkpoints;
}

std::vector<int> greedyCheckpoints(const ilp::RematProblem &problem,
                                   int64_t segmentBytes) {
  std::vector<int> cuts = cutNodes(problem);
  std::vector<int> checkpoints;
  int64_t accumulated = 0;
  for (int cut = 0, i = 0; cut < int(cuts.size()); ++cut) {
    for (; i <= cuts[cut]; ++i)
      accumulated += problem.nodes[i].bytes;
    if (accumulated > segmentBytes) {
      checkpoints.push_back(cuts[cut]);
      accumulated = 0;
    }
  }
  return checkpoints;
}

std::optional<std::pair<ilp::RematSchedule, ilp::ScheduleCost>>
bestGreedySchedule(const ilp::RematProblem &problem) {
  // The checkpoints change only where the running total crosses the
  // parameter: try every prefix total of the forward bytes.
  std::vector<int64_t> parameters = {0};
  int64_t total = 0;
  for (int i = 0, e = numForward(problem); i < e; ++i)
    parameters.push_back(total += problem.nodes[i].bytes);
  llvm::sort(parameters);
  parameters.erase(std::unique(parameters.begin(), parameters.end()),
                   parameters.end());
  std::optional<std::pair<ilp::RematSchedule, ilp::ScheduleCost>> best;
  for (int64_t parameter : parameters) {
    ilp::RematSchedule schedule =
        segmentSchedule(problem, greedyCheckpoints(problem, parameter));
    absl::StatusOr<ilp::ScheduleCost> cost =
        ilp::checkSchedule(problem, schedule);
    if (cost.ok() && (!best || cost->cost < best->second.cost))
      best.emplace(std::move(schedule), *cost);
  }
  return best;
}

} // namespace remat::chain

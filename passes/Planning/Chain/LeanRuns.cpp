//===- LeanRuns.cpp - Stage runs that keep less for the backward ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Three lean runs per stage. The stage's forward nodes split into units, a
/// unit starting at each expensive node (more than `kCheapFlopsPerByte` FLOPs
/// per byte of output: matmuls and convolutions, in practice). A run keeps:
/// - "cheap": the expensive nodes' outputs and the block ends, rebuilding the
///   cheap ops (elementwise, norms) between them;
/// - "every 3rd": the saved values of every third unit counted from the
///   stage's end, rebuilding the units between;
/// - "every 2nd, cheap": the values the cheap run keeps in every second unit.
/// (Every 2nd unit whole was tried too: on ResNet-50 at 30% the budget
/// search then ends at 0.35 overhead rather than 0.27.)
/// Every run keeps the stage's output, and holds a kept value that only a
/// rebuild reads from the forward pass on (counted in what it keeps). The
/// saved values a run drops form segments (runs of consecutive dropped
/// saved values); before the first backward node reading one of a segment's
/// values, the backward rebuilds the segment's values and every dropped
/// forward value they depend on.
///
//===----------------------------------------------------------------------===//

#include "Planning/Chain/LeanRuns.h"

#include "remat/Analysis/Cost.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace remat::chain {
namespace {

bool isExpensive(const problem::RematNode &node) {
  return node.bytes > 0 && overCheapFlops(node.cost, node.bytes);
}

/// The run keeping the saved nodes of `nodes` for which `keep` holds (and
/// the stage's output); nullopt when it keeps every saved node.
std::optional<LeanRun> buildRun(const problem::RematProblem &problem,
                                llvm::ArrayRef<int> nodes,
                                const StageValues &values,
                                llvm::ArrayRef<char> keep, bool outputRead,
                                std::vector<int> &stamp, int &epoch) {
  LeanRun lean;
  int first = nodes.front();
  auto kept = [&](int node) { return keep[node - first] != 0; };
  // Segments: maximal runs of dropped saved nodes.
  std::vector<std::vector<int>> dropped(1);
  for (int node : nodes) {
    if (!values.saved[node])
      continue;
    if (kept(node)) {
      lean.run.savedBytes += problem.nodes[node].bytes;
      if (!dropped.back().empty())
        dropped.emplace_back();
    } else {
      dropped.back().push_back(node);
    }
  }
  if (dropped.back().empty())
    dropped.pop_back();
  if (dropped.empty())
    return std::nullopt;
  int stage = values.stageOf[first];
  std::vector<char> heldForRebuild(nodes.size(), 0);
  // Bytes of rebuilt values: +bytes where a segment is rebuilt, -bytes
  // after the value's last backward reader (the rebuild step itself for
  // the values only the rebuild reads).
  std::vector<std::pair<int, int64_t>> changes;
  for (const std::vector<int> &segment : dropped) {
    LeanSegment rebuild;
    rebuild.before = std::numeric_limits<int>::max();
    ++epoch;
    std::vector<int> work;
    for (int node : segment) {
      rebuild.before = std::min(rebuild.before, values.firstReader[node]);
      stamp[node - first] = epoch;
      work.push_back(node);
    }
    // Every dropped value of the stage the segment depends on; the stage's
    // input and the kept values are in memory.
    while (!work.empty()) {
      int node = work.back();
      work.pop_back();
      rebuild.nodes.push_back(node);
      for (int dep : problem.nodes[node].deps) {
        if (dep < first || values.stageOf[dep] != stage)
          continue;
        // A kept value the backward does not read is held for the rebuild
        // from the forward pass on: the run keeps it too.
        if (kept(dep) && !values.saved[dep] && !heldForRebuild[dep - first]) {
          heldForRebuild[dep - first] = 1;
          lean.run.savedBytes += problem.nodes[dep].bytes;
        }
        if (kept(dep) || stamp[dep - first] == epoch)
          continue;
        stamp[dep - first] = epoch;
        work.push_back(dep);
      }
    }
    llvm::sort(rebuild.nodes);
    for (int node : rebuild.nodes) {
      int64_t bytes = problem.nodes[node].bytes;
      lean.run.extraCost += problem.nodes[node].cost;
      int last = std::max(rebuild.before, values.lastReader[node]);
      changes.push_back({rebuild.before, bytes});
      changes.push_back({last + 1, -bytes});
    }
    lean.segments.push_back(std::move(rebuild));
  }
  // What the run keeps: the saved values it keeps and those held for a
  // rebuild.
  std::vector<char> keptByRun(nodes.size(), 0);
  for (int node : nodes)
    keptByRun[node - first] =
        kept(node) && (values.saved[node] || heldForRebuild[node - first]);
  lean.run.forwardBytes =
      stageRunFootprint(problem, nodes, keptByRun, false, outputRead)
          .forwardBytes;
  lean.run.late =
      stageRunFootprint(problem, nodes, keptByRun, true, outputRead);
  // The most rebuilt bytes live at once: frees at a position before the
  // rebuilds there.
  llvm::sort(changes);
  int64_t live = 0;
  for (auto [position, bytes] : changes) {
    live += bytes;
    lean.run.extraBytes = std::max(lean.run.extraBytes, live);
  }
  return lean;
}

} // namespace

RunFootprint stageRunFootprint(const problem::RematProblem &problem,
                               llvm::ArrayRef<int> nodes,
                               llvm::ArrayRef<char> kept, bool late,
                               bool outputRead) {
  RunFootprint run;
  if (nodes.empty())
    return run;
  int first = nodes.front(), size = int(nodes.size());
  auto inStage = [&](int node) { return node >= first && node - first < size; };
  std::vector<char> keeps(kept.begin(), kept.end());
  if (late && !outputRead)
    keeps[size - 1] = 0;
  // Late, the kept values and what they depend on; early, every node.
  std::vector<char> computed(size, 1);
  if (late) {
    computed = keeps;
    for (int i = size - 1; i >= 0; --i)
      if (computed[i])
        for (int dep : problem.nodes[nodes[i]].deps)
          if (inStage(dep))
            computed[dep - first] = 1;
  }
  // Each value not kept lives until its last computed reader in the stage.
  std::vector<int> lastReader(size, -1);
  for (int i = 0; i < size; ++i)
    if (computed[i])
      for (int dep : problem.nodes[nodes[i]].deps)
        if (inStage(dep))
          lastReader[dep - first] = i;
  std::vector<int64_t> freedAfter(size, 0);
  int64_t live = 0, most = 0;
  for (int i = 0; i < size; ++i) {
    if (!computed[i])
      continue;
    const problem::RematNode &node = problem.nodes[nodes[i]];
    run.cost += node.cost;
    if (keeps[i]) {
      run.savedBytes += node.bytes;
    } else {
      live += node.bytes;
      freedAfter[std::max(i, lastReader[i])] += node.bytes;
    }
    most = std::max(most, run.savedBytes + live);
    live -= freedAfter[i];
  }
  run.forwardBytes = most - run.savedBytes;
  return run;
}

std::vector<LeanRun> leanRunsOfStage(const problem::RematProblem &problem,
                                     llvm::ArrayRef<int> nodes,
                                     const StageValues &values,
                                     bool outputRead) {
  std::vector<LeanRun> runs;
  if (nodes.empty())
    return runs;
  int size = int(nodes.size());
  // Units, numbered from the stage's last one.
  std::vector<int> unit(size);
  int numUnits = 1;
  for (int i = 0; i < size; ++i) {
    if (i > 0 && isExpensive(problem.nodes[nodes[i]]))
      ++numUnits;
    unit[i] = numUnits - 1;
  }
  for (int &u : unit)
    u = numUnits - 1 - u;
  auto cheapKept = [&](int i) {
    int node = nodes[i];
    return isExpensive(problem.nodes[node]) || values.blockEnd[node];
  };

  std::vector<int> stamp(size, 0);
  int epoch = 0;
  std::vector<char> keep(size);
  for (int rule = 0; rule < 3; ++rule) {
    for (int i = 0; i < size; ++i) {
      bool cheap = cheapKept(i);
      keep[i] = rule == 0   ? cheap
                : rule == 1 ? unit[i] % 3 == 0
                            : unit[i] % 2 == 0 && cheap;
    }
    keep[size - 1] = 1;
    std::optional<LeanRun> lean =
        buildRun(problem, nodes, values, keep, outputRead, stamp, epoch);
    if (!lean)
      continue;
    // Runs alike in every figure the DP reads are one.
    bool seen = llvm::any_of(runs, [&](const LeanRun &other) {
      return other.run.forwardBytes == lean->run.forwardBytes &&
             other.run.savedBytes == lean->run.savedBytes &&
             other.run.extraBytes == lean->run.extraBytes &&
             other.run.extraCost == lean->run.extraCost;
    });
    if (!seen)
      runs.push_back(std::move(*lean));
  }
  return runs;
}

} // namespace remat::chain

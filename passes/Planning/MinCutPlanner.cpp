//===- MinCutPlanner.cpp - The `mincut` planner ---------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--planner=mincut`: PyTorch's min-cut rematerialization partitioner
/// (functorch's `min_cut_rematerialization_partition`) over the training
/// graph's node graph (Problem/GraphProblem.h). Each forward node is split in an
/// "in" and an "out" vertex joined by its bytes; dataflow edges, the
/// backward pass's reads (to the sink) and the ops that must not be
/// recomputed (random ones, and `isExpensive` ones, from the source) are
/// infinite. The forward values whose edge the minimum cut crosses are
/// saved; every other forward value the backward pass needs is recomputed
/// once, just before the first backward op that needs it. With a budget,
/// PyTorch's memory-budget knapsack chooses which expensive values may be
/// recomputed too. The algorithm and what differs from PyTorch:
/// docs/planners.md#mincut.
///
//===----------------------------------------------------------------------===//

#include "Planning/ApBaselines.h"
#include "Planning/Problem/GraphProblem.h"
#include "Planning/MinCut/MinimumCut.h"
#include "Planning/Planners.h"

#include "remat/Analysis/Cost.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/BitVector.h"

#include <fmt/format.h>

#include <algorithm>

namespace remat::planners {
namespace {

/// The node graph with what the cut needs of it.
struct CutProblem {
  problem::GraphProblem graph;
  int numForward = 0;
  std::vector<std::vector<int>> readers;
  /// Forward nodes that must not be recomputed whatever the budget.
  llvm::BitVector random;
  /// Forward nodes PyTorch does not recompute by default (matmul, conv).
  llvm::BitVector expensive;
};

CutProblem buildCutProblem(const PlanningProblem &planning) {
  CutProblem cut{problem::buildGraphProblem(planning), 0, {}, {}, {}};
  const problem::RematProblem &problem = cut.graph.problem;
  cut.numForward = problem::numForward(problem);
  cut.readers = problem::readersOf(problem);
  cut.random.resize(cut.numForward);
  cut.expensive.resize(cut.numForward);
  for (int i = 0; i < cut.numForward; ++i) {
    const Op &op = *cut.graph.ops[i].front();
    if (op.hasFlag(OpFlagRandom))
      cut.random.set(i);
    else if (isExpensive(op))
      cut.expensive.set(i);
  }
  return cut;
}

/// The forward nodes whose in-to-out edge the minimum cut crosses, with
/// `banned` tied to the source.
llvm::BitVector savedByCut(const CutProblem &cut,
                           const llvm::BitVector &banned) {
  const problem::RematProblem &problem = cut.graph.problem;
  int numForward = cut.numForward;
  int source = 2 * numForward, sink = source + 1;
  auto in = [](int node) { return 2 * node; };
  auto out = [](int node) { return 2 * node + 1; };
  mincut::FlowNetwork network(sink + 1);
  for (int i = 0; i < numForward; ++i) {
    network.addEdge(in(i), out(i), problem.nodes[i].bytes);
    if (banned.test(i))
      network.addEdge(source, in(i), mincut::kInfinite);
    for (int dep : problem.nodes[i].deps)
      network.addEdge(out(dep), in(i), mincut::kInfinite);
    if (!cut.readers[i].empty() && cut.readers[i].back() >= numForward)
      network.addEdge(out(i), sink, mincut::kInfinite);
  }
  mincut::Cut minimum = network.minimumCut(source, sink);
  llvm::BitVector saved(numForward);
  for (int i = 0; i < numForward; ++i)
    if (minimum.sourceSide.test(in(i)) && !minimum.sourceSide.test(out(i)))
      saved.set(i);
  return saved;
}

/// What the backward pass recomputes when `saved` are kept: the copies,
/// each forward node once, before the first backward node that needs it.
struct Recomputation {
  std::vector<problem::NodeCopy> copies;
  /// By forward node: the node its copy precedes, or -1.
  std::vector<int> copiedBefore;
  int64_t cost = 0;
};

Recomputation recomputation(const CutProblem &cut,
                            const llvm::BitVector &saved) {
  const problem::RematProblem &problem = cut.graph.problem;
  int numForward = cut.numForward;
  int never = int(problem.nodes.size());
  // needBy[i]: the first backward node reading node i or a copy that reads
  // it; consumers come later in forward order, so one reverse walk.
  std::vector<int> needBy(numForward, never);
  Recomputation result;
  result.copiedBefore.assign(numForward, -1);
  for (int i = numForward - 1; i >= 0; --i) {
    for (int reader : cut.readers[i]) {
      if (reader >= numForward)
        needBy[i] = std::min(needBy[i], reader);
      else if (result.copiedBefore[reader] >= 0)
        needBy[i] = std::min(needBy[i], result.copiedBefore[reader]);
    }
    if (saved.test(i) || needBy[i] == never)
      continue;
    result.copiedBefore[i] = needBy[i];
    result.copies.push_back({needBy[i], i});
    result.cost += problem.nodes[i].cost;
  }
  return result;
}

/// The peak of the plan in the node graph's order: every value live from
/// its computation to its last reader, a recomputed one twice (up to its
/// last forward reader, then from its copy). O(nodes + edges).
int64_t estimatePeak(const CutProblem &cut, const Recomputation &plan) {
  const problem::RematProblem &problem = cut.graph.problem;
  int n = int(problem.nodes.size());
  std::vector<int64_t> delta(n + 1, 0);
  auto live = [&](int from, int until, int64_t bytes) {
    delta[from] += bytes;
    delta[std::max(from, until) + 1] -= bytes;
  };
  for (int i = 0; i < n; ++i) {
    int lastForward = i, last = i;
    for (int reader : cut.readers[i]) {
      int at = reader < cut.numForward && i < cut.numForward &&
                       plan.copiedBefore[reader] >= 0
                   ? plan.copiedBefore[reader]
                   : reader;
      last = std::max(last, at);
      if (reader < cut.numForward)
        lastForward = std::max(lastForward, reader);
    }
    if (i < cut.numForward && plan.copiedBefore[i] >= 0) {
      live(i, lastForward, problem.nodes[i].bytes);
      live(plan.copiedBefore[i], last, problem.nodes[i].bytes);
    } else {
      live(i, last, problem.nodes[i].bytes);
    }
  }
  int64_t peak = 0, bytes = 0;
  for (int t = 0; t < n; ++t)
    peak = std::max(peak, bytes += delta[t]);
  return problem.constantBytes + peak;
}

/// The plan of `recompute`, whose peak is estimated at `peak`.
RematPlan planOf(const CutProblem &cut, const Recomputation &recompute,
                 int64_t peak) {
  RematPlan plan;
  plan.modelledPeakBytes = peak;
  if (recompute.copies.empty())
    plan.plain = true;
  else
    plan.schedule = problem::stepsOfCopies(cut.graph, recompute.copies);
  return plan;
}

class MinCutPlanner : public Planner {
public:
  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    CutProblem cut = buildCutProblem(problem);
    REMAT_RETURN_IF_ERROR(problem::validateProblem(cut.graph.problem));
    // The finite capacities must sum below the infinite one; the validated
    // total bounds the sum.
    int64_t forwardBytes = 0;
    for (int i = 0; i < cut.numForward; ++i)
      forwardBytes += cut.graph.problem.nodes[i].bytes;
    // OutOfRange: a graph too large for the planner, which the budget
    // search passes over.
    if (forwardBytes >= mincut::kInfinite)
      return absl::OutOfRangeError(fmt::format(
          "mincut: the forward values' {} bytes are more than the max-flow's "
          "capacities can hold",
          forwardBytes));
    llvm::BitVector banned = cut.random;
    banned |= cut.expensive;
    llvm::BitVector saved = savedByCut(cut, banned);
    Recomputation recompute = recomputation(cut, saved);
    int64_t peak = estimatePeak(cut, recompute);
    report(problem, "default", saved, recompute, peak);
    if (!problem.budgetBytes || peak <= *problem.budgetBytes)
      return planOf(cut, recompute, peak);
    return planForBudget(problem, cut, saved, peak, *problem.budgetBytes);
  }

private:
  /// PyTorch's memory-budget knapsack over the expensive values the default
  /// cut saves: the bytes over the budget must be freed by recomputing some
  /// of them; keep saving those of most FLOPs per byte, let the others be
  /// recomputed (each assumed to free its bytes), then cut again.
  RematPlan planForBudget(const PlanningProblem &problem, const CutProblem &cut,
                          const llvm::BitVector &defaultSaved,
                          int64_t defaultPeak, int64_t budget) {
    const problem::RematProblem &nodes = cut.graph.problem;
    std::vector<int> items;
    for (int i : defaultSaved.set_bits())
      if (cut.expensive.test(i) && nodes.nodes[i].bytes > 0)
        items.push_back(i);
    // Least FLOPs per byte first (the first to recompute); cross-multiplied
    // in 128 bits. Of two tied values the later is recomputed first: its
    // copy is made later in the backward and held for less of it (on
    // ResNet-50 at half its peak, recomputing the first block's convolutions
    // brings a downsample's copy in early and the peak with it).
    llvm::sort(items, [&](int a, int b) {
      __int128 left = __int128(nodes.nodes[a].cost) * nodes.nodes[b].bytes;
      __int128 right = __int128(nodes.nodes[b].cost) * nodes.nodes[a].bytes;
      return left != right ? left < right : a > b;
    });
    llvm::BitVector banned = cut.random;
    banned |= cut.expensive;
    int64_t estimate = defaultPeak;
    for (int item : items) {
      if (estimate <= budget)
        break;
      estimate -= nodes.nodes[item].bytes;
      banned.reset(item);
    }
    llvm::BitVector saved = savedByCut(cut, banned);
    Recomputation recompute = recomputation(cut, saved);
    int64_t peak = estimatePeak(cut, recompute);
    report(problem, "knapsack", saved, recompute, peak);
    // The knapsack's cut stands even where its estimate is no lower than the
    // default's, as in PyTorch: the estimate keeps each value live over the
    // node graph's order, which the scheduled graph need not follow
    // (ResNet-50's joint graph: the default cut, estimated at 2.11 GiB, peaks
    // at 1.62 GiB built; a knapsack cut estimated as high at 1.50 GiB).
    RematPlan plan = planOf(cut, recompute, peak);
    if (peak > budget)
      plan.budgetNotes.push_back(fmt::format(
          "mincut: the knapsack's cut has an estimated peak of {}, over the "
          "budget of {}",
          formatBytes(peak), formatBytes(budget)));
    return plan;
  }

  static void report(const PlanningProblem &problem, llvm::StringRef which,
                     const llvm::BitVector &saved,
                     const Recomputation &recompute, int64_t peak) {
    if (problem.onProgress)
      problem.onProgress(fmt::format(
          "mincut: {} cut saves {} values, recomputes {} ({} FLOPs), "
          "estimated peak {}",
          which.str(), saved.count(), recompute.copies.size(), recompute.cost,
          formatBytes(peak)));
  }
};

} // namespace

void registerMinCutPlanner(PlannerRegistry &registry) {
  PlannerInfo info{.name = "mincut",
                .summary =
                    "PyTorch's min-cut partitioner: save the forward values "
                    "of a minimum cut (matmul, conv and random ops never "
                    "recomputed), recompute the rest once; with a budget, a "
                    "knapsack lets expensive ops be recomputed",
                .factory = [](std::optional<llvm::StringRef>)
                    -> absl::StatusOr<std::unique_ptr<Planner>> {
                  return std::make_unique<MinCutPlanner>();
                }};
  info.search.takesBudget = true;
  info.search.calibratedInSearch = true;
  info.search.autoCandidates = autoTriesOnce("mincut", autorank::MinCut);
  info.search.ilpWarmStarts = {"mincut"};
  registry.add(std::move(info));
}

} // namespace remat::planners

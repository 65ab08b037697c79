//===- ChainDpBench.cpp - The chain DP against chain length and slots -----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The exact chain DP (passes/Planning/Chain/) on random heterogeneous chains
/// of 50 to 400 stages, the budget at half of keeping everything, cut into 10
/// to 1000 slots. Reports the table's cells and the schedule's length;
/// docs/planning-chain.md quotes the figures. Nothing here asserts a time.
///
//===----------------------------------------------------------------------===//

#include "Planning/Chain/ChainDp.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <random>

namespace remat::chain {
namespace {

/// A chain like the unit tests' random ones, sizes in KiB; the budget is
/// half of the constants plus every stage's output and saved bytes.
ChainProblem randomChain(int numStages) {
  std::mt19937 rng(numStages);
  auto draw = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  ChainProblem problem;
  problem.constantBytes = 1024 * draw(1, 64);
  int64_t total = problem.constantBytes;
  for (int i = 0; i < numStages; ++i) {
    ChainStage stage{draw(1, 100), draw(1, 200), 1024 * draw(1, 64),
                     1024 * draw(0, 128), 1024 * draw(1, 64)};
    total += stage.outputBytes + stage.savedBytes;
    problem.stages.push_back(stage);
  }
  problem.budgetBytes = total / 2;
  return problem;
}

void BM_ChainDp(benchmark::State &state) {
  ChainProblem problem = randomChain(int(state.range(0)));
  DpOptions options;
  options.maxSlots = state.range(1);
  options.maxCells = int64_t(1) << 28;
  ChainResult result;
  for (auto _ : state) {
    absl::StatusOr<ChainResult> solved = solveChainDp(problem, options);
    if (!solved.ok()) {
      state.SkipWithError(std::string(solved.status().message()).c_str());
      return;
    }
    result = *solved;
  }
  int64_t slots = (problem.budgetBytes - problem.constantBytes) /
                  result.slotBytes;
  int64_t n = int64_t(problem.stages.size());
  state.counters["slots"] = double(slots);
  state.counters["cells"] = double((n * (n + 1) / 2 + n + 1) * 12 * (slots + 1));
  state.counters["ops"] = double(result.schedule.ops.size());
  state.counters["overhead"] =
      result.status == ChainStatusKind::Optimal
          ? double(result.cost.recomputeCost) /
                double(result.cost.cost - result.cost.recomputeCost)
          : -1.0;
}

BENCHMARK(BM_ChainDp)
    ->ArgsProduct({{50, 100, 200, 400}, {10, 100}})
    ->Args({50, 1000})
    ->Args({100, 1000})
    ->Unit(benchmark::kMillisecond);

} // namespace
} // namespace remat::chain

BENCHMARK_MAIN();

//===- ChainLeanRunsTest.cpp - Lean stage runs in the chain DP ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Lean runs (a forward run of a stage keeping less, its backward rebuilding
/// the rest): a hand-derived one-stage chain, the DP against an exhaustive
/// search over every order of chain ops, runs and frees, and the runs
/// `leanRunsOfStage` builds on a hand-made graph. Executor-measured peaks
/// and bitwise gradients of plans using them are in BudgetTest.cpp.
///
//===----------------------------------------------------------------------===//

#include "Planning/Chain/ChainDp.h"
#include "Planning/Chain/LeanRuns.h"

#include <gtest/gtest.h>

#include <limits>
#include <queue>
#include <random>

namespace remat::chain {
namespace {

/// Solves and checks what the DP promises: the schedule's exact cost is the
/// optimum and its peak is within the budget (`solveChainDp` re-evaluates
/// it), and it does so again here.
ChainResult solveLean(const ChainProblem &problem) {
  absl::StatusOr<ChainResult> result = solveChainDp(problem);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok())
    return {};
  if (result->status == ChainStatusKind::Optimal) {
    absl::StatusOr<ChainCost> cost =
        evaluateChainSchedule(problem, result->schedule);
    EXPECT_TRUE(cost.ok()) << cost.status();
    if (cost.ok()) {
      EXPECT_EQ(cost->cost, result->cost.cost);
      EXPECT_LE(cost->peakBytes, problem.budgetBytes);
    }
  }
  return *result;
}

/// The least cost over every sequence of chain ops (any forward with any
/// run whenever its input is in memory, outputs from held runs, backwards
/// in order) and frees at any time, by Dijkstra; nullopt when nothing fits.
/// A state: per stage the run held (0: none), whether its output and the
/// gradient of its input are held, and the backwards done. Packed in four
/// bits a stage (run in two, output, gradient) with the backwards done
/// above them, so that a flat table of at most 2^19 costs indexes it: a
/// search per budget of the random test, hundreds of them, stays cheap under
/// sanitizers.
std::optional<int64_t> exhaustiveOptimum(const ChainProblem &chain) {
  int n = int(chain.stages.size());
  EXPECT_LE(n, 4);
  for (const ChainStage &stage : chain.stages)
    EXPECT_LE(stage.leanRuns.size(), 2u);
  using State = uint32_t;
  auto runOf = [](State state, int i) { return int(state >> 4 * i & 3); };
  auto outputOf = [](State state, int i) { return state >> (4 * i + 2) & 1; };
  auto gradientOf = [](State state, int i) { return state >> (4 * i + 3) & 1; };
  auto doneOf = [n](State state) { return int(state >> 4 * n); };
  // Backward i+1 has run: a run of stage i is late, or held as one.
  auto isLate = [&](State state, int i) {
    return i + 1 < n && i + 1 >= n - doneOf(state);
  };
  // Run r (1 full, 2.. lean) of stage i, early or late.
  auto footprint = [&](int i, int run, bool late) {
    const ChainStage &stage = chain.stages[i];
    const StageRun *lean = run > 1 ? &stage.leanRuns[run - 2] : nullptr;
    const std::optional<RunFootprint> &asLate = lean ? lean->late : stage.late;
    if (late && asLate)
      return *asLate;
    return lean ? RunFootprint{lean->savedBytes, lean->forwardBytes,
                               stage.forwardCost}
                : RunFootprint{stage.savedBytes, stage.forwardTempBytes,
                               stage.forwardCost};
  };
  auto bytesOf = [&](State state) {
    int64_t total = chain.constantBytes;
    for (int i = 0; i < n; ++i) {
      const ChainStage &stage = chain.stages[i];
      if (int run = runOf(state, i))
        total += footprint(i, run, isLate(state, i)).savedBytes;
      total += outputOf(state, i) ? stage.outputBytes : 0;
      total += gradientOf(state, i) ? stage.gradientBytes : 0;
    }
    return total;
  };
  constexpr int64_t kUnseen = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> best(size_t(n + 1) << 4 * n, kUnseen);
  using Entry = std::pair<int64_t, State>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  auto push = [&](int64_t cost, State state) {
    if (best[state] <= cost)
      return;
    best[state] = cost;
    queue.push({cost, state});
  };
  push(0, 0);
  while (!queue.empty()) {
    auto [cost, state] = queue.top();
    queue.pop();
    if (best[state] < cost)
      continue;
    int done = doneOf(state);
    if (done == n)
      return cost;
    int64_t live = bytesOf(state);
    auto inputHeld = [&](int i) { return i == 0 || outputOf(state, i - 1); };
    // Frees: a run, an output or a gradient.
    for (int i = 0; i < n; ++i)
      for (State field : {State(3), State(4), State(8)})
        if (state & field << 4 * i)
          push(cost, state & ~(field << 4 * i));
    for (int i = 0; i < n; ++i) {
      const ChainStage &stage = chain.stages[i];
      if (!runOf(state, i) && inputHeld(i))
        for (int run = 1; run <= int(stage.leanRuns.size()) + 1; ++run) {
          State next = state | State(run) << 4 * i;
          RunFootprint forward = footprint(i, run, isLate(state, i));
          if (bytesOf(next) + forward.forwardBytes <= chain.budgetBytes)
            push(cost + forward.cost, next);
        }
      // Output i has no reader left after backward i+1.
      if (runOf(state, i) && i + 1 < n && !outputOf(state, i) &&
          !isLate(state, i) && live + stage.outputBytes <= chain.budgetBytes)
        push(cost, state | State(4) << 4 * i);
    }
    int i = n - 1 - done;
    const ChainStage &stage = chain.stages[i];
    int run = runOf(state, i);
    bool incoming = i + 1 == n || gradientOf(state, i + 1);
    if (run && inputHeld(i) && incoming && !gradientOf(state, i)) {
      const StageRun *lean = run > 1 ? &stage.leanRuns[run - 2] : nullptr;
      int64_t extraBytes = lean ? lean->extraBytes : 0;
      int64_t extraCost = lean ? lean->extraCost : 0;
      if (live + stage.gradientBytes + extraBytes <= chain.budgetBytes)
        push(cost + stage.backwardCost + extraCost,
             (state | State(8) << 4 * i) + (State(1) << 4 * n));
    }
  }
  return std::nullopt;
}

/// A random chain for the exhaustive tests: 1 to 4 stages of small sizes,
/// one or two lean runs each when `lean`, and with `late` temporaries and
/// late runs within the runs they belong to. `everything` is a budget that
/// keeps all.
struct RandomChain {
  ChainProblem problem;
  int64_t everything = 0;
};

RandomChain randomChain(std::mt19937 &rng, int numStages, bool lean,
                        bool late) {
  auto draw = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  // A late run keeping at most `saved` bytes, holding at most the run's
  // `saved + forward` while it runs, costing at most `cost`.
  auto lateWithin = [&](int64_t saved, int64_t forward, int64_t cost) {
    int64_t lateSaved = draw(0, saved);
    return RunFootprint{lateSaved, draw(0, saved + forward - lateSaved),
                        draw(0, cost)};
  };
  RandomChain chain;
  chain.problem.constantBytes = draw(0, 2);
  chain.everything = chain.problem.constantBytes;
  for (int i = 0; i < numStages; ++i) {
    ChainStage stage{draw(1, 6), draw(1, 6), draw(1, 3), draw(2, 6),
                     draw(1, 3)};
    if (late) {
      stage.forwardTempBytes = draw(0, 3);
      stage.late = lateWithin(stage.savedBytes, stage.forwardTempBytes,
                              stage.forwardCost);
    }
    for (int r = 0, e = lean ? int(draw(1, 2)) : 0; r < e; ++r) {
      StageRun run{draw(0, stage.savedBytes - 1), draw(0, 3), draw(1, 6),
                   draw(0, 2)};
      if (late)
        run.late =
            lateWithin(run.savedBytes, run.forwardBytes, stage.forwardCost);
      stage.leanRuns.push_back(run);
    }
    chain.everything +=
        stage.savedBytes + stage.outputBytes + stage.gradientBytes;
    if (late)
      chain.everything += stage.forwardTempBytes + 3;
    chain.problem.stages.push_back(stage);
  }
  return chain;
}

/// `result` against the exhaustive optimum of `problem`: infeasible where
/// it is, never below it. Returns whether both are feasible, counting such
/// cases in `cases` and those at the optimum in `equal`.
bool againstExhaustive(const ChainProblem &problem, const ChainResult &result,
                       int &cases, int &equal) {
  std::optional<int64_t> expected = exhaustiveOptimum(problem);
  if (!expected) {
    EXPECT_EQ(result.status, ChainStatusKind::Infeasible);
    return false;
  }
  if (result.status != ChainStatusKind::Optimal)
    return false;
  ++cases;
  EXPECT_GE(result.cost.cost, *expected);
  equal += result.cost.cost == *expected;
  return true;
}

// One stage: forward 2 FLOPs keeping 4 bytes, backward 5 FLOPs adding a
// 1-byte gradient. Kept whole: peak 4 + 1 = 5, cost 7. The lean run keeps 1
// byte and its backward rebuilds 2 bytes for 3 FLOPs: peak 1 + 2 + 1 = 4,
// cost 2 + 5 + 3 = 10. Nothing fits in 3.
TEST(ChainLeanRunsTest, OneStageHandDerived) {
  ChainProblem problem;
  problem.stages.push_back({2, 5, 0, 4, 1, 0, {{1, 2, 3}}});
  problem.budgetBytes = 5;
  ChainResult whole = solveLean(problem);
  ASSERT_EQ(whole.status, ChainStatusKind::Optimal);
  EXPECT_EQ(whole.cost.cost, 7);
  EXPECT_EQ(whole.schedule.ops.front().run, 0);
  problem.budgetBytes = 4;
  ChainResult lean = solveLean(problem);
  ASSERT_EQ(lean.status, ChainStatusKind::Optimal);
  EXPECT_EQ(lean.cost.cost, 10);
  EXPECT_EQ(lean.cost.peakBytes, 4);
  EXPECT_EQ(lean.schedule.ops.front().run, 1);
  problem.budgetBytes = 3;
  EXPECT_EQ(solveLean(problem).status, ChainStatusKind::Infeasible);
}

// Random chains of 1 to 4 stages with one or two lean runs each, at every
// budget from infeasible to keeping everything. The DP's schedules are
// valid, so never below the exhaustive optimum; the DP uses a lean run only
// for a backward it runs itself (not for one it leaves to the caller), so it
// may be above it, rarely (equal in 533 of the 556 feasible cases, 193 of
// them using a lean run). Lean runs never cost more than none.
TEST(ChainLeanRunsTest, RandomChainsAgainstExhaustiveSearch) {
  std::mt19937 rng(11);
  int cases = 0, equal = 0, usingLean = 0;
  for (int trial = 0; trial < 40; ++trial) {
    auto [problem, everything] =
        randomChain(rng, 1 + trial % 4, /*lean=*/true, /*late=*/false);
    ChainProblem plain = problem;
    for (ChainStage &stage : plain.stages)
      stage.leanRuns.clear();
    for (int64_t budget = 1; budget <= everything; ++budget) {
      SCOPED_TRACE(::testing::Message()
                   << "trial " << trial << " budget " << budget);
      problem.budgetBytes = plain.budgetBytes = budget;
      ChainResult result = solveLean(problem);
      ChainResult withoutLean = solveLean(plain);
      if (withoutLean.status == ChainStatusKind::Optimal) {
        ASSERT_EQ(result.status, ChainStatusKind::Optimal);
        EXPECT_LE(result.cost.cost, withoutLean.cost.cost);
      }
      if (!againstExhaustive(problem, result, cases, equal))
        continue;
      usingLean += llvm::any_of(result.schedule.ops,
                                [](const ChainOp &op) { return op.run > 0; });
    }
  }
  EXPECT_GE(cases, 200);
  EXPECT_GE(usingLean, cases / 4);
  EXPECT_GE(equal * 10, cases * 9) << equal << " of " << cases;
}

// Random chains whose runs hold temporaries and whose late runs keep, hold
// and cost less (docs/planning-chain.md#late-runs), with and without lean
// runs: the DP's schedules are valid by the exact accounting (checked in
// `solveLean`) and never below the exhaustive optimum, which counts a run
// of stage i held past backward i+1 at its late size.
TEST(ChainLeanRunsTest, RandomChainsWithLateRunsAgainstExhaustiveSearch) {
  std::mt19937 rng(29);
  int cases = 0, equal = 0, usingLate = 0;
  for (int trial = 0; trial < 40; ++trial) {
    int numStages = 1 + trial % 4;
    auto [problem, everything] =
        randomChain(rng, numStages, /*lean=*/trial % 2 != 0, /*late=*/true);
    for (int64_t budget = 1; budget <= everything; ++budget) {
      SCOPED_TRACE(::testing::Message()
                   << "trial " << trial << " budget " << budget);
      problem.budgetBytes = budget;
      ChainResult result = solveLean(problem);
      if (!againstExhaustive(problem, result, cases, equal))
        continue;
      // A forward run after the backward of the next stage.
      int nextBackward = numStages - 1;
      bool late = false;
      for (const ChainOp &op : result.schedule.ops) {
        nextBackward -= op.kind == ChainOpKind::Backward;
        late |= op.kind == ChainOpKind::Forward && op.stage + 1 < numStages &&
                nextBackward <= op.stage;
      }
      usingLate += late;
    }
  }
  EXPECT_GE(cases, 200);
  EXPECT_GE(usingLate, cases / 3);
  EXPECT_GE(equal * 10, cases * 9) << equal << " of " << cases;
}

// A stage like an MLP layer: matmul 0 (100 FLOPs, 4 bytes) of the stage's
// input, bias add 1 (1 FLOP, 4 bytes), relu 2 (1 FLOP, 4 bytes), the output
// and the only value kept. Early, the add's step holds the matmul and the
// add (8 bytes), the relu's the add and the relu (8): 4 over the 4 kept.
// Late, with the output read by no backward, nothing is kept or computed;
// with it read, the late run is the run.
TEST(ChainLeanRunsTest, FootprintsOfALayer) {
  problem::RematProblem problem;
  problem.nodes = {{100, 4, {}, false}, {1, 4, {0}, false}, {1, 4, {1}, false}};
  std::vector<char> kept = {0, 0, 1};
  auto same = [](const RunFootprint &a, const RunFootprint &b) {
    return a.savedBytes == b.savedBytes && a.forwardBytes == b.forwardBytes &&
           a.cost == b.cost;
  };
  EXPECT_TRUE(same(stageRunFootprint(problem, {0, 1, 2}, kept, false, false),
                   {4, 4, 102}));
  EXPECT_TRUE(same(stageRunFootprint(problem, {0, 1, 2}, kept, true, false),
                   {0, 0, 0}));
  EXPECT_TRUE(same(stageRunFootprint(problem, {0, 1, 2}, kept, true, true),
                   {4, 4, 102}));
  // A branch only the output reads: conv 0 (10 FLOPs, 4 bytes, kept), conv
  // 1 of 0 (10, 8 bytes), the output 2 = add(1, 0) (1, 8 bytes, kept).
  // Early: at the add, 4 + 8 kept and 8 of conv 1: 8 over 12, 21 FLOPs.
  // Late: conv 0 alone.
  problem.nodes = {
      {10, 4, {}, false}, {10, 8, {0}, false}, {1, 8, {1, 0}, false}};
  kept = {1, 0, 1};
  EXPECT_TRUE(same(stageRunFootprint(problem, {0, 1, 2}, kept, false, false),
                   {12, 8, 21}));
  EXPECT_TRUE(same(stageRunFootprint(problem, {0, 1, 2}, kept, true, false),
                   {4, 0, 10}));
}

// Forward nodes: 0 = matmul (100 FLOPs, 4 bytes), 1 = relu of 0, 2 = matmul
// of 1, 3 = relu of 2, the stage's output (1 FLOP each); the backward nodes
// 4, 5, 6 read 3, 2 and 1, and 7 reads 0. Units start at each matmul:
// {0, 1} and {2, 3}, numbered 1 and 0 from the end.
// - cheap keeps the matmuls and the output, drops 1: its segment rebuilds
//   relu 1 from matmul 0 before node 6, its first reader: 1 FLOP, 4 bytes;
//   in the forward pass 1 lives until matmul 2 reads it: 4 bytes.
// - every 3rd keeps unit 0 ({2, 3}), drops 0 and 1: rebuilt before node 6
//   (the first reader of 1), 101 FLOPs, 8 bytes; both live at node 1 of
//   the forward pass: 8 bytes.
// - every 2nd and cheap keeps what every 3rd keeps: merged.
TEST(ChainLeanRunsTest, RunsOfAHandMadeStage) {
  problem::RematProblem problem;
  auto node = [&](int64_t cost, int64_t bytes, llvm::SmallVector<int, 2> deps,
                  bool backward) {
    problem.nodes.push_back({cost, bytes, std::move(deps), backward});
  };
  node(100, 4, {}, false);
  node(1, 4, {0}, false);
  node(100, 4, {1}, false);
  node(1, 4, {2}, false);
  node(1, 4, {3}, true);
  node(1, 4, {4, 2}, true);
  node(1, 4, {5, 1}, true);
  node(1, 4, {6, 0}, true);
  std::vector<int> stageOf = {0, 0, 0, 0};
  std::vector<char> saved = {1, 1, 1, 1};
  std::vector<char> blockEnd = {0, 0, 0, 1};
  std::vector<int> firstReader = {7, 6, 5, 4}, lastReader = firstReader;
  std::vector<int> lastForwardReader = {1, 2, 3, -1};
  std::vector<LeanRun> runs = leanRunsOfStage(
      problem, {0, 1, 2, 3},
      {stageOf, saved, blockEnd, firstReader, lastReader, lastForwardReader},
      /*outputRead=*/true);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run.savedBytes, 12);
  EXPECT_EQ(runs[0].run.extraBytes, 4);
  EXPECT_EQ(runs[0].run.extraCost, 1);
  EXPECT_EQ(runs[0].run.forwardBytes, 0);
  ASSERT_EQ(runs[0].segments.size(), 1u);
  EXPECT_EQ(runs[0].segments[0].before, 6);
  EXPECT_EQ(runs[0].segments[0].nodes, (std::vector<int>{1}));
  EXPECT_EQ(runs[1].run.savedBytes, 8);
  EXPECT_EQ(runs[1].run.extraBytes, 8);
  EXPECT_EQ(runs[1].run.extraCost, 101);
  EXPECT_EQ(runs[1].run.forwardBytes, 0);
  ASSERT_EQ(runs[1].segments.size(), 1u);
  EXPECT_EQ(runs[1].segments[0].before, 6);
  EXPECT_EQ(runs[1].segments[0].nodes, (std::vector<int>{0, 1}));

  // Were matmul 0 read by no backward node, the cheap run would still hold
  // it from the forward pass on for relu 1's rebuild: 12 bytes kept.
  saved[0] = 0;
  runs = leanRunsOfStage(
      problem, {0, 1, 2, 3},
      {stageOf, saved, blockEnd, firstReader, lastReader, lastForwardReader},
      /*outputRead=*/true);
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs[0].run.savedBytes, 12);
  EXPECT_EQ(runs[0].segments[0].nodes, (std::vector<int>{1}));
}

} // namespace
} // namespace remat::chain

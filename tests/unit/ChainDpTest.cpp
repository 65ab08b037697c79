//===- ChainDpTest.cpp - The exact chain DP against the ILP and search ----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The chain DP's optimum against hand-derived optima, the Checkmate MILP on
/// the chain's DAG, and an exhaustive search over every order of
/// computations and frees written here; every DP schedule through
/// `problem::checkSchedule`.
///
//===----------------------------------------------------------------------===//

#include "Planning/ApBaselines.h"
#include "Planning/Chain/ChainDp.h"
#include "Planning/Ilp/CheckmateIlp.h"

#include "llvm/ADT/DenseMap.h"

#include <gtest/gtest.h>

#include <queue>
#include <random>

namespace remat::chain {
namespace {

/// A chain of `n` identical stages: one FLOP each way, one byte for every
/// output, saved set and gradient.
ChainProblem uniformChain(int n) {
  ChainProblem problem;
  problem.stages.assign(n, ChainStage{1, 1, 1, 1, 1});
  return problem;
}

/// Solves with exact slots and checks what every result promises: the
/// schedule passes the ILP core's checker on the chain's DAG, within the
/// budget, with the cost and peak the DP reports.
ChainResult solve(const ChainProblem &problem, DpOptions options = {}) {
  absl::StatusOr<ChainResult> result = solveChainDp(problem, options);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok())
    return {};
  if (result->status == ChainStatusKind::Optimal) {
    absl::StatusOr<problem::RematSchedule> rs =
        toRematSchedule(problem, result->schedule);
    EXPECT_TRUE(rs.ok()) << rs.status();
    if (rs.ok()) {
      absl::StatusOr<problem::ScheduleCost> cost =
          problem::checkSchedule(toRematProblem(problem), *rs);
      EXPECT_TRUE(cost.ok()) << cost.status();
      if (cost.ok()) {
        EXPECT_EQ(cost->cost, result->cost.cost);
        EXPECT_EQ(cost->recomputeCost, result->cost.recomputeCost);
        EXPECT_EQ(cost->peakBytes, result->cost.peakBytes);
      }
    }
    EXPECT_LE(result->cost.peakBytes, problem.budgetBytes);
  }
  return *result;
}

/// How many times the schedule runs stage `stage`'s forward.
int forwardRuns(const ChainSchedule &schedule, int stage) {
  int count = 0;
  for (const ChainOp &op : schedule.ops)
    count += op.kind == ChainOpKind::Forward && op.stage == stage;
  return count;
}

/// The least total cost over every sequence of computations and frees of
/// the chain's DAG (backwards once each, in order; any forward node any
/// time its inputs are in memory), by Dijkstra over (nodes in memory,
/// backwards done). Freer than Checkmate's stages: no index order, frees at
/// any time, but for frees that leave no way to finish (below). nullopt
/// when nothing fits.
std::optional<int64_t> pebbleOptimum(const ChainProblem &chain) {
  problem::RematProblem dag = toRematProblem(chain);
  int n = int(dag.nodes.size());
  EXPECT_LE(n, 26);
  // Backwards and parameter gradients' nodes, made once each, in order.
  int numBackward = int(llvm::count_if(
      dag.nodes, [](const problem::RematNode &node) { return node.backward; }));
  std::vector<uint32_t> deps(n, 0);
  for (int k = 0; k < n; ++k)
    for (int dep : dag.nodes[k].deps)
      deps[k] |= 1u << dep;
  // A node made once (a backward, parameter gradients) and freed before
  // its last reader is made leaves that reader unmakeable: such frees lead
  // to no schedule, so they are not searched, which leaves the optimum as
  // it is. Searched, they would multiply the states visited by up to 2 per
  // node held (parameter gradients stay to the end).
  std::vector<int> lastReader(n, -1);
  for (int k = 0; k < n; ++k)
    for (int dep : dag.nodes[k].deps)
      lastReader[dep] = std::max(lastReader[dep], k);
  auto bytesOf = [&](uint32_t set) {
    int64_t total = dag.constantBytes;
    for (int i = 0; i < n; ++i)
      if (set >> i & 1)
        total += dag.nodes[i].bytes;
    return total;
  };
  // State: live set in the low bits, backwards done above them.
  using State = uint64_t;
  auto pack = [n](uint32_t live, int done) {
    return State(live) | State(done) << n;
  };
  // An open-addressing map: node-based maps are slow under sanitizers.
  llvm::DenseMap<State, int64_t> best;
  using Entry = std::pair<int64_t, State>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  auto push = [&](int64_t cost, State state) {
    auto [it, inserted] = best.try_emplace(state, cost);
    if (!inserted && it->second <= cost)
      return;
    it->second = cost;
    queue.push({cost, state});
  };
  push(0, pack(0, 0));
  int firstBackward = n - numBackward;
  while (!queue.empty()) {
    auto [cost, state] = queue.top();
    queue.pop();
    if (best.lookup(state) < cost)
      continue;
    uint32_t live = uint32_t(state & ((State(1) << n) - 1));
    int done = int(state >> n);
    if (done == numBackward)
      return cost;
    int64_t liveBytes = bytesOf(live);
    for (int i = 0; i < n; ++i)
      if (live >> i & 1 &&
          !(i >= firstBackward && lastReader[i] >= firstBackward + done))
        push(cost, pack(live & ~(1u << i), done));
    for (int k = 0; k < firstBackward + done + 1 && k < n; ++k) {
      if (live >> k & 1 || (k >= firstBackward && k != firstBackward + done))
        continue;
      if ((deps[k] & live) != deps[k] ||
          liveBytes + dag.nodes[k].bytes > dag.budgetBytes)
        continue;
      push(cost + dag.nodes[k].cost,
           pack(live | 1u << k, done + (k >= firstBackward)));
    }
  }
  return std::nullopt;
}

/// A random heterogeneous chain.
ChainProblem randomChain(std::mt19937 &rng, int numStages) {
  auto draw = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  ChainProblem problem;
  problem.constantBytes = draw(0, 3);
  for (int i = 0; i < numStages; ++i)
    problem.stages.push_back(
        {draw(1, 9), draw(1, 9), draw(1, 6), draw(0, 6), draw(1, 6)});
  return problem;
}

/// A random chain whose backwards make 0 to 4 bytes of parameter gradients.
ChainProblem randomChainWithParamGradients(std::mt19937 &rng, int numStages) {
  ChainProblem problem = randomChain(rng, numStages);
  for (ChainStage &stage : problem.stages)
    stage.paramGradientBytes = std::uniform_int_distribution<int>(0, 4)(rng);
  return problem;
}

/// Budgets from one byte under what the largest single op needs (certainly
/// infeasible) to the peak of keeping everything (certainly feasible): both
/// bounds computed on the DAG, without the DP.
std::vector<int64_t> budgetsToTry(const ChainProblem &chain, int count) {
  problem::RematProblem dag = toRematProblem(chain);
  int64_t smallest = 0;
  for (const problem::RematNode &node : dag.nodes) {
    int64_t need = dag.constantBytes + node.bytes;
    for (int dep : node.deps)
      need += dag.nodes[dep].bytes;
    smallest = std::max(smallest, need);
  }
  absl::StatusOr<problem::ScheduleCost> keepAll =
      problem::evaluateSchedule(dag, problem::keepAllSchedule(dag));
  EXPECT_TRUE(keepAll.ok()) << keepAll.status();
  std::vector<int64_t> budgets = {smallest - 1};
  for (int i = 0; i < count; ++i)
    budgets.push_back(smallest +
                      (keepAll->peakBytes - smallest) * i / (count - 1));
  return budgets;
}

} // namespace

// Three one-byte stages: nodes h0 f0 h1 f1 h2 b2 b1 b0 (Forward, Output,
// Backward; docs/planning-chain.md). b1 reads b2, h1 and f0 and adds its own
// byte: 4 bytes, so 3 is infeasible. In 5 bytes h0 and h1 stay through b2
// (h0 h1 h2 f1 b2): no recomputation, 3 forwards + 3 backwards = 6. In 4 the
// b1 step leaves no byte spare, so h0 (kept through b2 as the one spare
// byte) must give f0 and go before b1, and h1 must be run again: 8.
TEST(ChainDpTest, ThreeStagesHandDerived) {
  ChainProblem problem = uniformChain(3);
  problem.budgetBytes = 5;
  ChainResult roomy = solve(problem);
  EXPECT_EQ(roomy.status, ChainStatusKind::Optimal);
  EXPECT_EQ(roomy.cost.cost, 6);
  EXPECT_EQ(roomy.cost.recomputeCost, 0);
  EXPECT_EQ(roomy.cost.peakBytes, 5);

  problem.budgetBytes = 4;
  ChainResult tight = solve(problem);
  EXPECT_EQ(tight.status, ChainStatusKind::Optimal);
  EXPECT_EQ(tight.cost.cost, 8);
  EXPECT_EQ(forwardRuns(tight.schedule, 0), 2);
  EXPECT_EQ(forwardRuns(tight.schedule, 1), 2);
  EXPECT_EQ(forwardRuns(tight.schedule, 2), 1);

  problem.budgetBytes = 3;
  EXPECT_EQ(solve(problem).status, ChainStatusKind::Infeasible);
  problem.constantBytes = 4;
  problem.budgetBytes = 3;
  EXPECT_EQ(solve(problem).status, ChainStatusKind::Infeasible);
}

// Two one-byte stages whose first stage's backward makes 2 bytes of
// parameter gradients: nodes h0 f0 h1 b1 b0. Kept whole, the b1 step holds
// h0 f0 h1 b1 (4 bytes) and the b0 step h0 b1 b0 and the 2 gradient bytes
// (5): no recomputation, cost 4, in 5 bytes. Counted as constants from the
// start, the same 2 bytes would make the b1 step 6; in 5 bytes h0 must go
// before b1 (f0 h1 b1 + 2) and be run again for b0 (b1 h0 b0 + 2): cost 5.
// Nothing fits in 4, as the b0 step needs 5 either way.
TEST(ChainDpTest, ParamGradientsCountFromTheirBackward) {
  ChainProblem problem = uniformChain(2);
  problem.stages[0].paramGradientBytes = 2;
  problem.budgetBytes = 5;
  ChainResult late = solve(problem);
  ASSERT_EQ(late.status, ChainStatusKind::Optimal);
  EXPECT_EQ(late.cost.cost, 4);
  EXPECT_EQ(late.cost.recomputeCost, 0);
  EXPECT_EQ(late.cost.peakBytes, 5);
  EXPECT_EQ(pebbleOptimum(problem), 4);

  ChainProblem constant = uniformChain(2);
  constant.constantBytes = 2;
  constant.budgetBytes = 5;
  ChainResult early = solve(constant);
  ASSERT_EQ(early.status, ChainStatusKind::Optimal);
  EXPECT_EQ(early.cost.cost, 5);
  EXPECT_EQ(forwardRuns(early.schedule, 0), 2);

  problem.budgetBytes = 4;
  EXPECT_EQ(solve(problem).status, ChainStatusKind::Infeasible);
  EXPECT_EQ(pebbleOptimum(problem), std::nullopt);
}

// Four one-byte stages in 4 bytes: the b2 and b1 steps (incoming gradient,
// saved, input, result) fill the budget, so nothing else survives them. b1
// then needs h1 and f0 rebuilt from the chain's input (forwards 0 and 1
// again), b0 needs h0 again (forward 0 a third time: Revolve's nested
// sweeps), and b2 needs at least one forward again: the b3 step (h3 f2 b3)
// leaves one spare byte, and whichever value it keeps, h2 or f1 has to be
// rebuilt. 8 + 2 + 1 + 1 = 12.
TEST(ChainDpTest, FourStagesRunStageZeroThreeTimes) {
  ChainProblem problem = uniformChain(4);
  problem.budgetBytes = 4;
  ChainResult result = solve(problem);
  EXPECT_EQ(result.status, ChainStatusKind::Optimal);
  EXPECT_EQ(result.cost.cost, 12);
  EXPECT_EQ(forwardRuns(result.schedule, 0), 3);
  EXPECT_EQ(pebbleOptimum(problem), 12);
}

// On uniform chains of up to 5 stages, at budgets from infeasible to keeping
// everything, the DP finds what exhaustive search finds.
TEST(ChainDpTest, UniformChainsMatchExhaustiveSearch) {
  int recomputing = 0;
  for (int n = 1; n <= 5; ++n) {
    ChainProblem problem = uniformChain(n);
    for (int64_t budget : budgetsToTry(problem, 6)) {
      SCOPED_TRACE(::testing::Message() << n << " stages, budget " << budget);
      problem.budgetBytes = budget;
      std::optional<int64_t> expected = pebbleOptimum(problem);
      ChainResult result = solve(problem);
      ASSERT_EQ(result.status == ChainStatusKind::Optimal,
                expected.has_value());
      if (expected) {
        EXPECT_EQ(result.cost.cost, *expected);
      }
      recomputing += result.cost.recomputeCost > 0;
    }
  }
  EXPECT_GE(recomputing, 8);
}

// Random heterogeneous chains of 1 to 5 stages at 5 budgets each. The DP's
// schedules are valid (solve checks them), so it can never beat exhaustive
// search; it matches it except where the optimum drops a checkpoint before
// its last reader and rebuilds it later, which the DP does not search
// (docs/planning-chain.md): one case of these 250, KnownGap below.
TEST(ChainDpTest, RandomChainsAgainstExhaustiveSearch) {
  std::mt19937 rng(2019);
  int infeasible = 0, recomputing = 0, worse = 0;
  double worstGap = 0;
  for (int trial = 0; trial < 50; ++trial) {
    ChainProblem problem = randomChain(rng, 1 + trial % 5);
    for (int64_t budget : budgetsToTry(problem, 4)) {
      SCOPED_TRACE(::testing::Message()
                   << "trial " << trial << " budget " << budget);
      problem.budgetBytes = budget;
      std::optional<int64_t> expected = pebbleOptimum(problem);
      ChainResult result = solve(problem);
      if (!expected) {
        ++infeasible;
        EXPECT_EQ(result.status, ChainStatusKind::Infeasible);
        continue;
      }
      ASSERT_EQ(result.status, ChainStatusKind::Optimal);
      EXPECT_GE(result.cost.cost, *expected);
      if (result.cost.cost > *expected) {
        ++worse;
        worstGap = std::max(worstGap, double(result.cost.cost - *expected) /
                                          double(*expected));
      }
      recomputing += result.cost.recomputeCost > 0;
    }
  }
  EXPECT_GE(infeasible, 50);
  EXPECT_GE(recomputing, 20);
  EXPECT_LE(worse, 1);
  EXPECT_LE(worstGap, 0.11);
}

// RandomChainsAgainstExhaustiveSearch with parameter gradients, which each
// backward adds for the rest of the schedule: the DP's subproblems count
// those of later stages as taken and their own as they make them.
TEST(ChainDpTest, RandomChainsWithParamGradientsAgainstExhaustiveSearch) {
  std::mt19937 rng(2020);
  int infeasible = 0, recomputing = 0, worse = 0, total = 0;
  for (int trial = 0; trial < 50; ++trial) {
    ChainProblem problem = randomChainWithParamGradients(rng, 1 + trial % 5);
    for (int64_t budget : budgetsToTry(problem, 4)) {
      SCOPED_TRACE(::testing::Message()
                   << "trial " << trial << " budget " << budget);
      problem.budgetBytes = budget;
      std::optional<int64_t> expected = pebbleOptimum(problem);
      ChainResult result = solve(problem);
      ++total;
      if (!expected) {
        ++infeasible;
        EXPECT_EQ(result.status, ChainStatusKind::Infeasible);
        continue;
      }
      ASSERT_EQ(result.status, ChainStatusKind::Optimal);
      EXPECT_GE(result.cost.cost, *expected);
      worse += result.cost.cost > *expected;
      recomputing += result.cost.recomputeCost > 0;
    }
  }
  // As without gradients, the DP matches exhaustive search but where the
  // optimum rebuilds a dropped checkpoint (KnownGap): none of these 250.
  EXPECT_EQ(total, 250);
  EXPECT_GE(infeasible, 50);
  EXPECT_GE(recomputing, 20);
  EXPECT_LE(worse, 1);
}

// The one case of RandomChainsAgainstExhaustiveSearch where the DP is not
// optimal. The MILP keeps h1 (stage 1's saved activations, 2 bytes) as the
// source of f1 through b3, drops it when b2's stage needs the room, runs it
// again at b2 and keeps it for b1: 78. The DP keeps a source until the last
// backward that reads it or none, and pays forward 1 again at b3: 86.
TEST(ChainDpTest, KnownGap) {
  ChainProblem problem;
  problem.constantBytes = 2;
  problem.budgetBytes = 18;
  problem.stages = {{6, 4, 5, 0, 5},
                    {8, 5, 1, 2, 6},
                    {9, 3, 5, 6, 3},
                    {5, 4, 2, 1, 1},
                    {1, 2, 1, 5, 5}};
  EXPECT_EQ(solve(problem).cost.cost, 86);
  EXPECT_EQ(pebbleOptimum(problem), 78);
}

/// The MILP's optimum on the chain's DAG, with a generous time limit.
ilp::IlpResult solveIlp(const ChainProblem &problem,
                        std::optional<problem::RematSchedule> warmStart = {}) {
  ilp::IlpOptions options;
  options.timeLimitSeconds = 60;
  options.warmStart = std::move(warmStart);
  absl::StatusOr<ilp::IlpResult> result =
      ilp::solveCheckmateIlp(toRematProblem(problem), options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : ilp::IlpResult{};
}

/// Checks that the DP and the Checkmate MILP on the chain's DAG agree on
/// chains of 3 to 5 stages drawn by `draw`, at 6 budgets each,
/// infeasibility included, and that some of the optima recompute.
template <typename Draw> void expectDpMatchesIlp(std::mt19937 &rng, Draw draw) {
  int recomputing = 0;
  for (int n = 3; n <= 5; ++n) {
    ChainProblem problem = draw(rng, n);
    for (int64_t budget : budgetsToTry(problem, 5)) {
      SCOPED_TRACE(::testing::Message() << n << " stages, budget " << budget);
      problem.budgetBytes = budget;
      ilp::IlpResult expected = solveIlp(problem);
      ChainResult result = solve(problem);
      if (expected.status == ilp::IlpStatusKind::Infeasible) {
        EXPECT_EQ(result.status, ChainStatusKind::Infeasible);
        continue;
      }
      ASSERT_EQ(expected.status, ilp::IlpStatusKind::Optimal);
      ASSERT_EQ(result.status, ChainStatusKind::Optimal);
      EXPECT_EQ(result.cost.cost, expected.cost.cost);
      recomputing += result.cost.recomputeCost > 0;
    }
  }
  EXPECT_GE(recomputing, 5);
}

// The MILP and the DP agree on random chains (CBC takes seconds on 6
// stages, minutes under sanitizers).
TEST(ChainDpTest, MatchesIlpOnRandomChains) {
  std::mt19937 rng(7);
  expectDpMatchesIlp(rng, randomChain);
}

// The same with parameter gradients: on the chain's DAG they are nodes made
// before their backward and read by the last one.
TEST(ChainDpTest, MatchesIlpOnRandomChainsWithParamGradients) {
  std::mt19937 rng(8);
  expectDpMatchesIlp(rng, randomChainWithParamGradients);
}

// Ten stages at a budget that forces recomputation: the MILP, started from
// the DP's schedule, proves that nothing is cheaper.
TEST(ChainDpTest, IlpProvesTenStageOptimum) {
  std::mt19937 rng(11);
  ChainProblem problem = randomChain(rng, 10);
  std::vector<int64_t> budgets = budgetsToTry(problem, 4);
  problem.budgetBytes = budgets[2];
  ChainResult result = solve(problem);
  ASSERT_EQ(result.status, ChainStatusKind::Optimal);
  EXPECT_GT(result.cost.recomputeCost, 0);
  absl::StatusOr<problem::RematSchedule> start =
      toRematSchedule(problem, result.schedule);
  ASSERT_TRUE(start.ok()) << start.status();
  ilp::IlpResult expected = solveIlp(problem, *start);
  EXPECT_EQ(expected.status, ilp::IlpStatusKind::Optimal);
  EXPECT_EQ(expected.cost.cost, result.cost.cost);
}

// A larger budget never costs more, and feasibility starts at one budget.
TEST(ChainDpTest, CostFallsAsBudgetGrows) {
  std::mt19937 rng(5);
  ChainProblem problem = randomChain(rng, 12);
  std::vector<int64_t> budgets = budgetsToTry(problem, 2);
  std::optional<int64_t> previous;
  int steps = 0;
  for (int64_t budget = budgets[0]; budget <= budgets.back(); ++budget) {
    problem.budgetBytes = budget;
    ChainResult result = solve(problem);
    if (result.status == ChainStatusKind::Infeasible) {
      EXPECT_FALSE(previous) << "infeasible at " << budget;
      continue;
    }
    if (previous) {
      EXPECT_LE(result.cost.cost, *previous) << "at " << budget;
      steps += result.cost.cost < *previous;
    }
    previous = result.cost.cost;
  }
  ASSERT_TRUE(previous);
  EXPECT_EQ(*previous, [&] {
    int64_t base = 0;
    for (const ChainStage &stage : problem.stages)
      base += stage.forwardCost + stage.backwardCost;
    return base;
  }());
  EXPECT_GE(steps, 5);
}

// The lowest-peak read-back equals the least budget at which the DP finds
// a schedule, found by scanning budgets one byte at a time, and costs what
// the DP costs there.
TEST(ChainDpTest, LowestPeakIsTheLeastFeasibleBudget) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 6; ++trial) {
    ChainProblem problem = randomChain(rng, 3 + trial);
    std::vector<int64_t> budgets = budgetsToTry(problem, 2);
    std::optional<ChainResult> least;
    for (int64_t budget = budgets[0]; budget <= budgets.back() && !least;
         ++budget) {
      problem.budgetBytes = budget;
      ChainResult result = solve(problem);
      if (result.status == ChainStatusKind::Optimal)
        least = result;
    }
    ASSERT_TRUE(least) << trial;
    problem.budgetBytes = budgets.back();
    absl::StatusOr<ChainResult> lowest =
        solveChainDpLowestPeak(problem, {.slotBytes = 1});
    ASSERT_TRUE(lowest.ok()) << lowest.status();
    ASSERT_EQ(lowest->status, ChainStatusKind::Optimal) << trial;
    EXPECT_EQ(lowest->cost.peakBytes, least->cost.peakBytes) << trial;
    EXPECT_EQ(lowest->cost.cost, least->cost.cost) << trial;
  }
}

// Coarse slots round sizes up and the budget down: never over the budget,
// never cheaper than the exact optimum, and said to be inexact.
TEST(ChainDpTest, CoarseSlotsStayWithinBudget) {
  std::mt19937 rng(3);
  ChainProblem problem = randomChain(rng, 12);
  problem.budgetBytes = budgetsToTry(problem, 3)[2] * 3 / 4;
  ChainResult exact = solve(problem);
  ASSERT_EQ(exact.status, ChainStatusKind::Optimal);
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.slotBytes, 1);
  for (int64_t slot : {2, 3, 5}) {
    DpOptions options;
    options.slotBytes = slot;
    ChainResult coarse = solve(problem, options);
    EXPECT_FALSE(coarse.exact);
    if (coarse.status == ChainStatusKind::Optimal) {
      EXPECT_GE(coarse.cost.cost, exact.cost.cost);
    }
  }
  // All sizes even: gcd slots of 2 bytes lose nothing.
  ChainProblem doubled = problem;
  for (ChainStage &stage : doubled.stages) {
    stage.outputBytes *= 2;
    stage.savedBytes *= 2;
    stage.gradientBytes *= 2;
  }
  doubled.constantBytes *= 2;
  doubled.budgetBytes = problem.budgetBytes * 2 + 1;
  ChainResult halved = solve(doubled);
  EXPECT_EQ(halved.slotBytes, 2);
  EXPECT_TRUE(halved.exact);
  EXPECT_EQ(halved.cost.cost, exact.cost.cost);
}

// 100 stages in 6 bytes: deep nesting, reconstructed on the DP's own stack;
// the checker confirms the 299-node schedule.
TEST(ChainDpTest, LongChainInFewSlots) {
  ChainProblem problem = uniformChain(100);
  problem.budgetBytes = 6;
  ChainResult result = solve(problem);
  ASSERT_EQ(result.status, ChainStatusKind::Optimal);
  EXPECT_GT(result.cost.recomputeCost, 0);
  EXPECT_LE(result.cost.peakBytes, 6);
}

TEST(ChainDpTest, ErrorsAreClear) {
  ChainProblem empty;
  EXPECT_EQ(solveChainDp(empty).status().message(), "chain problem: no stage");
  ChainProblem negative = uniformChain(2);
  negative.stages[1].savedBytes = -1;
  EXPECT_EQ(solveChainDp(negative).status().message(),
            "chain problem: stage 1 has a negative cost or size");
  ChainProblem huge = uniformChain(2);
  huge.stages[0].forwardCost = INT64_MAX / 2;
  EXPECT_EQ(solveChainDp(huge).status().message(),
            "chain problem: cost or byte totals overflow int64");
  ChainProblem big = uniformChain(100);
  big.budgetBytes = 100000;
  DpOptions options;
  options.maxSlots = 100000;
  options.maxCells = 1000000;
  EXPECT_EQ(solveChainDp(big, options).status().message(),
            "chain dp: 100 stages and 100001 slots need more than the limit "
            "of 1000000 table cells; use larger slots");
}

TEST(ChainDpTest, CheckerReportsBrokenSchedules) {
  ChainProblem problem = uniformChain(2);
  problem.budgetBytes = 10;
  auto expectError = [&](std::vector<ChainOp> ops, const std::string &what) {
    ChainSchedule schedule{std::move(ops)};
    setLastUses(2, schedule);
    EXPECT_EQ(evaluateChainSchedule(problem, schedule).status().message(),
              what);
  };
  using K = ChainOpKind;
  // Nodes: h0 f0 h1 b1 b0.
  expectError({{K::Forward, 0}, {K::Forward, 1}},
              "chain schedule: op 1 (forward 1): reads node 1, which is not "
              "in memory");
  expectError({{K::Forward, 0}, {K::Output, 0}, {K::Forward, 1},
               {K::Backward, 0}},
              "chain schedule: op 3 (backward 0): backward out of order");
  expectError({{K::Forward, 0}, {K::Output, 0}, {K::Forward, 1},
               {K::Backward, 1}},
              "chain schedule: backward 0 never runs");
  ChainSchedule twice{{{K::Forward, 0, 1}, {K::Forward, 0, 1}}};
  EXPECT_EQ(evaluateChainSchedule(problem, twice).status().message(),
            "chain schedule: op 1 (forward 0): recomputes a value that is in "
            "memory");
  expectError({{K::Forward, 0}, {K::Output, 1}},
              "chain schedule: op 1: no such op");
  // Valid, but not in Checkmate's stage order: h1 recomputed before f0's
  // first computation is impossible, so use a late first computation.
  ChainSchedule outOfOrder{{{K::Forward, 0},
                            {K::Output, 0},
                            {K::Forward, 1},
                            {K::Backward, 1},
                            {K::Backward, 0}}};
  setLastUses(2, outOfOrder);
  absl::StatusOr<ChainCost> cost = evaluateChainSchedule(problem, outOfOrder);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_EQ(cost->cost, 4);
  EXPECT_EQ(cost->peakBytes, 4);
  EXPECT_TRUE(toRematSchedule(problem, outOfOrder).ok());
}

// Checkmate's baselines. A chain's forward DAG is a path: every forward node
// but the last is a cut. With a skip edge 0 -> 3 (as a residual block),
// nodes 1 and 2 are not.
TEST(ChainDpTest, CutNodes) {
  problem::RematProblem chain = toRematProblem(uniformChain(3));
  EXPECT_EQ(cutNodes(chain), (std::vector<int>{0, 1, 2, 3}));
  problem::RematProblem skip;
  skip.nodes = {{1, 1, {}, false},     {1, 1, {0}, false},
                {1, 1, {1}, false},    {1, 1, {2, 0}, false},
                {1, 1, {3}, false},    {1, 1, {4, 3}, true},
                {1, 1, {5, 2, 0}, true}};
  EXPECT_EQ(cutNodes(skip), (std::vector<int>{0, 3}));
}

// Four one-byte, one-FLOP stages (forward nodes h0 f0 h1 f1 h2 f2 h3, then
// b3 b2 b1 b0) with f1 as the only checkpoint: the segment h2 f2 h3 is read
// by b3, the first backward, so it is kept; h0 f0 h1 is first read by b1
// and runs again there, forwards 0 and 1 once more: 8 + 2.
TEST(ChainDpTest, SegmentScheduleRecomputesEachSegmentOnce) {
  ChainProblem chain = uniformChain(4);
  chain.budgetBytes = 100;
  problem::RematProblem dag = toRematProblem(chain);
  problem::RematSchedule schedule = segmentSchedule(dag, {3});
  absl::StatusOr<problem::ScheduleCost> cost = problem::checkSchedule(dag, schedule);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_EQ(cost->cost, 10);
  EXPECT_EQ(schedule.compute[9].count(), 4u);
  for (int node : {0, 1, 2})
    EXPECT_TRUE(schedule.compute[9].test(node));
}

// On random chains at random parameters, every AP schedule is valid, and
// whenever one fits a budget the DP does at least as well there.
TEST(ChainDpTest, ApBaselinesAreValidAndNeverBeatTheDp) {
  std::mt19937 rng(13);
  int compared = 0, dpBetter = 0, greedyFits = 0;
  for (int trial = 0; trial < 12; ++trial) {
    ChainProblem chain = randomChain(rng, 4 + trial);
    problem::RematProblem dag = toRematProblem(chain);
    dag.budgetBytes = INT64_MAX / 2;
    std::vector<std::vector<int>> plans = {sqrtnCheckpoints(dag), {},
                                           cutNodes(dag)};
    for (int64_t parameter : {4, 10, 20, 40})
      plans.push_back(greedyCheckpoints(dag, parameter));
    for (const std::vector<int> &checkpoints : plans) {
      absl::StatusOr<problem::ScheduleCost> cost =
          problem::checkSchedule(dag, segmentSchedule(dag, checkpoints));
      ASSERT_TRUE(cost.ok()) << cost.status();
      chain.budgetBytes = cost->peakBytes;
      ChainResult result = solve(chain);
      ASSERT_EQ(result.status, ChainStatusKind::Optimal);
      EXPECT_LE(result.cost.cost, cost->cost);
      ++compared;
      dpBetter += result.cost.cost < cost->cost;
    }
    // The best greedy parameter within the DP's own budget.
    dag.budgetBytes = chain.budgetBytes = budgetsToTry(chain, 3)[2];
    auto greedy = bestGreedySchedule(dag);
    ChainResult result = solve(chain);
    if (greedy) {
      ++greedyFits;
      EXPECT_LE(greedy->second.peakBytes, dag.budgetBytes);
      EXPECT_LE(result.cost.cost, greedy->second.cost);
    }
  }
  EXPECT_GE(dpBetter, compared / 4);
  EXPECT_GE(greedyFits, 6);
}

} // namespace remat::chain

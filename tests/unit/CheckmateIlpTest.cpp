//===- CheckmateIlpTest.cpp - The Checkmate MILP and its checker ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The MILP's optimum against hand-derived optima and against an exhaustive
/// search over (stage, resident set) written here from the accounting rules
/// of docs/planning-ilp.md; the checker against hand-made schedules.
///
//===----------------------------------------------------------------------===//

#include "Planning/Ilp/CheckmateIlp.h"
#include "Planning/Ilp/IlpInternal.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdio>
#include <map>
#include <random>
#include <sys/resource.h>

namespace remat::ilp {
namespace {

/// The training DAG of a chain of `costs.size()` ops, loss last. Forward op
/// j reads op j-1; its gradient node reads the gradient of op j+1, op j's
/// input and op j's output. Forward j is node j; its gradient is node
/// 2n-1-j. Gradients take the bytes of their op's output.
RematProblem trainingChain(const std::vector<int64_t> &costs,
                           const std::vector<int64_t> &bytes) {
  int n = int(costs.size());
  RematProblem problem;
  for (int j = 0; j < n; ++j) {
    RematNode node{costs[j], bytes[j], {}, false};
    if (j > 0)
      node.deps = {j - 1};
    problem.nodes.push_back(node);
  }
  for (int j = n - 1; j >= 0; --j) {
    RematNode node{costs[j], bytes[j], {}, true};
    if (j < n - 1)
      node.deps.push_back(int(problem.nodes.size()) - 1);
    if (j > 0)
      node.deps.push_back(j - 1);
    node.deps.push_back(j);
    problem.nodes.push_back(node);
  }
  return problem;
}

RematProblem uniformChain(int n) {
  return trainingChain(std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1));
}

/// The least total cost of a schedule within the budget, by trying every
/// recomputation set and every kept set at every stage (a DP over the
/// resident set at the start of each stage); nullopt when none fits. Kept
/// sets only range over nodes that some node computable later reads: any
/// other kept node is never read again and only adds memory.
std::optional<int64_t> bruteForceOptimum(const RematProblem &problem) {
  int n = int(problem.nodes.size());
  EXPECT_LE(n, 16);
  std::vector<uint32_t> deps(n, 0), readers(n, 0);
  for (int k = 0; k < n; ++k)
    for (int dep : problem.nodes[k].deps) {
      deps[k] |= 1u << dep;
      readers[dep] |= 1u << k;
    }
  uint32_t forward = 0;
  for (int i = 0; i < n; ++i)
    if (!problem.nodes[i].backward)
      forward |= 1u << i;
  auto bytesOf = [&](uint32_t set) {
    int64_t total = 0;
    for (int i = 0; i < n; ++i)
      if (set >> i & 1)
        total += problem.nodes[i].bytes;
    return total;
  };
  // Peak of a stage that starts with `resident`, computes `computed` in index
  // order and hands `kept` to the next stage; -1 when a read is missing.
  auto stagePeak = [&](uint32_t resident, uint32_t computed, uint32_t kept) {
    int64_t live = problem.constantBytes + bytesOf(resident);
    int64_t peak = -1;
    uint32_t present = resident;
    for (int k = 0; k < n; ++k) {
      if (!(computed >> k & 1))
        continue;
      if ((deps[k] & present) != deps[k])
        return int64_t(-1);
      present |= 1u << k;
      live += problem.nodes[k].bytes;
      peak = std::max(peak, live);
      uint32_t laterComputed = computed & ~((2u << k) - 1);
      for (int i = 0; i <= k; ++i)
        if (((deps[k] | 1u << k) >> i & 1) && !(readers[i] & laterComputed) &&
            !(kept >> i & 1)) {
          live -= problem.nodes[i].bytes;
          present &= ~(1u << i);
        }
    }
    return peak;
  };

  std::map<uint32_t, int64_t> costByResident = {{0, 0}};
  for (int t = 0; t < n; ++t) {
    uint32_t readLater = 0;
    for (int i = 0; i < n; ++i)
      if ((readers[i] & forward) || (readers[i] >> (t + 1)))
        readLater |= 1u << i;
    if (t + 1 == n)
      readLater = 0;
    std::map<uint32_t, int64_t> next;
    for (auto [resident, cost] : costByResident) {
      uint32_t optional = forward & ((1u << t) - 1) & ~resident;
      for (uint32_t extra = optional;; extra = (extra - 1) & optional) {
        uint32_t computed = extra | 1u << t;
        int64_t stageCost = 0;
        for (int i = 0; i < n; ++i)
          if (computed >> i & 1)
            stageCost += problem.nodes[i].cost;
        uint32_t keepable = (resident | computed) & readLater;
        for (uint32_t kept = keepable;; kept = (kept - 1) & keepable) {
          int64_t peak = stagePeak(resident, computed, kept);
          if (peak >= 0 && peak <= problem.budgetBytes) {
            auto [it, inserted] = next.emplace(kept, cost + stageCost);
            if (!inserted)
              it->second = std::min(it->second, cost + stageCost);
          }
          if (kept == 0)
            break;
        }
        if (extra == 0)
          break;
      }
    }
    costByResident = std::move(next);
  }
  if (costByResident.empty())
    return std::nullopt;
  return costByResident.begin()->second;
}

/// Solves with a generous time limit and checks what every result promises:
/// a valid schedule within the budget whose cost the result reports.
IlpResult solve(const RematProblem &problem, IlpOptions options = {}) {
  options.timeLimitSeconds = 120;
  absl::StatusOr<IlpResult> result = solveCheckmateIlp(problem, options);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok())
    return {};
  if (result->status == IlpStatusKind::Optimal ||
      result->status == IlpStatusKind::Feasible) {
    absl::StatusOr<ScheduleCost> cost =
        checkSchedule(problem, result->schedule);
    EXPECT_TRUE(cost.ok()) << cost.status();
    if (cost.ok()) {
      EXPECT_EQ(cost->cost, result->cost.cost);
      EXPECT_EQ(cost->peakBytes, result->cost.peakBytes);
      EXPECT_LE(cost->peakBytes, problem.budgetBytes);
    }
  }
  return *result;
}

int computeCount(const RematSchedule &schedule, int node) {
  int count = 0;
  for (const llvm::BitVector &stage : schedule.compute)
    count += stage.test(node);
  return count;
}

// The 4-op chain f0..f3 and its gradients b3 (node 4, reads f2 f3),
// b2 (5: b3 f1 f2), b1 (6: b2 f0 f1), b0 (7: b1 f0), one byte and one FLOP
// each. Keeping everything, stage 4 holds f0 f1 f2 f3 and computes b3: 5
// bytes. In 4 bytes some forward value must leave before stage 4 and come
// back: f0 (read again by b1 and b0) is dropped after stage 3 and recomputed
// at stage 6 (b2 + f1 + f0 = 3, then b1: 4); keeping f0 and dropping f1
// instead needs f0 f1 f2 b3 b2 = 5 at stage 5. So 8 computations + 1.
// Stage 5 needs b3 f1 f2 b2 live together: 3 bytes cannot fit.
TEST(CheckmateIlpTest, FourOpChainNeedsOneRecomputationInFourBytes) {
  RematProblem problem = uniformChain(4);
  problem.budgetBytes = 5;
  IlpResult keepAll = solve(problem);
  EXPECT_EQ(keepAll.status, IlpStatusKind::Optimal);
  EXPECT_EQ(keepAll.cost.cost, 8);
  EXPECT_EQ(keepAll.cost.peakBytes, 5);

  problem.budgetBytes = 4;
  IlpResult tight = solve(problem);
  EXPECT_EQ(tight.status, IlpStatusKind::Optimal);
  EXPECT_EQ(tight.cost.cost, 9);
  EXPECT_EQ(tight.cost.recomputeCost, 1);
  EXPECT_EQ(tight.bestBound, 1.0);
  EXPECT_EQ(tight.gap, 0.0);
  EXPECT_EQ(computeCount(tight.schedule, 0), 2);

  problem.budgetBytes = 3;
  EXPECT_EQ(solve(problem).status, IlpStatusKind::Infeasible);
}

/// Nodes f0 f1 g2 h3 g4 g5 h6 g7 g8 of ValueRecomputedTwice, no budget.
RematProblem recomputedTwiceProblem() {
  RematProblem problem;
  problem.nodes = {
      {1, 1, {}, false}, {100, 1, {0}, false}, {1, 1, {1, 0}, true},
      {1, 3, {2}, true}, {1, 1, {3}, true},    {1, 1, {4, 0}, true},
      {1, 3, {5}, true}, {1, 1, {6}, true},    {1, 1, {7, 0}, true},
  };
  return problem;
}

// f0 (1 byte, 1 FLOP) is read by the gradients g2, g5 and g8; between them
// h3 and h6 (3 bytes) each run with a 1-byte neighbour (g2 + h3, h3 + g4,
// g5 + h6, h6 + g7: 4 bytes). In 4 bytes f0 cannot stay resident through
// stages 3-4 nor 6-7, and computing it there early still holds it while
// g4 or g7 is computed (5 bytes), so it is recomputed at stage 5 (g4 f0 g5:
// 3 bytes) and again at stage 8: 108 + 2. In 5 bytes it stays: 108.
TEST(CheckmateIlpTest, ValueRecomputedTwice) {
  RematProblem problem = recomputedTwiceProblem();
  problem.budgetBytes = 4;
  IlpResult tight = solve(problem);
  EXPECT_EQ(tight.status, IlpStatusKind::Optimal);
  EXPECT_EQ(tight.cost.cost, 110);
  EXPECT_EQ(computeCount(tight.schedule, 0), 3);
  EXPECT_TRUE(tight.schedule.compute[5].test(0));
  EXPECT_TRUE(tight.schedule.compute[8].test(0));
  EXPECT_EQ(bruteForceOptimum(problem), 110);

  problem.budgetBytes = 5;
  EXPECT_EQ(solve(problem).cost.cost, 108);
  problem.budgetBytes = 3;
  EXPECT_EQ(solve(problem).status, IlpStatusKind::Infeasible);
}

/// A random training DAG: `numForward` forward ops each reading one or two
/// earlier ones, then one gradient per forward op in reverse, reading the
/// gradients of its readers, its op's output and its op's inputs (each
/// gradient with probability 1/2 unless `gradientsReadInputs`: then some
/// forward values feed only the next op, as a matmul's output feeds a bias
/// add).
RematProblem randomTrainingDag(std::mt19937 &rng, int numForward,
                               bool gradientsReadInputs = true) {
  auto draw = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  RematProblem problem;
  problem.constantBytes = draw(0, 3);
  for (int i = 0; i < numForward; ++i) {
    RematNode node{draw(1, 9), draw(1, 8), {}, false};
    if (i > 0) {
      node.deps.push_back(i - 1);
      if (i > 1 && draw(0, 1))
        node.deps.push_back(draw(0, i - 2));
    }
    problem.nodes.push_back(node);
  }
  std::vector<int> gradientOf(numForward);
  for (int j = numForward - 1; j >= 0; --j) {
    RematNode node{draw(1, 9), problem.nodes[j].bytes, {}, true};
    for (int reader = j + 1; reader < numForward; ++reader)
      if (llvm::is_contained(problem.nodes[reader].deps, j))
        node.deps.push_back(gradientOf[reader]);
    if (gradientsReadInputs || draw(0, 1))
      for (int dep : problem.nodes[j].deps)
        node.deps.push_back(dep);
    node.deps.push_back(j);
    gradientOf[j] = int(problem.nodes.size());
    problem.nodes.push_back(node);
  }
  return problem;
}

// Budgets from one byte under the smallest stage (infeasible) to the
// keep-everything peak; the MILP must match exhaustive search at each.
TEST(CheckmateIlpTest, MatchesBruteForceOnRandomDags) {
  std::mt19937 rng(20201);
  int infeasible = 0, recomputing = 0;
  for (int trial = 0; trial < 12; ++trial) {
    RematProblem problem = randomTrainingDag(rng, 3 + trial % 4);
    problem.budgetBytes = INT64_MAX / 2;
    absl::StatusOr<ScheduleCost> keepAll =
        checkSchedule(problem, keepAllSchedule(problem));
    ASSERT_TRUE(keepAll.ok()) << keepAll.status();
    int64_t smallest = 0;
    for (const RematNode &node : problem.nodes) {
      int64_t need = problem.constantBytes + node.bytes;
      for (int dep : node.deps)
        need += problem.nodes[dep].bytes;
      smallest = std::max(smallest, need);
    }
    for (int64_t budget :
         {smallest - 1, smallest, (smallest + keepAll->peakBytes) / 2,
          keepAll->peakBytes - 1, keepAll->peakBytes}) {
      SCOPED_TRACE(::testing::Message()
                   << "trial " << trial << " budget " << budget);
      problem.budgetBytes = budget;
      std::optional<int64_t> expected = bruteForceOptimum(problem);
      IlpResult result = solve(problem);
      if (!expected) {
        ++infeasible;
        EXPECT_EQ(result.status, IlpStatusKind::Infeasible);
        continue;
      }
      EXPECT_EQ(result.status, IlpStatusKind::Optimal);
      EXPECT_EQ(result.cost.cost, *expected);
      recomputing += result.cost.recomputeCost > 0;
      // Single-threaded with fixed seeds: the same schedule every time.
      IlpResult again = solve(problem);
      EXPECT_EQ(again.schedule.compute, result.schedule.compute);
      EXPECT_EQ(again.schedule.resident, result.schedule.resident);
    }
  }
  // The budgets exercise all three outcomes, not only the easy ones.
  EXPECT_GE(infeasible, 12);
  EXPECT_GE(recomputing, 6);
}

/// The relaxation's bound, expected to be proven (no limit reached).
RecomputeBound relaxationBound(const RematProblem &problem) {
  IlpOptions options;
  options.timeLimitSeconds = 120;
  absl::StatusOr<RecomputeBound> bound = recomputeLowerBound(problem, options);
  EXPECT_TRUE(bound.ok()) << bound.status();
  return bound.ok() ? *bound : RecomputeBound{};
}

/// The peak of keeping everything, whatever `problem`'s budget.
int64_t keepAllPeak(RematProblem problem) {
  problem.budgetBytes = INT64_MAX / 2;
  absl::StatusOr<ScheduleCost> cost =
      checkSchedule(problem, keepAllSchedule(problem));
  EXPECT_TRUE(cost.ok()) << cost.status();
  return cost.ok() ? cost->peakBytes : 0;
}

int64_t sumOfCosts(const RematProblem &problem) {
  int64_t total = 0;
  for (const RematNode &node : problem.nodes)
    total += node.cost;
  return total;
}

// The relaxation is a bound: never above the exhaustive optimum's
// rematerialization cost, and "infeasible" only where no schedule fits. It is
// exact wherever the optimum recomputes each value at most once, so on these
// small DAGs it often meets the optimum; the count guards against a bound
// that is 0 everywhere.
TEST(CheckmateIlpTest, RelaxationNeverExceedsTheOptimum) {
  std::mt19937 rng(7301);
  int meetsOptimum = 0, positive = 0, provenInfeasible = 0;
  for (int trial = 0; trial < 40; ++trial) {
    RematProblem problem = randomTrainingDag(rng, 3 + trial % 5,
                                             /*gradientsReadInputs=*/trial % 2);
    int64_t peak = keepAllPeak(problem);
    for (int64_t budget = problem.constantBytes; budget <= peak;
         budget += 1 + peak / 6) {
      SCOPED_TRACE(::testing::Message()
                   << "trial " << trial << " budget " << budget);
      problem.budgetBytes = budget;
      std::optional<int64_t> optimum = bruteForceOptimum(problem);
      RecomputeBound bound = relaxationBound(problem);
      // The bound alone (`remat opt --bound`), one solve from the start
      // that recomputes everything, reaches the same optimum.
      IlpOptions options;
      options.timeLimitSeconds = 120;
      absl::StatusOr<RecomputeBound> alone =
          boundRecomputeCost(problem, options);
      ASSERT_TRUE(alone.ok()) << alone.status();
      EXPECT_TRUE(alone->proven);
      EXPECT_TRUE(alone->solverFailure.empty()) << alone->solverFailure;
      EXPECT_EQ(alone->infeasible, bound.infeasible);
      EXPECT_EQ(alone->bound, bound.bound);
      if (bound.infeasible) {
        ++provenInfeasible;
        EXPECT_FALSE(optimum.has_value());
        continue;
      }
      if (!optimum)
        continue;
      int64_t recompute = *optimum - sumOfCosts(problem);
      EXPECT_LE(bound.bound, double(recompute));
      meetsOptimum += bound.bound == double(recompute) && recompute > 0;
      positive += bound.bound > 0;
    }
  }
  EXPECT_GE(meetsOptimum, 10);
  EXPECT_GE(positive, meetsOptimum);
  EXPECT_GE(provenInfeasible, 10);
}

// min x + 2y subject to x + y >= 1.5 and x <= 1: 1 + 2 * 0.5.
TEST(CheckmateIlpTest, TheLinearRelaxationIsSolvedToItsOptimum) {
  ModelColumns columns;
  int x = columns.add(0.0, 1.0, 1.0, /*integer=*/true);
  int y = columns.add(0.0, 1.0, 2.0, /*integer=*/true);
  RowBuilder rows;
  rows.add({{x, 1.0}, {y, 1.0}}, 1.5, COIN_DBL_MAX);
  CbcOutcome lp = solveLinearRelaxation(rows, columns, {});
  EXPECT_TRUE(lp.provenOptimal);
  EXPECT_DOUBLE_EQ(lp.bound, 2.0);
  EXPECT_EQ(lp.failure, "");
  // x + y >= 2.5 over two columns of at most 1.
  RowBuilder infeasible;
  infeasible.add({{x, 1.0}, {y, 1.0}}, 2.5, COIN_DBL_MAX);
  lp = solveLinearRelaxation(infeasible, columns, {});
  EXPECT_TRUE(lp.provenInfeasible);
  EXPECT_FALSE(lp.provenOptimal);
}

// CBC's solve of the bound killed or aborted (the 1000-layer MLP at 30%
// ran past its limit in CBC's root) still leaves the LP's bound, solved
// first in a child of its own: here every solver child after the first
// aborts. The LP's bound is never above the exhaustive optimum nor above
// the relaxation's, and is positive on some of these DAGs.
TEST(CheckmateIlpTest, TheLpBoundStandsWhereCbcGivesNothingBack) {
  std::string marker = ::testing::TempDir() + "remat-lp-bound-marker";
  IlpOptions aborting;
  aborting.timeLimitSeconds = 120;
  aborting.inSolverProcess = [marker] {
    if (std::FILE *seen = std::fopen(marker.c_str(), "r")) {
      std::fclose(seen);
      rlimit noCore = {0, 0};
      setrlimit(RLIMIT_CORE, &noCore);
      std::abort();
    }
    if (std::FILE *first = std::fopen(marker.c_str(), "w"))
      std::fclose(first);
  };
  std::mt19937 rng(7301);
  int positive = 0, solved = 0;
  for (int trial = 0; trial < 16; ++trial) {
    RematProblem problem = randomTrainingDag(rng, 3 + trial % 5,
                                             /*gradientsReadInputs=*/trial % 2);
    problem.budgetBytes = keepAllPeak(problem) - 1;
    std::optional<int64_t> optimum = bruteForceOptimum(problem);
    if (!optimum)
      continue;
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    std::remove(marker.c_str());
    absl::StatusOr<RecomputeBound> lpOnly =
        boundRecomputeCost(problem, aborting);
    ASSERT_TRUE(lpOnly.ok()) << lpOnly.status();
    ++solved;
    EXPECT_FALSE(lpOnly->proven);
    EXPECT_FALSE(lpOnly->infeasible);
    RecomputeBound full = relaxationBound(problem);
    EXPECT_LE(lpOnly->bound, full.bound);
    EXPECT_LE(lpOnly->bound, double(*optimum - sumOfCosts(problem)));
    if (lpOnly->bound > 0) {
      ++positive;
      EXPECT_EQ(lpOnly->solverFailure, "");
    } else {
      EXPECT_EQ(lpOnly->solverFailure, "CBC ended on signal 6 (Aborted)");
    }
  }
  std::remove(marker.c_str());
  RecordProperty("solved", solved);
  RecordProperty("positive", positive);
  EXPECT_GE(solved, 8);
  EXPECT_GE(positive, 1);
}

// Above 20,000 nodes the relaxation is not built: bound 0, and why.
TEST(CheckmateIlpTest, BoundAloneSaysWhyItIsNotBuiltAboveItsSize) {
  RematProblem problem = uniformChain(10001);
  problem.budgetBytes = problem.constantBytes + 4;
  absl::StatusOr<RecomputeBound> alone = boundRecomputeCost(problem, {});
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_FALSE(alone->proven);
  EXPECT_EQ(alone->bound, 0.0);
  EXPECT_EQ(alone->solverFailure,
            "the relaxation is built for at most 20000 nodes, not 20002");
}

// f0 of ValueRecomputedTwice is needed again after h3 and after h6, and the
// optimum in 4 bytes recomputes it twice (2). The relaxation pays for one
// recomputation of each value: at h3's step g2, h3 and f0 need 5 bytes, so
// f0 is recomputed, which costs 1, and nothing charges the second.
TEST(CheckmateIlpTest, RelaxationChargesOneRecomputationPerValue) {
  RematProblem problem = recomputedTwiceProblem();
  problem.budgetBytes = 4;
  RecomputeBound bound = relaxationBound(problem);
  EXPECT_FALSE(bound.infeasible);
  EXPECT_EQ(bound.bound, 1.0);
  EXPECT_EQ(solve(problem).cost.recomputeCost, 2);
}

// p (50 FLOPs, 1 byte) feeds only h (1 byte), which the last gradient gh
// reads; z (2 bytes) feeds gz (1 byte). Keeping everything, gz's step holds
// h, z and gz: 4 bytes. In 3 bytes h must be recomputed for gh, and p kept
// for that would hold the byte h freed, so p is recomputed too: p and h at
// gh's stage (gz, p, h: 3 bytes), 51 FLOPs. The relaxation sees it because
// h, or p in its place, is live while h waits.
TEST(CheckmateIlpTest, RelaxationCountsTheInputKeptToRecomputeAValue) {
  RematProblem problem;
  problem.nodes = {{50, 1, {}, false},
                   {1, 1, {0}, false},
                   {1, 2, {1}, false},
                   {1, 1, {2}, true},
                   {1, 0, {3, 1}, true}};
  problem.budgetBytes = 3;
  EXPECT_EQ(relaxationBound(problem).bound, 51.0);
  IlpResult result = solve(problem);
  EXPECT_EQ(result.status, IlpStatusKind::Optimal);
  EXPECT_EQ(result.cost.recomputeCost, 51);
  EXPECT_EQ(bruteForceOptimum(problem), 51 + sumOfCosts(problem));
}

// i = f(a, b), each of a and b (10 FLOPs, 1 byte) read by i alone; the last
// gradient k reads only i. In 4 bytes g's step (z and g: 4) leaves no room
// for i, nor for a or b kept to recompute it, so a, b and i are recomputed
// at k's stage: 21. The relaxation follows one private input per node (a,
// the first of the largest): i, or a in its place, is live while i waits,
// so a is recomputed too; b may still be kept for free: 1 + 10 = 11 (1
// without the private input: i recomputed from a and b kept).
TEST(CheckmateIlpTest, RelaxationFollowsOnePrivateInputOfATwoInputNode) {
  RematProblem problem;
  problem.nodes = {{10, 1, {}, false},    {10, 1, {}, false},
                   {1, 1, {0, 1}, false}, {1, 2, {2}, false},
                   {1, 2, {3}, true},     {1, 0, {2}, true}};
  problem.budgetBytes = 4;
  EXPECT_EQ(relaxationBound(problem).bound, 11.0);
  EXPECT_EQ(solve(problem).cost.recomputeCost, 21);
  EXPECT_EQ(bruteForceOptimum(problem), 21 + sumOfCosts(problem));
}

// In the 4-op chain's 4 bytes, b3's step holds b3, f2 and f3, and f0 and f1
// are read later: one of them must leave and come back, 1 FLOP, which is
// the optimum. The relaxation's solution, rounded to a schedule that
// recomputes its node once, fits: optimal without the MILP, as is a warm
// start at the bound. In 3 bytes b2's step alone (b2 with b3, f1, f2) does
// not fit.
TEST(CheckmateIlpTest, ScheduleAtTheRelaxationsBoundIsOptimalWithoutMilp) {
  RematProblem problem = uniformChain(4);
  problem.budgetBytes = 4;
  EXPECT_EQ(relaxationBound(problem).bound, 1.0);
  IlpResult cold = solve(problem);
  EXPECT_EQ(cold.status, IlpStatusKind::Optimal);
  EXPECT_TRUE(cold.settledByBound);
  EXPECT_EQ(cold.cost.recomputeCost, 1);
  EXPECT_EQ(cold.gap, 0.0);
  IlpOptions options;
  options.warmStart = cold.schedule;
  IlpResult warm = solve(problem, options);
  EXPECT_EQ(warm.status, IlpStatusKind::Optimal);
  EXPECT_TRUE(warm.settledByBound);
  EXPECT_EQ(warm.cost.recomputeCost, 1);

  problem.budgetBytes = 3;
  EXPECT_TRUE(relaxationBound(problem).infeasible);
  IlpResult none = solve(problem);
  EXPECT_EQ(none.status, IlpStatusKind::Infeasible);
  EXPECT_TRUE(none.settledByBound);
}

/// `recomputeOnceSchedule` of `recomputed` peaks at `peakBytes`, first at
/// `peakStage`.
void expectOncePeak(const RematProblem &problem, const RematDag &dag,
                    const llvm::BitVector &recomputed, int64_t peakBytes,
                    int peakStage) {
  absl::StatusOr<ScheduleCost> cost = evaluateSchedule(
      problem, recomputeOnceSchedule(problem, dag, recomputed));
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_EQ(cost->peakBytes, peakBytes);
  EXPECT_EQ(cost->peakStage, peakStage);
}

/// `solve` proves `problem`'s optimum, `recompute` FLOPs (the exhaustive
/// search's), by a rounded schedule that meets the relaxation's bound.
void expectSettledByTheBound(const RematProblem &problem, int64_t recompute) {
  IlpResult result = solve(problem);
  EXPECT_EQ(result.status, IlpStatusKind::Optimal);
  EXPECT_TRUE(result.settledByBound);
  EXPECT_EQ(result.cost.recomputeCost, recompute);
  EXPECT_EQ(bruteForceOptimum(problem), recompute + sumOfCosts(problem));
}

// p (10 FLOPs, 2 bytes) feeds only x (1 byte), which k, the last gradient,
// reads; g (3 bytes) and m leave no room for x at stages 3 and 4, so p and
// x are recomputed: 11 FLOPs, the relaxation's bound. Recomputed at k's
// stage, they meet n (2 bytes): n, p and x are 5 bytes. A stage earlier,
// beside m (1 byte), they fit (4), and x stays for k beside n (3).
TEST(CheckmateIlpTest, RecomputationsMoveEarlierWhereTheyFit) {
  RematProblem problem;
  problem.nodes = {{10, 2, {}, false},  {1, 1, {0}, false}, {1, 1, {1}, false},
                   {1, 3, {2}, true},   {1, 1, {3}, true},  {1, 2, {4}, true},
                   {1, 0, {5, 1}, true}};
  problem.budgetBytes = 4;
  RecomputeBound bound = relaxationBound(problem);
  EXPECT_EQ(bound.bound, 11.0);
  llvm::BitVector both(7);
  both.set(0);
  both.set(1);
  RematDag dag = buildDag(problem);
  expectOncePeak(problem, dag, both, /*peakBytes=*/5, /*peakStage=*/6);
  auto fitted = fitRecomputeOnce(problem, dag, both);
  ASSERT_TRUE(fitted.has_value());
  EXPECT_TRUE(fitted->first.compute[5].test(0));
  EXPECT_TRUE(fitted->first.compute[5].test(1));
  EXPECT_EQ(fitted->second.peakBytes, 4);
  EXPECT_EQ(fitted->second.recomputeCost, 11);

  expectSettledByTheBound(problem, 11);
}

// f0 (1 byte) is read by the gradients g2 and g4; h3 (3 bytes) runs beside
// g2 (1 byte), so in 4 bytes f0 cannot be live at h3's step. Recomputed for
// its first backward reader, g2, it is live there (5 bytes), and no earlier
// stage helps. Kept from the forward pass for g2 and recomputed for g4
// instead (h3, f0 and g4: 4 bytes), it fits: 1 FLOP, the relaxation's
// bound.
TEST(CheckmateIlpTest, RecomputationsMoveAfterThePeakWhereTheyFit) {
  RematProblem problem;
  problem.nodes = {{1, 1, {}, false},
                   {100, 1, {0}, false},
                   {1, 1, {1, 0}, true},
                   {1, 3, {2}, true},
                   {1, 0, {3, 0}, true}};
  problem.budgetBytes = 4;
  EXPECT_EQ(relaxationBound(problem).bound, 1.0);
  llvm::BitVector first(5);
  first.set(0);
  RematDag dag = buildDag(problem);
  expectOncePeak(problem, dag, first, /*peakBytes=*/5, /*peakStage=*/3);
  auto fitted = fitRecomputeOnce(problem, dag, first);
  ASSERT_TRUE(fitted.has_value());
  EXPECT_FALSE(fitted->first.compute[2].test(0));
  EXPECT_TRUE(fitted->first.compute[4].test(0));
  EXPECT_TRUE(fitted->first.resident[2].test(0));
  EXPECT_FALSE(fitted->first.resident[3].test(0));
  EXPECT_EQ(fitted->second.peakBytes, 4);
  EXPECT_EQ(fitted->second.recomputeCost, 1);

  expectSettledByTheBound(problem, 1);
}

// Any set of nodes gives a valid schedule (the checker's rules, budget
// aside) that computes each node of the set read in the backward pass
// twice and every other node once.
// Where the relaxation's solution, rounded, does not fit, the relaxation at
// a budget lowered by the overshoot chooses more to recompute: without the
// MILP the solve still returns a schedule within the budget, no cheaper
// than the first bound, on random DAGs at budgets between the constants and
// the keep-everything peak.
TEST(CheckmateIlpTest, RelaxationAtALowerBudgetRoundsToAFittingSchedule) {
  std::mt19937 rng(2024);
  int unfit = 0, rescued = 0;
  for (int trial = 0; trial < 60; ++trial) {
    RematProblem problem = randomTrainingDag(rng, 5 + trial % 8,
                                             /*gradientsReadInputs=*/trial % 2);
    RematDag dag = buildDag(problem);
    absl::StatusOr<ScheduleCost> keepAll =
        evaluateSchedule(problem, keepAllSchedule(problem));
    ASSERT_TRUE(keepAll.ok()) << keepAll.status();
    for (int step = 1; step <= 3; ++step) {
      problem.budgetBytes =
          problem.constantBytes +
          (keepAll->peakBytes - problem.constantBytes) * step / 4;
      absl::StatusOr<RecomputeBound> lower = recomputeLowerBound(problem);
      ASSERT_TRUE(lower.ok()) << lower.status();
      if (lower->infeasible || lower->recomputed.none() ||
          fitRecomputeOnce(problem, dag, lower->recomputed))
        continue;
      ++unfit;
      IlpOptions options;
      options.searchMilp = false;
      IlpResult result = solve(problem, options);
      if (result.status == IlpStatusKind::NoSolution)
        continue;
      ++rescued;
      EXPECT_TRUE(checkSchedule(problem, result.schedule).ok())
          << "trial " << trial;
      EXPECT_GE(double(result.cost.recomputeCost), lower->bound)
          << "trial " << trial;
    }
  }
  RecordProperty("unfit", unfit);
  EXPECT_GT(rescued, 0) << unfit << " roundings did not fit";
}

TEST(CheckmateIlpTest, RecomputeOnceScheduleIsValidForAnySet) {
  std::mt19937 rng(4242);
  for (int trial = 0; trial < 30; ++trial) {
    RematProblem problem = randomTrainingDag(rng, 3 + trial % 6,
                                             /*gradientsReadInputs=*/trial % 2);
    int n = int(problem.nodes.size());
    RematDag dag = buildDag(problem);
    llvm::BitVector recomputed(n);
    for (int i = 0; i < n; ++i)
      if (!problem.nodes[i].backward && rng() % 2)
        recomputed.set(i);
    RematSchedule schedule = recomputeOnceSchedule(problem, dag, recomputed);
    absl::StatusOr<ScheduleCost> cost = evaluateSchedule(problem, schedule);
    ASSERT_TRUE(cost.ok()) << "trial " << trial << ": " << cost.status();
    for (int i = 0; i < n; ++i) {
      // randomTrainingDag's gradients read their op's output: every forward
      // node has a backward reader.
      int expected = recomputed.test(i) ? 2 : 1;
      EXPECT_EQ(computeCount(schedule, i), expected)
          << "trial " << trial << " node " << i;
    }
  }
}

// On the keep-everything schedule's compute rows, keepUntilRead gives its
// resident rows (each node from its stage to its last reader's), whatever
// resident bits it is handed.
TEST(CheckmateIlpTest, KeepUntilReadKeepsEachValueToItsLastReader) {
  std::mt19937 rng(77);
  for (int trial = 0; trial < 20; ++trial) {
    RematProblem problem = randomTrainingDag(rng, 2 + trial % 7,
                                             /*gradientsReadInputs=*/trial % 2);
    RematSchedule expected = keepAllSchedule(problem);
    RematSchedule schedule = expected;
    for (llvm::BitVector &row : schedule.resident)
      row.set();
    keepUntilRead(problem, schedule);
    EXPECT_EQ(schedule.resident, expected.resident) << "trial " << trial;
  }
}

// f0 of recomputedTwiceProblem computed again at stages 5 and 8, where g5
// and g8 read it: only f1 and g2 read the first copy, so f0 is resident at
// stages 1 and 2 alone, and every other node at its one reader's stage,
// the next. That is ValueRecomputedTwice's optimum in 4 bytes.
TEST(CheckmateIlpTest, KeepUntilReadServesEachReadFromTheNewestCopy) {
  RematProblem problem = recomputedTwiceProblem();
  RematSchedule schedule = RematSchedule::empty(9);
  for (int t = 0; t < 9; ++t)
    schedule.compute[t].set(t);
  schedule.compute[5].set(0);
  schedule.compute[8].set(0);
  keepUntilRead(problem, schedule);
  for (int t = 0; t < 9; ++t) {
    llvm::BitVector expected(9);
    if (t > 0)
      expected.set(t - 1);
    if (t == 2)
      expected.set(0);
    EXPECT_EQ(schedule.resident[t], expected) << "stage " << t;
  }
  problem.budgetBytes = 4;
  absl::StatusOr<ScheduleCost> cost = checkSchedule(problem, schedule);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_EQ(cost->cost, 110);
}

TEST(CheckmateIlpTest, WarmStartKeepsOptimum) {
  RematProblem problem = uniformChain(4);
  problem.budgetBytes = 5;
  IlpOptions options;
  options.warmStart = keepAllSchedule(problem);
  IlpResult result = solve(problem, options);
  EXPECT_EQ(result.status, IlpStatusKind::Optimal);
  EXPECT_EQ(result.cost.cost, 8);
}

// Starting from the 4-byte plan of ValueRecomputedTwice (110) in 5 bytes,
// the solver still finds the 108 that keeps f0.
TEST(CheckmateIlpTest, WarmStartFromWorsePlanImproves) {
  RematProblem problem = recomputedTwiceProblem();
  problem.budgetBytes = 4;
  IlpResult tight = solve(problem);
  ASSERT_EQ(tight.status, IlpStatusKind::Optimal);
  problem.budgetBytes = 5;
  IlpOptions options;
  options.warmStart = tight.schedule;
  options.logLevel = 1;
  ::testing::internal::CaptureStderr();
  IlpResult result = solve(problem, options);
  // CBC accepted the start: its rematerialization cost is 2.
  EXPECT_NE(::testing::internal::GetCapturedStderr().find(
                "MIPStart provided solution with cost 2"),
            std::string::npos);
  EXPECT_EQ(result.status, IlpStatusKind::Optimal);
  EXPECT_EQ(result.cost.cost, 108);
}

TEST(CheckmateIlpTest, WarmStartOverBudgetIsAnError) {
  RematProblem problem = uniformChain(4);
  problem.budgetBytes = 4;
  IlpOptions options;
  options.warmStart = keepAllSchedule(problem);
  absl::StatusOr<IlpResult> result = solveCheckmateIlp(problem, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "ilp warm start: ilp schedule: stage 4: 5 bytes live while "
            "computing node 4, over the budget of 4");
}

// CBC's own assertions abort the process that runs them (CbcCutGenerator's
// did on DenseNet-121, with a relaxation tried and not kept). Here every CBC
// solve aborts, and the ILP goes on: the warm start comes back unproven,
// the failure named; without a start, no schedule and no claim that none
// fits.
TEST(CheckmateIlpTest, ASolverAbortLeavesTheWarmStart) {
  RematProblem problem = recomputedTwiceProblem();
  problem.budgetBytes = 4;
  IlpResult optimum = solve(problem);
  ASSERT_EQ(optimum.status, IlpStatusKind::Optimal);
  EXPECT_EQ(optimum.solverFailure, "");
  IlpOptions options;
  options.inSolverProcess = [] {
    rlimit noCore = {0, 0};
    setrlimit(RLIMIT_CORE, &noCore);
    std::abort();
  };
  options.warmStart = optimum.schedule;
  IlpResult started = solve(problem, options);
  EXPECT_EQ(started.status, IlpStatusKind::Feasible);
  EXPECT_EQ(started.cost.cost, optimum.cost.cost);
  EXPECT_EQ(started.schedule.compute, optimum.schedule.compute);
  EXPECT_EQ(started.bestBound, 0.0);
  EXPECT_EQ(started.solverFailure, "CBC ended on signal 6 (Aborted)");

  options.warmStart.reset();
  IlpResult cold = solve(problem, options);
  EXPECT_EQ(cold.status, IlpStatusKind::NoSolution);
  EXPECT_EQ(cold.solverFailure, "CBC ended on signal 6 (Aborted)");
}

// The MILP has O(N^2) columns: 4,002 nodes would need 44 million, tens of
// GB. It is not built; the warm start comes back, unproven (the
// relaxation too is not solved above 4,000 nodes), and the result says why.
// Windows of the MILP (IlpOptions::neighborhoods) from the schedule that
// recomputes every forward value once: each result is checked exactly
// (`solve`), never costs more than its start nor less than the exhaustive
// optimum, and where the start is not already optimal the windows reach
// the optimum on most of these small DAGs. They cannot on all: a window
// recomputes a value only where something reads it, and the optimum may
// compute one earlier, beside its inputs, and keep it.
TEST(CheckmateIlpTest, WindowsImproveTheStartTowardsTheOptimum) {
  std::mt19937 rng(5150);
  int improvable = 0, reached = 0;
  for (int trial = 0; trial < 24; ++trial) {
    RematProblem problem = randomTrainingDag(rng, 3 + trial % 5,
                                             /*gradientsReadInputs=*/trial % 2);
    RematDag dag = buildDag(problem);
    llvm::BitVector everything(int(problem.nodes.size()));
    for (int i = 0, f = numForward(problem); i < f; ++i)
      everything.set(i);
    RematSchedule start = recomputeOnceSchedule(problem, dag, everything);
    problem.budgetBytes = INT64_MAX / 2;
    absl::StatusOr<ScheduleCost> startCost = checkSchedule(problem, start);
    ASSERT_TRUE(startCost.ok()) << startCost.status();
    absl::StatusOr<ScheduleCost> keepAll =
        checkSchedule(problem, keepAllSchedule(problem));
    ASSERT_TRUE(keepAll.ok()) << keepAll.status();
    for (int64_t budget :
         {startCost->peakBytes, (startCost->peakBytes + keepAll->peakBytes) / 2,
          keepAll->peakBytes - 1}) {
      // Recomputing everything does not always lower the peak.
      if (budget < startCost->peakBytes)
        continue;
      SCOPED_TRACE(::testing::Message()
                   << "trial " << trial << " budget " << budget);
      problem.budgetBytes = budget;
      std::optional<int64_t> optimum = bruteForceOptimum(problem);
      ASSERT_TRUE(optimum.has_value());
      IlpOptions options;
      options.warmStart = start;
      options.neighborhoods = true;
      IlpResult result = solve(problem, options);
      ASSERT_TRUE(result.status == IlpStatusKind::Optimal ||
                  result.status == IlpStatusKind::Feasible);
      EXPECT_GE(result.cost.cost, *optimum);
      EXPECT_LE(result.cost.recomputeCost, startCost->recomputeCost);
      EXPECT_LE(result.bestBound, double(result.cost.recomputeCost));
      if (result.settledByBound || result.neighborhoods == 0)
        continue;
      ++improvable;
      reached += result.cost.cost == *optimum;
    }
  }
  RecordProperty("improvable", improvable);
  RecordProperty("reached", reached);
  EXPECT_GE(improvable, 20);
  EXPECT_GE(reached, improvable * 3 / 4);
}

// A window's restricted MILP starts from its schedule: solved with no
// branching at all, it returns a schedule no dearer, and its columns grow
// with the window, not with the square of the chain.
TEST(CheckmateIlpTest, AWindowsModelIsSmallAndStartsFromItsSchedule) {
  RematProblem problem = uniformChain(400);
  RematDag dag = buildDag(problem);
  llvm::BitVector everyOther(int(problem.nodes.size()));
  for (int i = 0; i < 400; i += 2)
    everyOther.set(i);
  RematSchedule start = recomputeOnceSchedule(problem, dag, everyOther);
  problem.budgetBytes = INT64_MAX / 2;
  absl::StatusOr<ScheduleCost> startCost = checkSchedule(problem, start);
  ASSERT_TRUE(startCost.ok()) << startCost.status();
  problem.budgetBytes = startCost->peakBytes;
  std::vector<int> window = {100, 101, 102, 103, 104, 105, 106, 107};
  NeighborhoodModel model =
      buildNeighborhoodModel(problem, dag, start, window);
  ASSERT_EQ(model.freeNodes.size(), window.size());
  // A free node of the chain may be computed at its readers' stages: the
  // next op's (its own stage and its recomputation, when there is one) and
  // its gradient's and the next gradient's, which read it.
  // A free reader's stages are its input's too: the first node of the
  // window gathers two from each node after it.
  for (size_t j = 0; j < window.size(); ++j) {
    const NeighborhoodModel::FreeNode &free = model.freeNodes[j];
    EXPECT_EQ(free.node, window[j]);
    EXPECT_LE(free.recomputeStages.size(), 2 * (window.size() - j) + 2);
    EXPECT_EQ(free.events.front(), free.node);
  }
  EXPECT_LT(model.columns.size(), 40 * 800);
  IlpOptions options;
  options.timeLimitSeconds = 60;
  options.maxNodes = 0;
  CbcOutcome outcome =
      solveRows(model.rows, model.columns, options, model.start);
  ASSERT_FALSE(outcome.values.empty()) << outcome.failure;
  absl::StatusOr<ScheduleCost> cost = checkSchedule(
      problem, neighborhoodSchedule(model, start, outcome.values));
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_LE(cost->recomputeCost, startCost->recomputeCost);
}

// Past the MILP's size the windows search from the warm start: the
// schedule is checked exactly, never dearer than the start, and the result
// says why the MILP was not built.
TEST(CheckmateIlpTest, AMilpTooLargeToBuildIsSearchedInWindows) {
  RematProblem problem = uniformChain(2001);
  RematDag dag = buildDag(problem);
  llvm::BitVector everyOther(problem.nodes.size());
  for (int i = 0; i < 2000; i += 2)
    everyOther.set(i);
  RematSchedule start = recomputeOnceSchedule(problem, dag, everyOther);
  problem.budgetBytes = INT64_MAX / 2;
  absl::StatusOr<ScheduleCost> startCost = checkSchedule(problem, start);
  ASSERT_TRUE(startCost.ok()) << startCost.status();
  ASSERT_EQ(startCost->recomputeCost, 1000);
  problem.budgetBytes = startCost->peakBytes;
  IlpOptions options;
  options.warmStart = start;
  // The first window runs whatever the limit; the rest are cut short.
  options.timeLimitSeconds = 2;
  absl::StatusOr<IlpResult> result = solveCheckmateIlp(problem, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, IlpStatusKind::Feasible);
  absl::StatusOr<ScheduleCost> cost = checkSchedule(problem, result->schedule);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_EQ(cost->recomputeCost, result->cost.recomputeCost);
  EXPECT_LE(result->cost.recomputeCost, 1000);
  EXPECT_GE(result->neighborhoods, 1);
  EXPECT_EQ(result->bestBound, 0.0);
  // R and U: N(N+1)/2 columns each, S: N(N-1)/2, FREE: (N - k) for each
  // of node k's inputs and itself, N = 4,002.
  EXPECT_EQ(result->milpSkipped,
            "the MILP of 4002 nodes would have 44046011 columns, more than "
            "the 4000000 it is built with");
}

// 30 ops and their 30 gradients in 20 of the 31 bytes that keeping
// everything needs.
TEST(CheckmateIlpTest, SixtyNodeChainIsProvenOptimal) {
  RematProblem problem = uniformChain(30);
  problem.budgetBytes = INT64_MAX / 2;
  absl::StatusOr<ScheduleCost> keepAll =
      checkSchedule(problem, keepAllSchedule(problem));
  ASSERT_TRUE(keepAll.ok());
  // Forward values 0..29 are live together at stage 30: 31 bytes.
  EXPECT_EQ(keepAll->peakBytes, 31);
  problem.budgetBytes = 20;
  IlpOptions options;
  std::vector<IlpProgress> progress;
  options.onProgress = [&](const IlpProgress &p) { progress.push_back(p); };
  IlpResult result = solve(problem, options);
  EXPECT_EQ(result.status, IlpStatusKind::Optimal);
  EXPECT_GT(result.cost.recomputeCost, 0);
  EXPECT_EQ(result.gap, 0.0);
  // Each incumbent reported is a schedule at least as costly as the optimum
  // and each bound at most the optimum.
  ASSERT_FALSE(progress.empty());
  bool sawIncumbent = false;
  for (const IlpProgress &p : progress) {
    EXPECT_LE(p.bound, double(result.cost.recomputeCost) + 1e-6);
    if (p.incumbent) {
      sawIncumbent = true;
      EXPECT_GE(*p.incumbent, double(result.cost.recomputeCost) - 1e-6);
    }
  }
  EXPECT_TRUE(sawIncumbent);
}

// A run cut short by its time limit proves nothing infeasible, whatever CBC's
// driver reports from an unfinished root: the 60-node chain fits in 17 bytes
// (its optimum at 17 takes seconds), so with a limit of a millisecond the
// outcome is no schedule, or one within the budget, never "infeasible".
TEST(CheckmateIlpTest, TimeLimitIsNeverInfeasibility) {
  RematProblem problem = uniformChain(30);
  problem.budgetBytes = 17;
  IlpOptions options;
  options.timeLimitSeconds = 1e-3;
  absl::StatusOr<IlpResult> result = solveCheckmateIlp(problem, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->status, IlpStatusKind::Infeasible);
  if (result->status != IlpStatusKind::NoSolution) {
    absl::StatusOr<ScheduleCost> cost =
        checkSchedule(problem, result->schedule);
    ASSERT_TRUE(cost.ok()) << cost.status();
    EXPECT_LE(cost->peakBytes, 17);
  }
}

// A node limit stops the search at the same point whatever the machine's
// speed: two runs give the same outcome and schedule, and a run it stops is
// no proof of infeasibility (the chain fits in 17 bytes).
TEST(CheckmateIlpTest, NodeLimitGivesTheSamePlanEveryRun) {
  RematProblem problem = uniformChain(30);
  problem.budgetBytes = 17;
  IlpOptions options;
  options.maxNodes = 1;
  IlpResult first = solve(problem, options);
  IlpResult second = solve(problem, options);
  EXPECT_NE(first.status, IlpStatusKind::Infeasible);
  EXPECT_EQ(first.status, second.status);
  EXPECT_EQ(first.cost.recomputeCost, second.cost.recomputeCost);
  EXPECT_EQ(first.schedule.compute, second.schedule.compute);
  EXPECT_EQ(first.schedule.resident, second.schedule.resident);
}

// CBC's driver prints on stdout by itself; the library keeps stdout clean and
// logs on stderr only when asked.
TEST(CheckmateIlpTest, LogGoesToStderrOnlyWhenAsked) {
  RematProblem problem = uniformChain(4);
  problem.budgetBytes = 4;
  IlpOptions options;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(solve(problem, options).cost.cost, 9);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");

  options.logLevel = 1;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(solve(problem, options).cost.cost, 9);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("Optimal solution"),
            std::string::npos);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
}

TEST(CheckmateIlpTest, CheckerReportsBrokenRules) {
  RematProblem problem = uniformChain(4);
  problem.budgetBytes = 5;
  auto expectError = [&](const RematSchedule &schedule,
                         const std::string &message) {
    absl::StatusOr<ScheduleCost> cost = checkSchedule(problem, schedule);
    ASSERT_FALSE(cost.ok());
    EXPECT_EQ(cost.status().message(), message);
  };
  RematSchedule schedule = keepAllSchedule(problem);
  absl::StatusOr<ScheduleCost> cost = checkSchedule(problem, schedule);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->cost, 8);
  EXPECT_EQ(cost->peakBytes, 5);
  EXPECT_EQ(cost->peakStage, 4);

  RematSchedule missing = schedule;
  missing.resident[6].reset(0);
  missing.resident[7].reset(0);
  expectError(missing, "ilp schedule: stage 6: node 6 reads node 0, which "
                       "is not in memory");
  RematSchedule backwardTwice = schedule;
  backwardTwice.compute[5].set(4);
  expectError(backwardTwice, "ilp schedule: stage 5: recomputes backward "
                             "node 4");
  RematSchedule doubled = schedule;
  doubled.compute[6].set(1);
  expectError(doubled, "ilp schedule: stage 6: recomputes node 1, which it "
                       "holds");
  RematSchedule keptFromNowhere = schedule;
  keptFromNowhere.resident[3].reset(0);
  expectError(keptFromNowhere,
              "ilp schedule: stage 3: keeps node 0, which it does not hold");
  RematSchedule skipped = schedule;
  skipped.compute[2].reset(2);
  expectError(skipped, "ilp schedule: stage 2: does not compute its own node");
  problem.budgetBytes = 4;
  expectError(schedule, "ilp schedule: stage 4: 5 bytes live while "
                        "computing node 4, over the budget of 4");
}

TEST(CheckmateIlpTest, MalformedProblemsAreErrors) {
  RematProblem problem = uniformChain(2);
  problem.nodes[1].deps = {1};
  EXPECT_EQ(validateProblem(problem).message(),
            "ilp problem: node 1 reads node 1, which is not earlier");
  problem = uniformChain(2);
  std::swap(problem.nodes[1], problem.nodes[2]);
  problem.nodes[1].deps.clear();
  problem.nodes[2].deps.clear();
  EXPECT_EQ(validateProblem(problem).message(),
            "ilp problem: forward node 2 comes after a backward node");
  problem = uniformChain(2);
  problem.nodes[0].bytes = INT64_MAX;
  EXPECT_EQ(solveCheckmateIlp(problem).status().message(),
            "ilp problem: total bytes overflow int64");
}

} // namespace
} // namespace remat::ilp

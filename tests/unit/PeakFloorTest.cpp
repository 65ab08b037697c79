//===- PeakFloorTest.cpp - The lower bound on every plan's peak -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `computePeakFloor`: hand-derived floors on small graphs, a hand-written
/// schedule that reaches the floor exactly, every planner's built and
/// executor-measured peak at or above the floor on random graphs and zoo
/// models at random budgets, and a located error where bytes overflow.
///
//===----------------------------------------------------------------------===//

#include "MeasuredTraining.h"
#include "ParsedGraph.h"
#include "RandomGraphs.h"
#include "SmallZooModels.h"

#include "remat/Analysis/PeakFloor.h"
#include "remat/IR/Builder.h"
#include "remat/Pass/Autodiff.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

namespace remat {
namespace {

/// A plain training graph and its floor, whose op is the graph's.
struct Floored {
  std::unique_ptr<Graph> training;
  PeakFloor floor;
};

/// The floor of `forward`'s plain training graph, differentiated on a copy
/// apart from any budget search.
Floored floorOf(const Graph &forward, const AutodiffOptions &autodiff = {}) {
  Floored result{forward.clone()};
  unsigned forwardOpIdBound = result.training->opIdBound();
  absl::StatusOr<AutodiffResult> gradients =
      differentiate(*result.training, autodiff);
  EXPECT_TRUE(gradients.ok()) << gradients.status();
  absl::StatusOr<PeakFloor> floor =
      computePeakFloor(*result.training, forwardOpIdBound);
  EXPECT_TRUE(floor.ok()) << floor.status();
  if (floor.ok())
    result.floor = *floor;
  return result;
}

// On kTanhChain (ParsedGraph.h) autodiff appends a scalar constant seed, its
// view, `%d.grad = broadcast` (16 bytes) and one `tanh_grad(y, dy)` per layer,
// down to the output `%x.grad`.
TEST(PeakFloorTest, AnOpsOwnStepOnAChain) {
  std::unique_ptr<Graph> forward = parsed(kTanhChain);
  ASSERT_TRUE(forward);
  Floored floored = floorOf(*forward);
  const PeakFloor &floor = floored.floor;
  // Every step holds the param (16). `%c.grad = tanh_grad(%d, %d.grad)`
  // holds %d, %d.grad and itself beside it: 16 + 3 x 16 = 64, as do the
  // later tanh_grads; the forward tanh hold two values (48). With every
  // output live, the least last producer is the loss (16 of leaves, 4 + 16
  // of outputs, its operand %d 16 = 52): under 64.
  EXPECT_EQ(floor.leafBytes, 16);
  EXPECT_EQ(floor.outputBytes, 20);
  EXPECT_EQ(floor.bytes, 64);
  ASSERT_NE(floor.op, nullptr);
  EXPECT_EQ(floor.op->result()->name(), "c.grad");
  EXPECT_FALSE(floor.lastOutput);
}

TEST(PeakFloorTest, EveryOutputLiveAtTheLastOne) {
  // Two 256-byte params multiplied: the gradients of both are outputs.
  std::unique_ptr<Graph> forward = parsed(R"(graph @pair {
  param %w : f32[64]
  param %v : f32[64]
  %a = mul(%w, %v) : f32[64]
  %loss = reduce_sum(%a) {axes = [0]} : f32[]
  output %loss
})");
  ASSERT_TRUE(forward);
  PeakFloor floor = floorOf(*forward).floor;
  // Leaves 512; outputs %loss 4, %w.grad and %v.grad 256 each = 516.
  // Whichever output comes last, its producer reads a 256-byte value that
  // is no output: %loss reads %a; `%w.grad = mul(%a.grad, %v)` and
  // `%v.grad = mul(%a.grad, %w)` read %a.grad. So 512 + 516 + 256 = 1284,
  // over any one op's step (512 + 3 x 256 at most).
  EXPECT_EQ(floor.leafBytes, 512);
  EXPECT_EQ(floor.outputBytes, 516);
  EXPECT_EQ(floor.bytes, 1284);
  EXPECT_TRUE(floor.lastOutput);
  // Plain autodiff's schedule reaches it.
  std::unique_ptr<Graph> plain = forward->clone();
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*plain, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->peakBytesAfter, 1284);
}

TEST(PeakFloorTest, GradientsWaitingForTheirReaders) {
  // %w is read twice: autodiff sums two 64-byte partial gradients,
  // `%w.grad = add_n(%mul, %mul.2)`, which reach it through gradient values
  // alone from `%b.grad = broadcast` and `%a.grad = mul(%b.grad, %v)`.
  std::unique_ptr<Graph> forward = parsed(R"(graph @shared {
  param %w : f32[16]
  param %v : f32[16]
  %a = mul(%w, %w) : f32[16]
  %b = mul(%a, %v) : f32[16]
  %loss = reduce_sum(%b) {axes = [0]} : f32[]
  output %loss
})");
  ASSERT_TRUE(forward);
  Floored floored = floorOf(*forward);
  const PeakFloor &floor = floored.floor;
  // Params 128. At %w.grad's step: the two partials and %w.grad (192),
  // and %b.grad (64) unless its other reader, `%v.grad = mul(%b.grad, %a)`,
  // ran before, in which case the output %v.grad (64) is live: 384. %a.grad
  // adds nothing: its readers are the partials, which run before. One op's
  // step alone gives 128 + 192 = 320; the least last output is %loss's
  // producer with %b: 128 + 132 of outputs + 64 = 324.
  EXPECT_EQ(floor.bytes, 384);
  ASSERT_NE(floor.op, nullptr);
  EXPECT_EQ(floor.op->result()->name(), "w.grad");
  EXPECT_FALSE(floor.lastOutput);
  // A plan reaches it: the executor measures 384 for `sqrtn=1`.
  std::optional<MeasuredTraining> built =
      measureTraining(*forward, "sqrtn=1", "384B", 2);
  ASSERT_TRUE(built);
  EXPECT_EQ(built->planned.peakBytes, 384);
}

TEST(PeakFloorTest, RecomputingEveryValueForEachGradientReachesIt) {
  // Before each tanh_grad, the schedule recomputes the chain from %x up to
  // the value it reads; the forward pass itself then runs last. Every step
  // holds %x and at most three 16-byte values: x, y, dy, dx at a tanh_grad,
  // x, dy and two chain values while recomputing, x, x.grad and two chain
  // values in the final forward: 64 bytes, the floor, which the executor
  // measures too.
  std::unique_ptr<Graph> forward = parsed(kTanhChain);
  ASSERT_TRUE(forward);
  std::optional<MeasuredTraining> built = measureTraining(
      *forward, "schedule=c.grad:a+b+c+d,b.grad:a+b+c,a.grad:a+b,x.grad:a",
      "64B", 1);
  ASSERT_TRUE(built);
  EXPECT_EQ(built->report.peakFloorBytes, 64);
  EXPECT_EQ(built->report.budgetMet, true);
  EXPECT_EQ(built->planned.peakBytes, 64);
  EXPECT_EQ(built->report.maxRecomputations, 4);
}

/// Builds `forward` with `planner` at `budget`; the report's floor must be
/// the one computed apart, and the built peak at least that.
void expectAtOrAboveFloor(const Graph &forward, const PeakFloor &floor,
                          const std::string &planner,
                          const std::string &budget) {
  SCOPED_TRACE(planner + " at " + budget);
  TrainingOptions options;
  options.planner = planner;
  options.budget = budget;
  std::unique_ptr<Graph> graph = forward.clone();
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->peakFloorBytes, floor.bytes);
  EXPECT_GE(report->peakBytesAfter, floor.bytes);
  EXPECT_GE(report->peakBytesBefore, floor.bytes);
  // Below the floor nothing fits, and the warning says so.
  if (*report->budgetBytes < floor.bytes) {
    EXPECT_EQ(report->budgetMet, false);
    ASSERT_FALSE(report->warnings.empty());
    EXPECT_NE(report->warnings.back().find("no plan can fit"),
              std::string::npos)
        << report->warnings.back();
  }
}

/// Every planner that plans for a budget, and those that choose alone.
const char *const kPlanners[] = {"auto",   "chain",     "chain=late", "sqrtn",
                                 "memory", "all",       "speed",      "xla",
                                 "mincut", "ap-greedy", "ap-sqrtn",   "ilp"};

TEST(PeakFloorTest, NoPlannerGoesBelowItOnRandomGraphs) {
  std::mt19937 random(20261125);
  int belowFloorBudgets = 0;
  for (int round = 0; round < 20; ++round) {
    std::unique_ptr<Graph> forward = randomGraph(random, 6 + random() % 12);
    ASSERT_TRUE(forward);
    PeakFloor floor = floorOf(*forward).floor;
    // Budgets from 20% to 99% of plain autodiff's peak.
    std::string budget = std::to_string(20 + random() % 80) + "%";
    SCOPED_TRACE(fmt::format("round {}", round));
    for (const char *planner : kPlanners)
      expectAtOrAboveFloor(*forward, floor, planner, budget);
    TrainingOptions options;
    options.budget = budget;
    std::unique_ptr<Graph> graph = forward->clone();
    absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
    ASSERT_TRUE(report.ok());
    belowFloorBudgets += *report->budgetBytes < floor.bytes;
  }
  // Some budgets are under the floor, some over: both branches are seen.
  EXPECT_GT(belowFloorBudgets, 0);
  EXPECT_LT(belowFloorBudgets, 20);
}

TEST(PeakFloorTest, TheExecutorMeasuresNoPlanBelowItOnZooModels) {
  std::mt19937 random(2611);
  for (const auto &[name, options] : executableZooModels()) {
    SCOPED_TRACE(name);
    std::unique_ptr<Graph> forward = zooModel(name, options);
    ASSERT_TRUE(forward);
    PeakFloor floor = floorOf(*forward).floor;
    EXPECT_GT(floor.bytes, floor.leafBytes);
    // `auto` may also plan the graph with partial gradients summed at once
    // (strategies.md#budgets): its floor is then the lower of the two.
    AutodiffOptions summed;
    summed.aggregateCount = 2;
    summed.aggregateBytes = 0;
    int64_t summedFloor = floorOf(*forward, summed).floor.bytes;
    std::string budget = std::to_string(20 + random() % 70) + "%";
    for (const char *planner :
         {"auto", "chain", "sqrtn", "all", "xla", "regions", "memory"}) {
      SCOPED_TRACE(std::string(planner) + " at " + budget);
      std::optional<MeasuredTraining> built =
          measureTraining(*forward, planner, budget, 7);
      ASSERT_TRUE(built);
      ASSERT_TRUE(built->report.peakFloorBytes.has_value());
      int64_t reported = *built->report.peakFloorBytes;
      if (llvm::StringRef(planner) == "auto" && reported != floor.bytes)
        EXPECT_EQ(reported, std::min(floor.bytes, summedFloor));
      else
        EXPECT_EQ(reported, floor.bytes);
      EXPECT_GE(built->planned.peakBytes, reported);
      EXPECT_GE(built->plain.peakBytes, floor.bytes);
    }
  }
}

TEST(PeakFloorTest, BytesOverInt64AreALocatedError) {
  // An f32[2^60] input (2^62 bytes) and its double: each type has a size,
  // but the input live beside the sum passes 2^63 - 1. The verifier would
  // refuse this graph; the floor refuses it on its own, naming the op.
  Graph graph("huge");
  Builder b(graph);
  const Type huge(DType::F32, {int64_t(1) << 60});
  Value *x = b.input("x", huge);
  b.op("add", {x, x}, {}, "sum");
  ASSERT_TRUE(b.status().ok()) << b.status();
  absl::StatusOr<PeakFloor> floor = computePeakFloor(graph, graph.opIdBound());
  ASSERT_FALSE(floor.ok());
  EXPECT_NE(floor.status().message().find("overflow int64"), std::string::npos)
      << floor.status();
  EXPECT_NE(floor.status().message().find("%sum = add"), std::string::npos)
      << floor.status();
}

} // namespace
} // namespace remat

//===- BlockChainTest.cpp - A training graph as a chain of blocks ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `buildBlockChain` on a hand-written graph whose blocks, sizes and stage
/// boundaries are derived by hand below, and `stepsOfChain` on a schedule
/// written by hand.
///
//===----------------------------------------------------------------------===//

#include "Planning/Chain/BlockChain.h"

#include "remat/IO/TextFormat.h"
#include "remat/Pass/Planner.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Autodiff.h"

#include <gtest/gtest.h>

namespace remat::chain {
namespace {

/// Five f32[4] values (16 bytes each); %c = add(%a, %b) skips over %b, so
/// the bottlenecks are %a, %c, %d and %e. The backward reads %a (sin's
/// gradient of %b), %c and %d (those of %d and %e): cos(%a), cos(%c),
/// cos(%d); it does not read %e, which so ends no block. The blocks: {a},
/// {b, c}, {d}, {e, loss}.
constexpr const char *kResidual = R"(graph @res {
  param %w : f32[4]
  input %x : f32[4]
  %a = mul(%x, %w)
  %b = sin(%a)
  %c = add(%a, %b)
  %d = sin(%c)
  %e = sin(%d)
  %loss = reduce_sum(%e)
  output %loss
}
)";

struct Fixture {
  std::unique_ptr<Graph> graph;
  PlanningProblem planning;
  problem::GraphProblem problem;
};

/// A matmul-sin layer of f32[64, 16] activations (4 KiB), then one of
/// f32[64, 64] (16 KiB): the peak comes early in the backward pass, before
/// the gradients of the weights (1 and 4 KiB) are made.
constexpr const char *kWide = R"(graph @wide {
  param %w0 : f32[16, 16]
  param %w1 : f32[16, 64]
  input %x : f32[64, 16]
  %a = matmul(%x, %w0)
  %b = sin(%a)
  %c = matmul(%b, %w1)
  %d = sin(%c)
  %loss = reduce_sum(%d)
  output %loss
}
)";

Fixture differentiated(const char *text = kResidual) {
  Fixture fixture;
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "test.remat");
  EXPECT_TRUE(graph.ok()) << graph.status();
  fixture.graph = std::move(*graph);
  fixture.planning.graph = fixture.graph.get();
  fixture.planning.forwardOpIdBound = fixture.graph->opIdBound();
  EXPECT_TRUE(differentiate(*fixture.graph).ok());
  fixture.problem = problem::buildGraphProblem(fixture.planning);
  return fixture;
}

/// The graph's gradient outputs (kResidual: w's, 16 bytes).
std::vector<const Value *> gradientOutputs(const Fixture &fixture) {
  std::vector<const Value *> outputs;
  for (const Value *output : fixture.graph->outputs())
    if (!fixture.planning.isForward(*output->producer()))
      outputs.push_back(output);
  return outputs;
}

/// The name of the first operand of the op of graph-problem node `node`.
std::string operandOf(const problem::GraphProblem &problem, int node) {
  return problem.ops[node].front()->operand(0)->name().str();
}

TEST(BlockChainTest, BlocksAreTheSpansBetweenBottlenecks) {
  Fixture fixture = differentiated();
  absl::StatusOr<BlockChain> chain =
      buildBlockChain(fixture.problem, gradientOutputs(fixture), 10);
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_EQ(chain->numBlocks, 4);
  ASSERT_EQ(chain->problem.stages.size(), 4u);
  std::vector<size_t> sizes;
  for (const std::vector<int> &nodes : chain->stageNodes)
    sizes.push_back(nodes.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 2, 1, 2}));

  // Each stage keeps what its backward reads, its output among it: 16
  // bytes; the last none (%e is not read, the loss is a forward output,
  // counted as constant). The gradient of a stage's input has the input's
  // size; the chain's input needs none.
  std::vector<int64_t> saved, output, gradient;
  for (const ChainStage &stage : chain->problem.stages) {
    saved.push_back(stage.savedBytes);
    output.push_back(stage.outputBytes);
    gradient.push_back(stage.gradientBytes);
  }
  EXPECT_EQ(saved, (std::vector<int64_t>{16, 16, 16, 0}));
  EXPECT_EQ(output, (std::vector<int64_t>{16, 16, 16, 0}));
  EXPECT_EQ(gradient, (std::vector<int64_t>{0, 16, 16, 16}));
  // mul, sin + add, sin, sin: 4 FLOPs per f32[4] elementwise op.
  EXPECT_EQ(chain->problem.stages[1].forwardCost, 8);
  EXPECT_EQ(chain->problem.stages[2].forwardCost, 4);
  // w and x, and the loss.
  EXPECT_EQ(chain->problem.constantBytes, 16 + 16 + 4);
  // w's gradient, mul(x, gradient of %a), reads no forward node: it comes
  // in the backward of the last stage to read one, stage 1 (whose backward
  // reads its input %a for cos(%a)), and lives from there.
  std::vector<int64_t> paramGradients;
  for (const ChainStage &stage : chain->problem.stages)
    paramGradients.push_back(stage.paramGradientBytes);
  EXPECT_EQ(paramGradients, (std::vector<int64_t>{0, 16, 0, 0}));

  // Stage k's backward starts where the first gradient op reads stage k's
  // input (cos of %a, %c); the last stage's at the first gradient node;
  // stage 0's reads only leaves, so its recomputations have nowhere to go.
  EXPECT_EQ(chain->firstBackwardNode[0], -1);
  EXPECT_EQ(operandOf(fixture.problem, chain->firstBackwardNode[1]), "a");
  EXPECT_EQ(operandOf(fixture.problem, chain->firstBackwardNode[2]), "c");
  EXPECT_FALSE(
      fixture.problem.problem.nodes[chain->firstBackwardNode[3] - 1].backward);
  EXPECT_TRUE(
      fixture.problem.problem.nodes[chain->firstBackwardNode[3]].backward);
}

// The chain planner holds parameter gradients throughout unless that admits
// no schedule: at the lowest peak of the chain with w's gradient counted
// from backward 1, which holding it from the start exceeds, the planner
// plans with it counted late and says so; with room for the held model, it
// plans as before, without the note; `chain=late` counts them late at once.
TEST(BlockChainTest, ThePlannerCountsParameterGradientsLateOnlyWhenItMust) {
  Fixture fixture = differentiated(kWide);
  absl::StatusOr<BlockChain> chain =
      buildBlockChain(fixture.problem, gradientOutputs(fixture), 32);
  ASSERT_TRUE(chain.ok()) << chain.status();
  ChainProblem late = chain->problem;
  ChainProblem held = late;
  for (ChainStage &stage : held.stages) {
    held.constantBytes += stage.paramGradientBytes;
    stage.paramGradientBytes = 0;
  }
  late.budgetBytes = held.budgetBytes = 1 << 20;
  absl::StatusOr<ChainResult> lateLowest = solveChainDpLowestPeak(late);
  absl::StatusOr<ChainResult> heldLowest = solveChainDpLowestPeak(held);
  ASSERT_TRUE(lateLowest.ok() && heldLowest.ok());
  ASSERT_LT(lateLowest->cost.peakBytes, heldLowest->cost.peakBytes);

  absl::StatusOr<std::unique_ptr<Planner>> planner =
      PlannerRegistry::global().create("chain");
  ASSERT_TRUE(planner.ok()) << planner.status();
  for (int64_t budget :
       {lateLowest->cost.peakBytes, heldLowest->cost.peakBytes}) {
    SCOPED_TRACE(budget);
    std::string progress;
    fixture.planning.budgetBytes = budget;
    fixture.planning.onProgress = [&](llvm::StringRef line) {
      progress += line.str();
    };
    absl::StatusOr<RematPlan> plan = (*planner)->plan(fixture.planning);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(plan->warnings.empty());
    EXPECT_EQ(progress.find("counted from their backward") != std::string::npos,
              budget < heldLowest->cost.peakBytes)
        << progress;
    ASSERT_TRUE(plan->modelledPeakBytes);
    EXPECT_LE(*plan->modelledPeakBytes, budget);
  }
  // Below the lowest peak of either model: the plan for the lowest peak, a
  // warning, and its peak by the late model, over the budget told, which
  // is what the budget search calibrates from.
  fixture.planning.budgetBytes = lateLowest->cost.peakBytes - 1;
  fixture.planning.onProgress = nullptr;
  absl::StatusOr<RematPlan> fallback = (*planner)->plan(fixture.planning);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_FALSE(fallback->budgetNotes.empty());
  ASSERT_TRUE(fallback->modelledPeakBytes);
  EXPECT_GE(*fallback->modelledPeakBytes, lateLowest->cost.peakBytes);

  // Told `late`, it counts them late whether or not holding them fits.
  absl::StatusOr<std::unique_ptr<Planner>> latePlanner =
      PlannerRegistry::global().create("chain=late");
  ASSERT_TRUE(latePlanner.ok()) << latePlanner.status();
  std::string progress;
  fixture.planning.budgetBytes = heldLowest->cost.peakBytes;
  fixture.planning.onProgress = [&](llvm::StringRef line) {
    progress += line.str();
  };
  absl::StatusOr<RematPlan> plan = (*latePlanner)->plan(fixture.planning);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NE(progress.find("counted from their backward"), std::string::npos)
      << progress;
}

/// A plan's steps as text: the op each goes before, then the ops it
/// recomputes, by their first result's name.
std::string stepsText(const RematPlan &plan) {
  std::string text = plan.plain ? "plain" : "";
  for (const RecomputeStep &step :
       plan.schedule.value_or(std::vector<RecomputeStep>{})) {
    text += " " + step.before->result(0)->name().str() + ":";
    for (const Op *op : step.ops)
      text += " " + op->result(0)->name().str();
  }
  return text;
}

TEST(BlockChainTest, APlannerKeptAcrossBudgetsAndGraphsPlansAsANewOne) {
  // `chain` keeps a graph's nodes and block chain between plans: one
  // planner told several budgets, then another graph, then the first
  // again, must plan exactly as a new planner per call.
  Fixture residual = differentiated(kResidual);
  Fixture wide = differentiated(kWide);
  absl::StatusOr<std::unique_ptr<Planner>> kept =
      PlannerRegistry::global().create("chain");
  ASSERT_TRUE(kept.ok()) << kept.status();
  int differentFromFirst = 0;
  std::string first;
  for (Fixture *fixture : {&residual, &wide, &residual}) {
    for (int64_t budget :
         {1 << 8, 1 << 9, 1 << 10, 1 << 12, 1 << 14, 1 << 16}) {
      SCOPED_TRACE(fixture->graph->name().str() + " " + std::to_string(budget));
      fixture->planning.budgetBytes = budget;
      absl::StatusOr<RematPlan> again = (*kept)->plan(fixture->planning);
      absl::StatusOr<std::unique_ptr<Planner>> fresh =
          PlannerRegistry::global().create("chain");
      ASSERT_TRUE(fresh.ok() && again.ok());
      absl::StatusOr<RematPlan> once = (*fresh)->plan(fixture->planning);
      ASSERT_TRUE(once.ok()) << once.status();
      EXPECT_EQ(stepsText(*again), stepsText(*once));
      EXPECT_EQ(again->modelledPeakBytes, once->modelledPeakBytes);
      EXPECT_EQ(again->warnings, once->warnings);
      EXPECT_EQ(again->budgetNotes, once->budgetNotes);
      if (first.empty())
        first = stepsText(*once);
      differentFromFirst += stepsText(*once) != first;
    }
  }
  // The budgets and graphs give different plans, or the check proves
  // nothing.
  EXPECT_GE(differentFromFirst, 4);
}

TEST(BlockChainTest, BlocksMergeIntoStagesOfBalancedBytes) {
  Fixture fixture = differentiated();
  // 80 bytes of forward values; the first stage closes once it holds
  // half: {a}, {b, c} (48 bytes), then {d}, {e, loss}.
  absl::StatusOr<BlockChain> chain = buildBlockChain(fixture.problem, gradientOutputs(fixture), 2);
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_EQ(chain->numBlocks, 4);
  ASSERT_EQ(chain->problem.stages.size(), 2u);
  EXPECT_EQ(chain->stageNodes[0].size(), 3u);
  EXPECT_EQ(chain->stageNodes[1].size(), 3u);
  // %a is read by the backward and %c is the output: 32 bytes; stage 1
  // keeps %d.
  EXPECT_EQ(chain->problem.stages[0].savedBytes, 32);
  EXPECT_EQ(chain->problem.stages[0].outputBytes, 16);
  EXPECT_EQ(chain->problem.stages[1].savedBytes, 16);
  EXPECT_EQ(chain->problem.stages[1].forwardCost, 4 + 4 + 4);
}

TEST(BlockChainTest, ForwardRunsAfterTheFirstBackwardBecomeSteps) {
  Fixture fixture = differentiated();
  absl::StatusOr<BlockChain> chain = buildBlockChain(fixture.problem, gradientOutputs(fixture), 10);
  ASSERT_TRUE(chain.ok()) << chain.status();
  // The forward pass, then stage 2 run again (from %c) before backward 2,
  // and stages 1, 2 and 1 again before backward 1: two steps, as a step
  // copies an op once.
  using K = ChainOpKind;
  const std::vector<std::pair<K, int>> ops = {
      {K::Forward, 0},  {K::Forward, 1}, {K::Forward, 2},  {K::Forward, 3},
      {K::Backward, 3}, {K::Forward, 2}, {K::Backward, 2}, {K::Forward, 1},
      {K::Forward, 2},  {K::Forward, 1}, {K::Backward, 1}, {K::Backward, 0}};
  ChainSchedule schedule;
  for (auto [kind, stage] : ops)
    schedule.ops.push_back({kind, stage, 0});
  std::vector<RecomputeStep> steps =
      stepsOfChain(fixture.problem, *chain, schedule);
  ASSERT_EQ(steps.size(), 3u);
  auto names = [](const RecomputeStep &step) {
    std::vector<std::string> result;
    for (const Op *op : step.ops)
      result.push_back(op->result(0)->name().str());
    return result;
  };
  EXPECT_EQ(names(steps[0]), (std::vector<std::string>{"d"}));
  EXPECT_EQ(steps[0].before->operand(0)->name(), "c");
  EXPECT_EQ(names(steps[1]), (std::vector<std::string>{"b", "c", "d"}));
  EXPECT_EQ(names(steps[2]), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(steps[1].before, steps[2].before);
  EXPECT_EQ(steps[1].before->operand(0)->name(), "a");
}

} // namespace
} // namespace remat::chain

//===- IlpGraphProblemTest.cpp - The ILP's memory model against the build -===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The training graph as the ILP's problem (`GraphModel::Scheduled`):
/// keeping everything, the MILP's memory model gives the plain graph's
/// simulated peak, never less (a plan that fits the model must fit once
/// built) and not much more (or budgets that fit would be called
/// infeasible). Autodiff's emission order held an LSTM's weight-gradient
/// terms to the end (40% over), and a batch norm's input gradient stayed live
/// with its parameter gradients (11% more over on the residual net).
///
//===----------------------------------------------------------------------===//

#include "Planning/ApBaselines.h"
#include "Planning/Problem/GraphProblem.h"

#include "MeasuredTraining.h"
#include "SmallZooModels.h"

#include "remat/Analysis/Memory.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Pass/Schedule.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

namespace remat {
namespace {

/// A zoo model differentiated as the planners see it, and its ILP problem
/// (`GraphModel::Scheduled`).
struct DifferentiatedModel {
  std::string name;
  std::unique_ptr<Graph> forward;
  std::unique_ptr<Graph> training;
  PlanningProblem planning;
  problem::GraphProblem graph;
};

std::optional<DifferentiatedModel>
differentiatedModel(const std::string &name, const ZooOptions &options) {
  DifferentiatedModel model;
  model.name = name;
  model.forward = zooModel(name, options);
  if (!model.forward)
    return std::nullopt;
  model.training = model.forward->clone();
  model.planning.forwardOpIdBound = model.training->opIdBound();
  absl::Status status = differentiate(*model.training).status();
  EXPECT_TRUE(status.ok()) << status;
  if (!status.ok())
    return std::nullopt;
  model.planning.graph = model.training.get();
  model.graph =
      problem::buildGraphProblem(model.planning, problem::GraphModel::Scheduled);
  return model;
}

/// `differentiatedModel` of every executable zoo model; a failure to build
/// one fails the test.
std::vector<DifferentiatedModel> differentiatedExecutableModels() {
  std::vector<DifferentiatedModel> models;
  for (const auto &[name, options] : executableZooModels())
    if (std::optional<DifferentiatedModel> model =
            differentiatedModel(name, options))
      models.push_back(std::move(*model));
  EXPECT_EQ(models.size(), executableZooModels().size());
  return models;
}

TEST(IlpGraphProblemTest, KeepingEverythingCostsThePlainGraphsPeak) {
  for (const DifferentiatedModel &model : differentiatedExecutableModels()) {
    SCOPED_TRACE(model.name);
    const problem::GraphProblem &graph = model.graph;
    absl::StatusOr<problem::ScheduleCost> modelled = problem::evaluateSchedule(
        graph.problem, problem::keepAllSchedule(graph.problem));
    ASSERT_TRUE(modelled.ok()) << modelled.status();

    std::unique_ptr<Graph> plain = model.training->clone();
    ASSERT_TRUE(scheduleForMemory(*plain).ok());
    int64_t simulated = simulateMemory(*plain).peakBytes;
    EXPECT_GE(modelled->peakBytes, simulated);
    EXPECT_LE(modelled->peakBytes, simulated + simulated / 50);
  }
}

// The steps that realise a schedule with recomputations (AP-sqrtn's, which
// reruns segments in the backward pass) map back to its compute rows, at
// the same cost and no higher a peak (a value is kept only to its reads).
TEST(IlpGraphProblemTest, StepsMapBackToTheirSchedule) {
  int recomputing = 0;
  for (const DifferentiatedModel &model : differentiatedExecutableModels()) {
    SCOPED_TRACE(model.name);
    const problem::GraphProblem &graph = model.graph;
    absl::StatusOr<chain::BaselineSchedule> sqrtn =
        chain::sqrtnSchedule(graph.problem);
    ASSERT_TRUE(sqrtn.ok()) << sqrtn.status();
    std::vector<RecomputeStep> steps = problem::stepsOf(graph, sqrtn->schedule);
    recomputing += !steps.empty();

    std::optional<problem::RematSchedule> back = problem::scheduleOfSteps(graph, steps);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->compute, sqrtn->schedule.compute);
    absl::StatusOr<problem::ScheduleCost> cost =
        problem::evaluateSchedule(graph.problem, *back);
    ASSERT_TRUE(cost.ok()) << cost.status();
    EXPECT_EQ(cost->cost, sqrtn->cost.cost);
    EXPECT_LE(cost->peakBytes, sqrtn->cost.peakBytes);
  }
  EXPECT_GT(recomputing, 0);
}

/// `steps` spelled as the `schedule=` planner reads them.
std::string scheduleSpelling(llvm::ArrayRef<RecomputeStep> steps) {
  std::string text = "schedule=";
  for (const RecomputeStep &step : steps) {
    if (text.back() != '=')
      text += ',';
    text += step.before->result(0)->name().str() + ":";
    for (size_t i = 0; i < step.ops.size(); ++i)
      text += (i ? "+" : "") + step.ops[i]->result(0)->name().str();
  }
  return text;
}

// Random schedules over the nodes (each forward node computed again at a
// random tenth of the later stages, forward ones included; S from
// keepUntilRead), spelled as `schedule=` plans and built: the gradients are
// plain autodiff's, the executor measures the simulated peak, and the built
// graph peaks no higher than the model says. A copy in the backward pass of
// an op whose input was recomputed in the forward pass once read that older
// copy, which then stayed live from the forward pass.
TEST(IlpGraphProblemTest, RandomSchedulesBuildWithinTheirModelledPeak) {
  std::mt19937 rng(11);
  for (const DifferentiatedModel &model : differentiatedExecutableModels()) {
    SCOPED_TRACE(model.name);
    const problem::GraphProblem &graph = model.graph;
    int n = int(graph.problem.nodes.size());
    int numForward = problem::numForward(graph.problem);
    for (int trial = 0; trial < 4; ++trial) {
      SCOPED_TRACE(trial);
      problem::RematSchedule schedule = problem::RematSchedule::empty(n);
      for (int t = 0; t < n; ++t) {
        schedule.compute[t].set(t);
        if (graph.ops[t].empty())
          continue;
        for (int i = 0; i < std::min(t, numForward); ++i)
          if (rng() % 10 == 0)
            schedule.compute[t].set(i);
      }
      problem::keepUntilRead(graph.problem, schedule);
      absl::StatusOr<problem::ScheduleCost> modelled =
          problem::evaluateSchedule(graph.problem, schedule);
      ASSERT_TRUE(modelled.ok()) << modelled.status();
      std::optional<MeasuredTraining> built = measureTraining(
          *model.forward, scheduleSpelling(problem::stepsOf(graph, schedule)),
          "100%", 3);
      ASSERT_TRUE(built.has_value());
      EXPECT_GT(built->report.flopsRecompute, 0);
      EXPECT_LE(built->report.peakBytesAfter, modelled->peakBytes);
      RecordProperty(model.name + "_" + std::to_string(trial),
                     fmt::format("{} / {}", built->report.peakBytesAfter,
                                 modelled->peakBytes));
    }
  }
}

// Steps that no schedule over the nodes can hold: before an op that starts
// no node, or recomputing a gradient op.
TEST(IlpGraphProblemTest, StepsThatNoScheduleHoldsDoNotMap) {
  std::optional<DifferentiatedModel> model = differentiatedModel(
      "mlp", {{"layers", "2"}, {"width", "8"}, {"batch", "4"}, {"input", "4"}});
  ASSERT_TRUE(model.has_value());
  const problem::GraphProblem &graph = model->graph;
  int n = int(graph.problem.nodes.size());
  int firstGradient = problem::numForward(graph.problem);
  ASSERT_LT(firstGradient + 1, n - 1);
  Op *gradient = graph.ops[firstGradient].front();
  Op *laterGradient = graph.ops[firstGradient + 1].front();
  Op *firstForward = graph.ops[0].front();
  EXPECT_TRUE(problem::scheduleOfSteps(graph, {{laterGradient, {firstForward}}}));
  EXPECT_FALSE(problem::scheduleOfSteps(graph, {{laterGradient, {gradient}}}));
  EXPECT_FALSE(problem::scheduleOfSteps(graph, {{firstForward, {firstForward}}}));
  Op *param = nullptr;
  for (Op &op : model->training->ops())
    if (op.numOperands() == 0 && !param)
      param = &op;
  ASSERT_TRUE(param);
  EXPECT_FALSE(problem::scheduleOfSteps(graph, {{param, {firstForward}}}));
}

} // namespace
} // namespace remat

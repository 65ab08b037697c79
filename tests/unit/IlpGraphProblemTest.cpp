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

#include "Planning/Ilp/GraphProblem.h"

#include "MeasuredTraining.h"
#include "SmallZooModels.h"

#include "remat/Analysis/Memory.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Pass/Schedule.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

TEST(IlpGraphProblemTest, KeepingEverythingCostsThePlainGraphsPeak) {
  for (const auto &[name, options] : executableZooModels()) {
    SCOPED_TRACE(name);
    std::unique_ptr<Graph> forward = zooModel(name, options);
    ASSERT_TRUE(forward);
    std::unique_ptr<Graph> training = forward->clone();
    PlanningProblem planning;
    planning.forwardOpIdBound = training->opIdBound();
    ASSERT_TRUE(differentiate(*training).ok());
    planning.graph = training.get();

    ilp::GraphProblem graph =
        ilp::buildGraphProblem(planning, ilp::GraphModel::Scheduled);
    absl::StatusOr<ilp::ScheduleCost> modelled = ilp::evaluateSchedule(
        graph.problem, ilp::keepAllSchedule(graph.problem));
    ASSERT_TRUE(modelled.ok()) << modelled.status();

    std::unique_ptr<Graph> plain = training->clone();
    ASSERT_TRUE(scheduleForMemory(*plain).ok());
    int64_t simulated = simulateMemory(*plain).peakBytes;
    EXPECT_GE(modelled->peakBytes, simulated);
    EXPECT_LE(modelled->peakBytes, simulated + simulated / 50);
  }
}

} // namespace
} // namespace remat

//===- EveryPlannerTest.cpp - Every planner held to the executor ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every registered planner, and `auto`, on random graphs at random budgets:
/// the executor measures the peak the report simulates, within the budget
/// whenever the report says it is met, and the gradients equal plain
/// autodiff's bitwise. The planners come from the registry, so a planner
/// added later is checked without editing this test.
///
//===----------------------------------------------------------------------===//

#include "MeasuredTraining.h"
#include "RandomGraphs.h"

#include "remat/Pass/Planner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

namespace remat {
namespace {

/// The spellings tried: every planner that needs no list (`names=`,
/// `schedule=` name values of one graph), the ILP limited to a second and
/// 100 nodes, the variants of `chain` and `xla`, and the budget search.
std::vector<std::string> plannersToTry() {
  std::vector<std::string> planners;
  for (const PlannerInfo *planner : PlannerRegistry::global().all()) {
    if (planner->needsArgument)
      continue;
    planners.push_back(planner->name == "ilp" ? "ilp=1,nodes=100"
                                              : planner->name);
  }
  planners.push_back("chain=late");
  planners.push_back("xla=scheduled");
  planners.push_back(kAutoPlanner.str());
  return planners;
}

/// Plain autodiff's peak and the peak floor of `forward`'s training graph:
/// the range where a budget is reachable by some plan and needs one.
std::pair<int64_t, int64_t> peakRange(const Graph &forward) {
  std::unique_ptr<Graph> graph = forward.clone();
  absl::StatusOr<TrainingReport> report =
      buildTrainingGraph(*graph, {.planner = "none", .budget = "100%"});
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok())
    return {0, 0};
  return {report->peakFloorBytes.value_or(0), report->peakBytesBefore};
}

TEST(EveryPlannerTest, RandomGraphsAndBudgetsAreMeasuredAndBitwise) {
  std::vector<std::string> planners = plannersToTry();
  ASSERT_GE(planners.size(), 15u);
  std::mt19937 random(20261126);
  int met = 0, recomputing = 0;
  for (int round = 0; round < 6; ++round) {
    std::unique_ptr<Graph> forward =
        randomGraph(random, 16 + random() % 24, /*paramRarity=*/4);
    ASSERT_TRUE(forward);
    // A budget between the peak floor and plain autodiff's peak.
    auto [floor, plain] = peakRange(*forward);
    ASSERT_LT(floor, plain);
    int64_t budget =
        floor + (plain - floor) * int64_t(50 + random() % 46) / 100;
    for (const std::string &planner : planners) {
      SCOPED_TRACE(fmt::format("round {}, {} at {}", round, planner, budget));
      std::optional<MeasuredTraining> built =
          measureTraining(*forward, planner, std::to_string(budget), round);
      if (!built)
        continue;
      const TrainingReport &report = built->report;
      ASSERT_TRUE(report.budgetBytes && report.budgetMet);
      EXPECT_EQ(*report.budgetBytes, budget);
      EXPECT_EQ(*report.budgetMet, built->planned.peakBytes <= budget);
      met += *report.budgetMet;
      recomputing += report.flopsRecompute > 0;
    }
  }
  // The budgets bite: most plans recompute, and some meet them (these
  // graphs' params and gradients leave little room above the floor).
  EXPECT_GE(recomputing, 40);
  EXPECT_GE(met, 10);
}

} // namespace
} // namespace remat

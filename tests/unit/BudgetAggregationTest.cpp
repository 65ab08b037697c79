//===- BudgetAggregationTest.cpp - The budget search's gradient sums
//-------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// With a budget, `auto` also plans the graph whose partial gradients are
/// summed as they come. Held to plain autodiff built both ways and to the
/// executor: the peak it measures, gradients bitwise equal to the default
/// aggregation's.
///
//===----------------------------------------------------------------------===//

#include "MeasuredTraining.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

/// An LSTM whose weights get one partial gradient per step: twelve each.
std::unique_ptr<Graph> lstm() {
  return zooModel("lstm", {{"steps", "12"}, {"hidden", "16"}, {"batch", "8"}});
}

/// Plain autodiff's report for `forward` with `autodiff`'s aggregation.
TrainingReport plainReport(const Graph &forward,
                           const AutodiffOptions &autodiff) {
  std::unique_ptr<Graph> graph = forward.clone();
  TrainingOptions options;
  options.autodiff = autodiff;
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : TrainingReport{};
}

AutodiffOptions summedAtOnce() {
  AutodiffOptions autodiff;
  autodiff.aggregateCount = 2;
  autodiff.aggregateBytes = 0;
  return autodiff;
}

bool namesSummedPlans(llvm::StringRef strategy) {
  return strategy.contains("summed at once");
}

TEST(BudgetAggregationTest, SummingAtOnceMeetsABudgetNoRecomputationCanMeet) {
  std::unique_ptr<Graph> forward = lstm();
  ASSERT_TRUE(forward);
  int64_t plainPeak = plainReport(*forward, {}).peakBytesAfter;
  int64_t summedPeak = plainReport(*forward, summedAtOnce()).peakBytesAfter;
  ASSERT_LT(summedPeak, plainPeak);

  // The summed graph's own peak as the budget: met with no recompute.
  std::optional<MeasuredTraining> built =
      measureTraining(*forward, "auto", std::to_string(summedPeak), 5);
  ASSERT_TRUE(built);
  const TrainingReport &report = built->report;
  EXPECT_EQ(report.budgetMet, true);
  EXPECT_EQ(report.flopsRecompute, 0);
  EXPECT_EQ(report.aggregateCount, 2);
  EXPECT_EQ(report.aggregateBytes, 0);
  // At most the summed graph's peak: copies of ops that cost no FLOPs
  // (XLA's pass, calibrated, copies such) may lower it further.
  EXPECT_LE(built->planned.peakBytes, summedPeak);
  // Plain autodiff, and the budget's share, stay the options' own.
  EXPECT_EQ(report.peakBytesBefore, plainPeak);
  EXPECT_EQ(built->plain.peakBytes, plainPeak);
}

TEST(BudgetAggregationTest, BelowTheSummedPeakItsRecomputedPlansCompete) {
  std::unique_ptr<Graph> forward = lstm();
  ASSERT_TRUE(forward);
  int64_t summedPeak = plainReport(*forward, summedAtOnce()).peakBytesAfter;
  // 90% of the summed peak, more than recomputation reaches on the default
  // graph (AnAggregationGivenIsKept): a recomputing plan of the summed graph,
  // its peak measured, its gradients bitwise the default's.
  int64_t budget = summedPeak / 10 * 9;
  std::optional<MeasuredTraining> built =
      measureTraining(*forward, "auto", std::to_string(budget), 7);
  ASSERT_TRUE(built);
  EXPECT_EQ(built->report.budgetMet, true);
  EXPECT_LE(built->planned.peakBytes, budget);
  EXPECT_GT(built->report.flopsRecompute, 0);
  EXPECT_EQ(built->report.aggregateCount, 2);
}

TEST(BudgetAggregationTest, AnAggregationGivenIsKept) {
  std::unique_ptr<Graph> forward = lstm();
  ASSERT_TRUE(forward);
  int64_t summedPeak = plainReport(*forward, summedAtOnce()).peakBytesAfter;
  std::unique_ptr<Graph> graph = forward->clone();
  TrainingOptions options;
  options.planner = "auto";
  options.budget = std::to_string(summedPeak);
  options.searchAggregation = false;
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->aggregateCount, AutodiffOptions().aggregateCount);
  EXPECT_EQ(report->aggregateBytes, AutodiffOptions().aggregateBytes);
  // The default graph's plans reach neither that budget nor 90% of it.
  EXPECT_EQ(report->budgetMet, false);
  EXPECT_GT(report->planPeakBytes(), summedPeak);
  EXPECT_FALSE(
      llvm::any_of(report->searchTimings, [](const ReportSearchTime &timing) {
        return namesSummedPlans(timing.planner);
      }));
}

TEST(BudgetAggregationTest, AChainOfSingleUsesIsDifferentiatedOnce) {
  // Every value of an MLP is read at most twice: summing at once cannot
  // change its graph, and the search does not build it. (Ten layers: past
  // the ILP's size in `auto`, whose CBC presolve leaks a buffer on the
  // four-layer one under LeakSanitizer.)
  std::unique_ptr<Graph> forward = zooModel(
      "mlp",
      {{"layers", "10"}, {"width", "8"}, {"batch", "16"}, {"input", "4"}});
  ASSERT_TRUE(forward);
  std::unique_ptr<Graph> graph = forward->clone();
  TrainingOptions options;
  options.planner = "auto";
  options.budget = "60%";
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(
      llvm::any_of(report->searchTimings, [](const ReportSearchTime &timing) {
        return namesSummedPlans(timing.planner);
      }));
  EXPECT_EQ(report->aggregateCount, AutodiffOptions().aggregateCount);
}

TEST(BudgetAggregationTest, TheSweepHasTheSummedPlans) {
  std::unique_ptr<Graph> forward = lstm();
  ASSERT_TRUE(forward);
  int64_t plainPeak = plainReport(*forward, {}).peakBytesAfter;
  int64_t summedPeak = plainReport(*forward, summedAtOnce()).peakBytesAfter;
  absl::StatusOr<SweepReport> sweep = sweepTrainingPlans(*forward, {});
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->peakBytesPlain, plainPeak);
  // The free end of the curve is no higher than plain autodiff summed at
  // once, which dominates the default's plain autodiff: every point is
  // below the default's plain peak, some of them plans of the summed graph.
  ASSERT_FALSE(sweep->points.empty());
  EXPECT_EQ(sweep->points.back().flopsRecompute, 0);
  EXPECT_LE(sweep->points.back().peakBytes, summedPeak);
  EXPECT_TRUE(llvm::any_of(sweep->points, [](const SweepPoint &point) {
    return namesSummedPlans(point.planner);
  }));
  for (size_t i = 1; i < sweep->points.size(); ++i) {
    EXPECT_GT(sweep->points[i].peakBytes, sweep->points[i - 1].peakBytes);
    EXPECT_LT(sweep->points[i].flopsRecompute,
              sweep->points[i - 1].flopsRecompute);
  }
}

} // namespace
} // namespace remat

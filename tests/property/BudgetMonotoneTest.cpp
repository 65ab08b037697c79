//===- BudgetMonotoneTest.cpp - auto's plans as the budget rises ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The budget search (`auto`) over the zoo's small models at budgets of 5%
/// to 95% of plain autodiff's peak, every 5%. For budgets a < b:
///  - a budget no plan meets gets the plan of lowest peak, the same plan
///    whatever the budget (peak and recompute equal), and no budget's plan
///    peaks lower: peak(a) <= peak(b);
///  - where both are met, the larger admits every plan the smaller did, so
///    it recomputes no more: flops(a) >= flops(b).
///
//===----------------------------------------------------------------------===//

#include "MeasuredTraining.h"
#include "SmallZooModels.h"

#include "remat/Training/Training.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

namespace remat {
namespace {

/// What `auto` built at one budget.
struct BudgetPoint {
  int percent = 0;
  bool met = false;
  int64_t peakBytes = 0;
  int64_t flopsRecompute = 0;
  std::string strategy;

  std::string str() const {
    return fmt::format("{}%: {} ({}), peak {}, {} FLOPs recomputed", percent,
                       strategy, met ? "met" : "not met", peakBytes,
                       flopsRecompute);
  }
};

std::vector<BudgetPoint> pointsOf(const Graph &forward) {
  std::vector<BudgetPoint> points;
  for (int percent = 5; percent <= 95; percent += 5) {
    std::unique_ptr<Graph> graph = forward.clone();
    TrainingOptions options;
    options.planner = "auto";
    options.budget = fmt::format("{}%", percent);
    absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
    EXPECT_TRUE(report.ok()) << percent << "%: " << report.status();
    if (!report.ok())
      continue;
    points.push_back({percent, report->budgetMet.value_or(false),
                      report->planPeakBytes(), report->flopsRecompute,
                      report->planner});
  }
  return points;
}

class BudgetMonotoneTest : public ::testing::TestWithParam<SmallModel> {};

TEST_P(BudgetMonotoneTest, UnmetBudgetsShareTheLowestPeakAndMetOnesNeverCostMore) {
  std::unique_ptr<Graph> forward =
      zooModel(GetParam().model, GetParam().options);
  ASSERT_TRUE(forward);
  std::vector<BudgetPoint> points = pointsOf(*forward);
  ASSERT_EQ(points.size(), 19u);
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t j = i + 1; j < points.size(); ++j) {
      const BudgetPoint &a = points[i], &b = points[j];
      if (!a.met) {
        EXPECT_LE(a.peakBytes, b.peakBytes)
            << a.str() << " peaks above " << b.str();
      }
      if (!a.met && !b.met) {
        EXPECT_EQ(a.peakBytes, b.peakBytes) << a.str() << " vs " << b.str();
        EXPECT_EQ(a.flopsRecompute, b.flopsRecompute)
            << a.str() << " vs " << b.str();
      }
      if (a.met && b.met) {
        EXPECT_GE(a.flopsRecompute, b.flopsRecompute)
            << b.str() << " recomputes more than " << a.str();
      }
      // A met budget stays met above it.
      if (a.met) {
        EXPECT_TRUE(b.met) << a.str() << " but " << b.str();
      }
    }
}

std::string modelName(const ::testing::TestParamInfo<SmallModel> &info) {
  return fmt::format("{}_{}", info.index, info.param.model);
}

/// The small models but MobileNetV2 and DenseNet-121, whose searches run
/// the ILP's relaxation on a few hundred ops (5-7 s a budget, minutes for
/// the 19): scripts/check-auto-monotone.sh checks them outside CI.
std::vector<SmallModel> searchedModels() {
  std::vector<SmallModel> models = smallModels();
  llvm::erase_if(models, [](const SmallModel &m) {
    return m.model == "mobilenet_v2" || m.model == "densenet";
  });
  return models;
}

INSTANTIATE_TEST_SUITE_P(SmallZoo, BudgetMonotoneTest,
                         ::testing::ValuesIn(searchedModels()), modelName);

} // namespace
} // namespace remat

//===- CalibrationTest.cpp - The budget search tells budgets that fit -----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
//
// `auto` calibrates the budget it tells a heuristic whose own estimate of the
// peak misses the built graph's (src/Training/BudgetSearch.cpp,
// `tryCalibrated`). A heuristic whose estimate is over every budget it is
// told, though its plans fit, must still be told budgets between one that
// fitted and one that overshot, as XLA's pass on Inductor's ResNet-50 is.
//
//===----------------------------------------------------------------------===//

#include "MeasuredTraining.h"

#include "remat/IR/Graph.h"
#include "remat/Pass/Planner.h"
#include "remat/Training/Training.h"

#include <gtest/gtest.h>

#include <optional>

namespace remat {
namespace {

/// Plain autodiff, which the budget search builds first.
class PlainPlanner : public Planner {
public:
  absl::StatusOr<RematPlan> plan(const PlanningProblem &) override {
    RematPlan plan;
    plan.plain = true;
    return plan;
  }
};

/// A heuristic whose estimate is over every budget it is told, though its
/// plans fit: told the budget it was first told (the user's, in a
/// calibration) or less, it keeps 6 evenly spaced forward values; told up to
/// 1% more, 8; told more than that, every value (plain autodiff, which is
/// over the user's budget). It estimates each plan at twice the told budget.
class OverEstimatingPlanner : public Planner {
public:
  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    std::vector<Value *> values;
    for (const Op &op : problem.graph->ops())
      if (problem.isForward(op) && op.numOperands() != 0)
        for (Value *result : op.results())
          if (result != problem.graph->outputs().front())
            values.push_back(result);
    int64_t told = problem.budgetBytes.value_or(INT64_MAX / 2);
    if (!first_)
      first_ = told;
    RematPlan plan;
    if (told > *first_ + *first_ / 100) {
      plan.plain = true;
    } else {
      int64_t n = values.size(), kept = told <= *first_ ? 6 : 8;
      for (int64_t i = 0; i < kept; ++i)
        plan.kept.push_back(values[i * n / kept]);
    }
    plan.modelledPeakBytes = 2 * told;
    return plan;
  }

private:
  std::optional<int64_t> first_;
};

template <typename P>
PlannerInfo plannerInfo(std::string name, PlannerSearchInfo search = {}) {
  PlannerInfo info{.name = std::move(name),
                   .summary = "a test's",
                   .factory = [](std::optional<llvm::StringRef>)
                       -> absl::StatusOr<std::unique_ptr<Planner>> {
                     return std::make_unique<P>();
                   }};
  info.search = std::move(search);
  return info;
}

/// Plain autodiff and `over`, which `auto` calibrates (and no other
/// planner, so that `auto`'s plan is `over`'s best).
PlannerRegistry overEstimatingRegistry() {
  PlannerRegistry registry;
  registry.add(plannerInfo<PlainPlanner>("none"));
  PlannerSearchInfo search;
  search.takesBudget = true;
  search.calibratedInSearch = true;
  search.autoCandidates = autoTriesOnce("over", 10);
  registry.add(plannerInfo<OverEstimatingPlanner>("over", std::move(search)));
  return registry;
}

TrainingReport planned(const Graph &forward, const PlannerRegistry &registry,
                       const std::string &planner) {
  TrainingOptions options;
  options.planner = planner;
  options.budget = "80%";
  options.searchAggregation = false;
  options.registry = &registry;
  std::unique_ptr<Graph> graph = forward.clone();
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : TrainingReport();
}

TEST(CalibrationTest, APlannerOverItsOwnEstimateIsToldBudgetsThatFit) {
  std::unique_ptr<Graph> forward = zooModel("mlp", {{"layers", "12"},
                                                    {"width", "32"},
                                                    {"batch", "256"},
                                                    {"input", "32"}});
  ASSERT_TRUE(forward);
  PlannerRegistry registry = overEstimatingRegistry();
  // Told the budget itself, the planner keeps 6 values and fits.
  TrainingReport once = planned(*forward, registry, "over");
  ASSERT_TRUE(once.budgetMet.value_or(false));
  ASSERT_GT(once.flopsRecompute, 0);
  // Calibrated, it is told a budget that overshoots (every value kept),
  // which with the one that fitted brackets the search: it ends told at most
  // 1% more, keeps 8, recomputes less and still fits. (Were the overshoot
  // not a bracket, as before, the next told budget would be its estimate
  // shifted by the miss, higher still, and so on.)
  TrainingReport searched = planned(*forward, registry, kAutoPlanner.str());
  EXPECT_EQ(searched.planner, "over");
  EXPECT_TRUE(searched.budgetMet.value_or(false));
  EXPECT_LT(searched.flopsRecompute, once.flopsRecompute);
}

} // namespace
} // namespace remat

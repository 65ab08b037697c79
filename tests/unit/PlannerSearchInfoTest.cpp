//===- PlannerSearchInfoTest.cpp - A planner added in one place -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
//
// Adding a planner is one registration: what `auto` needs to know the planner
// declares in `PlannerInfo::search`. A toy planner registered in a registry of
// the test's own is tried by the budget search and the sweep, where its
// declaration says, with no other edit.
//
//===----------------------------------------------------------------------===//

#include "MeasuredTraining.h"

#include "remat/IR/Graph.h"
#include "remat/Pass/Planner.h"
#include "remat/Training/Training.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

/// Keeps every third forward compute value: a plan no built-in planner makes.
class EveryThirdPlanner : public Planner {
public:
  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    RematPlan plan;
    int index = 0;
    for (const Op &op : problem.graph->ops()) {
      if (!problem.isForward(op) || op.numOperands() == 0)
        continue;
      if (index++ % 3 == 0)
        for (Value *result : op.results())
          if (result != problem.graph->outputs().front())
            plan.kept.push_back(result);
    }
    return plan;
  }
};

/// The built-in planners and `toy`, whose search info is `search`.
std::unique_ptr<PlannerRegistry> registryWithToy(PlannerSearchInfo search) {
  auto registry = std::make_unique<PlannerRegistry>();
  registerAllPlanners(*registry);
  PlannerInfo toy{"toy", "Keeps every third forward value", "", false,
                  [](std::optional<llvm::StringRef>)
                      -> absl::StatusOr<std::unique_ptr<Planner>> {
                    return std::make_unique<EveryThirdPlanner>();
                  }};
  toy.search = std::move(search);
  registry->add(std::move(toy));
  return registry;
}

std::unique_ptr<Graph> smallMlp() {
  return zooModel("mlp", {{"layers", "12"},
                          {"width", "32"},
                          {"batch", "256"},
                          {"input", "32"}});
}

/// The candidates a budget search on `forward` tried, in order.
std::vector<std::string> searched(const Graph &forward,
                                  const PlannerRegistry &registry) {
  TrainingOptions options;
  options.planner = kAutoPlanner;
  options.budget = "60%";
  options.searchAggregation = false;
  options.registry = &registry;
  std::unique_ptr<Graph> graph = forward.clone();
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
  EXPECT_TRUE(report.ok()) << report.status();
  std::vector<std::string> names;
  if (report.ok())
    for (const ReportSearchTime &row : report->searchTimings)
      names.push_back(row.planner);
  return names;
}

TEST(PlannerSearchInfoTest, AutoTriesARegisteredPlannerAtItsRank) {
  std::unique_ptr<Graph> forward = smallMlp();
  ASSERT_TRUE(forward);
  PlannerSearchInfo search;
  search.autoCandidates = autoTriesOnce("toy", 15);
  std::unique_ptr<PlannerRegistry> registry = registryWithToy(search);
  std::vector<std::string> names = searched(*forward, *registry);
  auto position = [&](llvm::StringRef name) {
    return llvm::find(names, name) - names.begin();
  };
  ASSERT_LT(position("toy"), int64_t(names.size()));
  // Rank 15: after the chain DP (10), before `sqrtn` (20).
  EXPECT_LT(position("chain"), position("toy"));
  EXPECT_LT(position("toy"), position("sqrtn"));
}

TEST(PlannerSearchInfoTest, APlannerWithoutCandidatesIsNotTried) {
  std::unique_ptr<Graph> forward = smallMlp();
  ASSERT_TRUE(forward);
  std::unique_ptr<PlannerRegistry> registry = registryWithToy({});
  std::vector<std::string> names = searched(*forward, *registry);
  EXPECT_TRUE(llvm::is_contained(names, "sqrtn"));
  EXPECT_FALSE(llvm::is_contained(names, "toy"));
  // The toy is still a planner the user may name.
  EXPECT_TRUE(registry->create("toy").ok());
}

TEST(PlannerSearchInfoTest, TheSweepTriesAPlannerThatTakesNoBudget) {
  // A sweep tries each planner that takes no budget once: one more plan.
  std::unique_ptr<Graph> forward = smallMlp();
  ASSERT_TRUE(forward);
  auto plansTried = [&](const PlannerRegistry &registry) -> int64_t {
    TrainingOptions options;
    options.searchAggregation = false;
    options.registry = &registry;
    absl::StatusOr<SweepReport> sweep = sweepTrainingPlans(*forward, options);
    EXPECT_TRUE(sweep.ok()) << sweep.status();
    return sweep.ok() ? sweep->plansTried : -1;
  };
  PlannerSearchInfo search;
  search.autoCandidates = autoTriesOnce("toy", 35);
  EXPECT_EQ(plansTried(*registryWithToy(search)),
            plansTried(*registryWithToy({})) + 1);
  // Declared as taking a budget, it is tried at the sweep's budgets instead.
  search.takesBudget = true;
  EXPECT_GT(plansTried(*registryWithToy(search)),
            plansTried(*registryWithToy({})) + 1);
}

} // namespace
} // namespace remat

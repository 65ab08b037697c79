//===- ApPlannersTest.cpp - AP baselines as planners, the ILP's warm start ===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `ap-sqrtn` and `ap-greedy` on zoo models: the executor measures the peak
/// the report simulates, within the budget whenever `ap-greedy` does not warn,
/// with gradients bitwise equal to plain autodiff's. The `ilp` planner,
/// started from the best baseline or step planner's plan, is never costlier
/// than it. One planner object asked at several budgets, as `auto` asks it,
/// plans as fresh ones do.
///
//===----------------------------------------------------------------------===//

#include "Planning/ApBaselines.h"
#include "Planning/Problem/GraphProblem.h"

#include "remat/Analysis/Cost.h"
#include "remat/Analysis/Memory.h"
#include "MeasuredTraining.h"

#include "remat/Pass/Autodiff.h"
#include "remat/Support/Units.h"
#include "remat/Zoo/Zoo.h"

#include "absl/strings/match.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

namespace remat {
namespace {

/// Builds `forward` with `planner` at `budget`, held to the executor
/// (MeasuredTraining.h) and to the budget: within it whenever the report
/// says so, and whenever `ap-greedy` does not warn. Returns the report.
TrainingReport expectMeasured(const Graph &forward, const std::string &planner,
                              const std::string &budget) {
  SCOPED_TRACE(planner + " at " + budget);
  std::optional<MeasuredTraining> built =
      measureTraining(forward, planner, budget, 5);
  if (!built)
    return {};
  const TrainingReport &report = built->report;
  // A planner's own note may follow the budget's verdict on its line.
  bool warned = llvm::any_of(report.warnings, [&](const std::string &line) {
    return absl::StrContains(line, planner + ":");
  });
  if (planner == "ap-greedy" && !warned) {
    EXPECT_EQ(report.budgetMet, true);
  }
  if (report.budgetMet.value_or(false)) {
    EXPECT_LE(built->planned.peakBytes, *report.budgetBytes);
  }
  return report;
}

struct ZooCase {
  const char *name;
  ZooOptions options;
  /// Whether AP-greedy meets 90% of plain autodiff's peak. On the small
  /// LSTM no segment schedule lowers the final graph's peak at all.
  bool greedyFits = true;
};

class ApPlannersZooTest : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ApPlannersZooTest, PeaksMeasuredAndGradientsBitwise) {
  std::unique_ptr<Graph> forward = zooModel(GetParam().name, GetParam().options);
  ASSERT_TRUE(forward);
  int greedyFits = 0;
  for (const char *budget : {"90%", "70%", "50%"}) {
    expectMeasured(*forward, "ap-sqrtn", budget);
    TrainingReport greedy = expectMeasured(*forward, "ap-greedy", budget);
    greedyFits += greedy.budgetMet.value_or(false);
    // A plan is always built, with at most one warning of its own.
    EXPECT_LE(llvm::count_if(greedy.warnings,
                             [](const std::string &line) {
                               return absl::StrContains(line, "ap-greedy:");
                             }),
              1);
  }
  EXPECT_EQ(greedyFits > 0, GetParam().greedyFits);
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, ApPlannersZooTest,
    ::testing::Values(
        ZooCase{"mlp",
                {{"layers", "6"},
                 {"width", "8"},
                 {"batch", "64"},
                 {"input", "4"},
                 {"classes", "2"}}},
        ZooCase{"resnet",
                {{"preact", "true"},
                 {"depth", "11"},
                 {"batch", "4"},
                 {"image", "16"}}},
        ZooCase{"transformer",
                {{"layers", "2"},
                 {"d-model", "16"},
                 {"heads", "2"},
                 {"seq", "16"},
                 {"batch", "4"},
                 {"vocab", "20"},
                 {"dropout", "0.1"}}},
        ZooCase{"lstm",
                {{"steps", "5"}, {"hidden", "8"}, {"batch", "2"}},
                /*greedyFits=*/false}),
    [](const ::testing::TestParamInfo<ZooCase> &info) {
      return std::string(info.param.name) + "_" + std::to_string(info.index);
    });

/// The forward graph differentiated, with its planning problem.
struct Differentiated {
  std::unique_ptr<Graph> graph;
  PlanningProblem problem;
};

Differentiated differentiated(const Graph &forward, int64_t budget) {
  Differentiated result{forward.clone(), {}};
  result.problem.forwardOpIdBound = result.graph->opIdBound();
  EXPECT_TRUE(differentiate(*result.graph).ok());
  result.problem.graph = result.graph.get();
  result.problem.budgetBytes = budget;
  return result;
}

/// FLOPs of every copy a schedule plan makes.
int64_t recomputeFlops(const RematPlan &plan) {
  int64_t flops = 0;
  for (const RecomputeStep &step : plan.schedule.value_or(
           std::vector<RecomputeStep>{}))
    for (const Op *op : step.ops)
      flops += opFlops(*op);
  return flops;
}

TEST(ApPlannersTest, TheIlpIsNeverCostlierThanItsWarmStart) {
  // Six layers of [64, 8] activations: at these budgets AP-greedy fits in
  // the ILP's model, and CBC has 2 s, far from a proof (docs/benchmarks.md).
  std::unique_ptr<Graph> forward = zooModel("mlp", {{"layers", "6"},
                                                 {"width", "8"},
                                                 {"batch", "64"},
                                                 {"input", "4"},
                                                 {"classes", "2"}});
  ASSERT_TRUE(forward);
  int started = 0, fittingStepPlans = 0;
  for (int64_t budget : {16000, 14500}) {
    SCOPED_TRACE(budget);
    Differentiated training = differentiated(*forward, budget);
    problem::GraphProblem graph = problem::buildGraphProblem(training.problem);
    graph.problem.budgetBytes = budget;
    absl::StatusOr<std::optional<std::pair<chain::BaselineSchedule, const char *>>>
        start = chain::bestBaselineSchedule(graph.problem);
    ASSERT_TRUE(start.ok()) << start.status();
    if (!*start)
      continue;
    ++started;
    int64_t startCost = (*start)->first.cost.recomputeCost;
    ASSERT_GT(startCost, 0);

    std::vector<std::string> progress;
    training.problem.onProgress = [&](llvm::StringRef line) {
      progress.push_back(line.str());
    };
    absl::StatusOr<RematPlan> ilp = planRematerialization(training.problem,
                                                          "ilp=2");
    ASSERT_TRUE(ilp.ok()) << ilp.status();
    ASSERT_TRUE(ilp->schedule.has_value());
    ASSERT_GE(progress.size(), 2u);
    EXPECT_EQ(progress[0], fmt::format("ilp: {} nodes, budget {}",
                                       graph.problem.nodes.size(),
                                       formatBytes(budget)));
    // The start is the cheapest plan that fits the MILP's model: no costlier
    // than the baseline, nor than any step planner's plan that fits.
    llvm::StringRef line = progress[1];
    ASSERT_TRUE(line.consume_front("ilp: warm start from ")) << progress[1];
    int64_t warmCost = 0;
    ASSERT_FALSE(line.rsplit(' ').second.getAsInteger(10, warmCost))
        << progress[1];
    EXPECT_LE(warmCost, startCost);
    EXPECT_LE(recomputeFlops(*ilp), warmCost);
    problem::GraphProblem scheduled =
        problem::buildGraphProblem(training.problem, problem::GraphModel::Scheduled);
    scheduled.problem.budgetBytes = budget;
    training.problem.onProgress = nullptr;
    for (const char *planner :
         {"chain", "chain=late", "xla", "xla=scheduled", "mincut"}) {
      absl::StatusOr<RematPlan> plan =
          planRematerialization(training.problem, planner);
      ASSERT_TRUE(plan.ok()) << planner << ": " << plan.status();
      ASSERT_TRUE(plan->schedule.has_value()) << planner;
      std::optional<problem::RematSchedule> schedule =
          problem::scheduleOfSteps(scheduled, *plan->schedule);
      if (!schedule)
        continue;
      absl::StatusOr<problem::ScheduleCost> cost =
          problem::checkSchedule(scheduled.problem, *schedule);
      if (cost.ok()) {
        ++fittingStepPlans;
        EXPECT_LE(warmCost, cost->recomputeCost) << planner;
      }
    }

    // However early CBC stops (here before its root LP is solved, where
    // it may even call the problem infeasible), the core returns a schedule
    // no costlier than the start.
    ilp::IlpOptions early;
    early.timeLimitSeconds = 1e-6;
    early.warmStart = (*start)->first.schedule;
    absl::StatusOr<ilp::IlpResult> stopped =
        ilp::solveCheckmateIlp(graph.problem, early);
    ASSERT_TRUE(stopped.ok()) << stopped.status();
    EXPECT_NE(stopped->status, ilp::IlpStatusKind::Infeasible);
    EXPECT_NE(stopped->status, ilp::IlpStatusKind::NoSolution);
    EXPECT_LE(stopped->cost.recomputeCost, startCost);
    EXPECT_TRUE(problem::checkSchedule(graph.problem, stopped->schedule).ok());

    // The baseline planner realises the same start.
    absl::StatusOr<RematPlan> baseline =
        planRematerialization(training.problem, (*start)->second);
    ASSERT_TRUE(baseline.ok()) << baseline.status();
    EXPECT_EQ(recomputeFlops(*baseline), startCost);
  }
  EXPECT_EQ(started, 2);
  EXPECT_GT(fittingStepPlans, 0);
}

TEST(ApPlannersTest, TheIlpSpellsItsColdStart) {
  for (const char *text : {"ilp=cold", "ilp=2,cold", "ilp=cold,0.5"})
    EXPECT_TRUE(PlannerRegistry::global().create(text).ok()) << text;
  for (const char *text : {"ilp=cold,cold", "ilp=1,2", "ilp=warm", "ilp=1,"}) {
    absl::StatusOr<std::unique_ptr<Planner>> planner =
        PlannerRegistry::global().create(text);
    EXPECT_FALSE(planner.ok()) << text;
  }
}

/// What a plan says, in the graph's op and value ids: equal for equal
/// plans of one graph.
std::string describePlan(const RematPlan &plan) {
  std::string text = fmt::format("plain {} kept", plan.plain);
  for (const Value *value : plan.kept)
    text += fmt::format(" {}", value->id());
  for (const RecomputeStep &step : plan.schedule.value_or(
           std::vector<RecomputeStep>{})) {
    text += fmt::format("; before {}:", step.before->id());
    for (const Op *op : step.ops)
      text += fmt::format(" {}", op->id());
  }
  text += fmt::format("; modelled {}", plan.modelledPeakBytes.value_or(-1));
  for (const std::string &note : plan.budgetNotes)
    text += "; " + note;
  return text;
}

// `auto` asks one planner object for every budget of its search (Planner's
// contract): what a planner keeps of the graph between calls must not change
// its plans. Each plan of one object, at budgets down and up again, equals a
// fresh object's at that budget, and so does its plan of another graph.
TEST(ApPlannersTest, OnePlannerAtSeveralBudgetsPlansAsFreshOnes) {
  std::unique_ptr<Graph> mlp = zooModel("mlp", {{"layers", "6"},
                                                {"width", "8"},
                                                {"batch", "64"},
                                                {"input", "4"},
                                                {"classes", "2"}});
  std::unique_ptr<Graph> resnet = zooModel(
      "resnet", {{"preact", "true"}, {"depth", "11"}, {"batch", "2"},
                 {"image", "16"}});
  ASSERT_TRUE(mlp && resnet);
  Differentiated first = differentiated(*mlp, 0);
  Differentiated second = differentiated(*resnet, 0);
  int64_t plain = simulateMemory(*first.graph).peakBytes;
  for (const char *name : {"ap-greedy", "ap-sqrtn", "xla", "xla=scheduled",
                           "chain", "chain=late", "chain=40", "mincut"}) {
    SCOPED_TRACE(name);
    // `ap-sqrtn` plans the same whatever the budget.
    bool budgeted = llvm::StringRef(name) != "ap-sqrtn";
    absl::StatusOr<std::unique_ptr<Planner>> kept =
        PlannerRegistry::global().create(name);
    ASSERT_TRUE(kept.ok()) << kept.status();
    std::set<std::string> distinct;
    for (int percent : {90, 50, 30, 70, 90}) {
      SCOPED_TRACE(percent);
      first.problem.budgetBytes = plain * percent / 100;
      absl::StatusOr<RematPlan> again = (*kept)->plan(first.problem);
      absl::StatusOr<RematPlan> fresh =
          planRematerialization(first.problem, name);
      ASSERT_TRUE(again.ok() && fresh.ok());
      EXPECT_EQ(describePlan(*again), describePlan(*fresh));
      distinct.insert(describePlan(*fresh));
    }
    // The budgets change the plans: a planner that kept one would fail.
    EXPECT_EQ(distinct.size() >= 2, budgeted);
    second.problem.budgetBytes = simulateMemory(*second.graph).peakBytes / 2;
    absl::StatusOr<RematPlan> other = (*kept)->plan(second.problem);
    absl::StatusOr<RematPlan> fresh =
        planRematerialization(second.problem, name);
    ASSERT_TRUE(other.ok() && fresh.ok());
    EXPECT_EQ(describePlan(*other), describePlan(*fresh));
  }
}

// `chain=STAGES` repeats `chain` (or `chain=late`) where neither merges
// blocks: on the 30-layer MLP's 32 blocks, not on the 60-layer one's 62.
TEST(ApPlannersTest, ChainKnowsWhereItRepeatsTheDefault) {
  auto mlp = [](int layers) {
    return zooModel("mlp", {{"layers", std::to_string(layers)},
                            {"width", "32"},
                            {"batch", "512"},
                            {"input", "32"}});
  };
  std::unique_ptr<Graph> within = mlp(30), over = mlp(60);
  ASSERT_TRUE(within && over);
  Differentiated thirty = differentiated(*within, 0);
  Differentiated sixty = differentiated(*over, 0);
  auto repeats = [](const char *name, const PlanningProblem &problem) {
    absl::StatusOr<std::unique_ptr<Planner>> planner =
        PlannerRegistry::global().create(name);
    EXPECT_TRUE(planner.ok());
    absl::StatusOr<std::optional<std::string>> repeated =
        (*planner)->repeats(problem);
    EXPECT_TRUE(repeated.ok()) << repeated.status();
    return repeated.ok() ? repeated->value_or("") : "error";
  };
  EXPECT_EQ(repeats("chain=40", thirty.problem), "chain");
  EXPECT_EQ(repeats("chain=40,late", thirty.problem), "chain=late");
  EXPECT_EQ(repeats("chain", thirty.problem), "");
  EXPECT_EQ(repeats("chain=40", sixty.problem), "");
  EXPECT_EQ(repeats("xla", thirty.problem), "");
}

} // namespace
} // namespace remat

//===- PlannerSearchInfoTest.cpp - A planner added in one place -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
//
// Adding a planner is its file and a line of Planners.def: what `auto` needs
// to know the planner declares in `PlannerInfo::search`. A toy planner
// registered after the list's planners, in a registry of the test's own, is
// tried by the budget search, the sweep and the ILP's warm starts, where its
// declaration says, with no other edit.
//
//===----------------------------------------------------------------------===//

#include "MeasuredTraining.h"
#include "Planning/Planners.h"
#include "Training/BudgetSearch.h"

#include "remat/IR/Graph.h"
#include "remat/Pass/Planner.h"
#include "remat/Training/Training.h"

#include "llvm/ADT/STLExtras.h"

#include <memory>
#include <set>

#include <gtest/gtest.h>

namespace remat {
namespace {

/// Keeps every third forward compute value: a plan no built-in planner makes.
/// Counts its plans in `plans`, where given.
class EveryThirdPlanner : public Planner {
public:
  explicit EveryThirdPlanner(std::shared_ptr<int> plans)
      : plans_(std::move(plans)) {}

  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    if (plans_)
      ++*plans_;
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

private:
  std::shared_ptr<int> plans_;
};

/// The registry entry of `toy`, whose search info is `search` and whose
/// planners count their plans in `plans`, where given.
PlannerInfo toyInfo(PlannerSearchInfo search,
                    std::shared_ptr<int> plans = nullptr) {
  return {.name = "toy",
          .summary = "Keeps every third forward value",
          .factory = [plans](std::optional<llvm::StringRef>)
              -> absl::StatusOr<std::unique_ptr<Planner>> {
            return std::make_unique<EveryThirdPlanner>(plans);
          },
          .search = std::move(search)};
}

/// The built-in planners and `toy`.
std::unique_ptr<PlannerRegistry>
registryWithToy(PlannerSearchInfo search,
                std::shared_ptr<int> plans = nullptr) {
  auto registry = std::make_unique<PlannerRegistry>();
  registerAllPlanners(*registry);
  registry->add(toyInfo(std::move(search), std::move(plans)));
  return registry;
}

/// What the file of a new planner `toy` holds besides its `Planner`.
void registerToyPlanner(PlannerRegistry &registry) {
  PlannerSearchInfo search;
  search.autoCandidates = autoTriesOnce("toy", 15);
  registry.add(toyInfo(std::move(search)));
}

/// `registerAllPlanners` with `toy` added the way docs/planners.md says: its
/// line `REMAT_PLANNER(registerToyPlanner)` after those of Planners.def.
std::unique_ptr<PlannerRegistry> registryWithListedToy() {
  auto registry = std::make_unique<PlannerRegistry>();
#define REMAT_PLANNER(REGISTER) planners::REGISTER(*registry);
#include "Planning/Planners.def"
  registerToyPlanner(*registry);
  return registry;
}

std::unique_ptr<Graph> smallMlp() {
  return zooModel("mlp", {{"layers", "12"},
                          {"width", "32"},
                          {"batch", "256"},
                          {"input", "32"}});
}

/// The report of `planner` at `budget` on a copy of `forward`, the planners
/// looked up in `registry`.
absl::StatusOr<TrainingReport>
build(const Graph &forward, const PlannerRegistry &registry,
      std::string planner, std::optional<std::string> budget) {
  TrainingOptions options;
  options.planner = std::move(planner);
  options.budget = std::move(budget);
  options.searchAggregation = false;
  options.registry = &registry;
  std::unique_ptr<Graph> graph = forward.clone();
  return buildTrainingGraph(*graph, options);
}

/// The candidates a budget search on `forward` tried, in order.
std::vector<std::string> searched(const Graph &forward,
                                  const PlannerRegistry &registry) {
  absl::StatusOr<TrainingReport> report =
      build(forward, registry, kAutoPlanner.str(), "60%");
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

TEST(PlannerSearchInfoTest, APlannerAddedToTheListIsABuiltIn) {
  std::unique_ptr<PlannerRegistry> registry = registryWithListedToy();
  std::vector<std::string> spellings = PlannerRegistry::global().spellings();
  spellings.push_back("toy");
  EXPECT_EQ(registry->spellings(), spellings);
  std::unique_ptr<Graph> forward = smallMlp();
  ASSERT_TRUE(forward);
  std::vector<std::string> names = searched(*forward, *registry);
  EXPECT_TRUE(llvm::is_contained(names, "toy"));
  absl::StatusOr<TrainingReport> byName =
      build(*forward, *registry, "toy", std::nullopt);
  ASSERT_TRUE(byName.ok()) << byName.status();
  EXPECT_EQ(byName->planner, "toy");
}

TEST(PlannerSearchInfoTest, EveryRankAutoTriesIsInPlannersDef) {
  std::vector<int> declared = {
#define REMAT_AUTO_RANK(NAME, RANK, SPELLING) planners::autorank::NAME,
#include "Planning/Planners.def"
  };
  EXPECT_TRUE(llvm::is_sorted(declared));
  EXPECT_EQ(std::set<int>(declared.begin(), declared.end()).size(),
            declared.size());
  // The small MLP is small enough for every candidate, the ILP's included.
  std::unique_ptr<Graph> forward = smallMlp();
  ASSERT_TRUE(forward);
  std::set<int> tried;
  for (const PlannerInfo *planner : PlannerRegistry::global().all())
    if (planner->search.autoCandidates)
      for (const AutoCandidate &candidate :
           planner->search.autoCandidates(*forward))
        tried.insert(candidate.rank);
  EXPECT_EQ(tried, std::set<int>(declared.begin(), declared.end()));
}

// The ILP's windows are tried on graphs of at least 100 compute ops, beside
// its relaxation, and not on joint graphs partitioned for PyTorch
// (`AutoCandidate::onJointGraphs`).
TEST(PlannerSearchInfoTest, TheIlpsWindowsAreNotTriedOnJointGraphs) {
  std::unique_ptr<Graph> forward = zooModel("mlp", {{"layers", "40"},
                                                    {"width", "8"},
                                                    {"batch", "4"},
                                                    {"input", "8"}});
  ASSERT_TRUE(forward);
  auto candidates = [&](bool joint) {
    return BudgetSearch::autoCandidates(*forward, PlannerRegistry::global(),
                                        CandidateSet::OneBudget, joint);
  };
  std::vector<std::string> own = candidates(false), joint = candidates(true);
  EXPECT_TRUE(llvm::is_contained(own, "ilp=60,nodes=200,windows=64"));
  EXPECT_TRUE(llvm::is_contained(own, "ilp=60,nodes=200,relaxed"));
  EXPECT_FALSE(llvm::is_contained(joint, "ilp=60,nodes=200,windows=64"));
  EXPECT_TRUE(llvm::is_contained(joint, "ilp=60,nodes=200,relaxed"));
  EXPECT_EQ(joint.size() + 1, own.size());
}

TEST(PlannerSearchInfoTest, TheIlpStartsFromTheRegistryItIsGiven) {
  // The toy plans no schedule: asked for a start, it is passed over.
  auto plans = std::make_shared<int>(0);
  PlannerSearchInfo search;
  search.ilpWarmStarts = {"toy"};
  std::unique_ptr<PlannerRegistry> registry = registryWithToy(search, plans);
  std::unique_ptr<Graph> forward = zooModel("mlp", {{"layers", "2"},
                                                    {"width", "8"},
                                                    {"batch", "4"},
                                                    {"input", "8"}});
  ASSERT_TRUE(forward);
  absl::StatusOr<TrainingReport> report =
      build(*forward, *registry, "ilp=10,nodes=10", "80%");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(*plans, 0);
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

/// Keeps every forward value when told a budget of at least `generous`
/// bytes, else every ninth; with `claims`, it gives the budget it is told
/// as its modelled peak: a planner whose model of memory is wrong. Records
/// each budget it is told (-1 for none).
class WrongModelPlanner : public Planner {
  static constexpr int kStride = 9;

public:
  WrongModelPlanner(int64_t generous, bool claims,
                    std::shared_ptr<std::vector<int64_t>> told)
      : generous_(generous), claims_(claims), told_(std::move(told)) {}

  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    told_->push_back(problem.budgetBytes.value_or(-1));
    bool everything =
        problem.budgetBytes && *problem.budgetBytes >= generous_;
    RematPlan plan;
    int index = 0;
    for (const Op &op : problem.graph->ops()) {
      if (!problem.isForward(op) || op.numOperands() == 0)
        continue;
      if (everything || index++ % kStride == 0)
        for (Value *result : op.results())
          if (result != problem.graph->outputs().front())
            plan.kept.push_back(result);
    }
    if (claims_)
      plan.modelledPeakBytes = problem.budgetBytes;
    return plan;
  }

private:
  int64_t generous_;
  bool claims_;
  std::shared_ptr<std::vector<int64_t>> told_;
};

/// The built-in planners and `wrong`, a `WrongModelPlanner`.
std::unique_ptr<PlannerRegistry>
registryWithWrongModel(int64_t generous,
                       std::shared_ptr<std::vector<int64_t>> told,
                       bool claims = true) {
  auto registry = std::make_unique<PlannerRegistry>();
  registerAllPlanners(*registry);
  registry->add(
      {.name = "wrong",
       .summary = "Claims the budget it is told as its peak",
       .factory = [generous, claims, told](std::optional<llvm::StringRef>)
           -> absl::StatusOr<std::unique_ptr<Planner>> {
         return std::make_unique<WrongModelPlanner>(generous, claims, told);
       }});
  return registry;
}

TEST(PlannerSearchInfoTest, APlanOverTheBudgetWithinItsModelIsPlannedAgain) {
  std::unique_ptr<Graph> forward = smallMlp();
  ASSERT_TRUE(forward);
  // The peaks of its two plans: every value kept (told a budget it
  // cannot meet and less than nothing after the overshoot: not planned
  // again), and every ninth (told no budget).
  auto told = std::make_shared<std::vector<int64_t>>();
  absl::StatusOr<TrainingReport> all =
      build(*forward, *registryWithWrongModel(0, told), "wrong", "1B");
  absl::StatusOr<TrainingReport> ninth = build(
      *forward, *registryWithWrongModel(0, told), "wrong", std::nullopt);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_TRUE(ninth.ok()) << ninth.status();
  int64_t high = all->peakBytesAfter, low = ninth->peakBytesAfter;
  ASSERT_LT(low, high);

  // Told a budget between them, it keeps everything and claims to fit; the
  // built graph does not, so it is told the budget less the overshoot,
  // below its threshold, and its second plan fits.
  int64_t budget = (low + high) / 2;
  told->clear();
  absl::StatusOr<TrainingReport> report =
      build(*forward, *registryWithWrongModel(budget, told), "wrong",
            fmt::format("{}B", budget));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(*told, (std::vector<int64_t>{budget, 2 * budget - high}));
  EXPECT_EQ(report->peakBytesAfter, low);
  EXPECT_EQ(report->budgetMet, std::optional<bool>(true));

  // Without a modelled peak, nothing says the planner's model was wrong:
  // it is told the budget once, and its plan misses it.
  told->clear();
  report = build(*forward, *registryWithWrongModel(budget, told, false),
                 "wrong", fmt::format("{}B", budget));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(*told, std::vector<int64_t>{budget});
  EXPECT_EQ(report->peakBytesAfter, high);
  EXPECT_EQ(report->budgetMet, std::optional<bool>(false));
}

} // namespace
} // namespace remat

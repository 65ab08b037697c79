//===- FitTest.cpp - The largest batch that fits --------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `fitBatch` against batches built independently of its search: the batch it
/// returns and the next one are built here, planned, and run on the executor,
/// whose measured peak must be within the memory for the first and over it
/// for the second. For plain autodiff the answer is also derived from the
/// executor's peaks at three other batches (the peak is affine in the batch).
///
//===----------------------------------------------------------------------===//

#include "remat/Training/Fit.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/Runtime/Executor.h"
#include "remat/Zoo/Zoo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace remat {
namespace {

/// 12 layers of [batch, 32] activations against 4 KiB weight matrices:
/// activations dominate from a few dozen rows on.
const ZooOptions kDeepMlp = {
    {"layers", "12"}, {"width", "32"}, {"input", "16"}, {"classes", "4"}};

BatchedGraphFn zooBuilder(const std::string &name, const ZooOptions &options) {
  return [name, options](int64_t batch) {
    ZooOptions withBatch = options;
    withBatch["batch"] = std::to_string(batch);
    return buildZooModel(name, withBatch);
  };
}

/// Plans the model at `batch` with `training` and runs it: the measured peak,
/// after checking that the report predicted it.
int64_t measuredPeak(const ZooOptions &model, int64_t batch,
                     const TrainingOptions &training,
                     TrainingReport *reportOut = nullptr) {
  SCOPED_TRACE(batch);
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      zooBuilder("mlp", model)(batch);
  EXPECT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(**graph, training);
  EXPECT_TRUE(report.ok()) << report.status();
  absl::StatusOr<RunResult> run = runGraph(**graph, {.seed = 1});
  EXPECT_TRUE(run.ok()) << run.status();
  if (!report.ok() || !run.ok())
    return -1;
  EXPECT_EQ(run->peakBytes, report->peakBytesAfter);
  if (reportOut)
    *reportOut = *report;
  return run->peakBytes;
}

FitOptions fitOptions(int64_t memoryBytes, const std::string &strategy) {
  FitOptions options;
  options.memoryBytes = memoryBytes;
  options.training.planner = strategy;
  return options;
}

TEST(FitTest, PlainFitIsWhereTheAffinePeakCrossesTheMemory) {
  // Plain autodiff's peak is P + b * A once activations dominate: measured
  // at 64, 128 and 192 rows, checked affine, then solved for 1 MiB.
  TrainingOptions plain;
  int64_t p64 = measuredPeak(kDeepMlp, 64, plain);
  int64_t p128 = measuredPeak(kDeepMlp, 128, plain);
  int64_t p192 = measuredPeak(kDeepMlp, 192, plain);
  int64_t perRow = (p128 - p64) / 64;
  ASSERT_EQ(p128 - p64, 64 * perRow);
  ASSERT_EQ(p192 - p128, 64 * perRow);
  const int64_t memory = 1 << 20;
  int64_t expected = 64 + (memory - p64) / perRow;
  ASSERT_GT(expected, 192);

  absl::StatusOr<FitReport> fit =
      fitBatch(zooBuilder("mlp", kDeepMlp), fitOptions(memory, "none"));
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->batch, expected);
  EXPECT_FALSE(fit->atMaxBatch);
  EXPECT_EQ(fit->plan.planner, "none");
  EXPECT_LE(measuredPeak(kDeepMlp, expected, plain), memory);
  EXPECT_GT(measuredPeak(kDeepMlp, expected + 1, plain), memory);
}

TEST(FitTest, AutoFitsALargerBatchThatIsBuiltAndMeasured) {
  const int64_t memory = 1 << 20;
  absl::StatusOr<FitReport> fit =
      fitBatch(zooBuilder("mlp", kDeepMlp), fitOptions(memory, "auto"));
  ASSERT_TRUE(fit.ok()) << fit.status();
  int64_t batch = fit->batch;
  TrainingOptions plain;
  // Plain autodiff does not fit it: the plan recomputes.
  EXPECT_GT(measuredPeak(kDeepMlp, batch, plain), memory);
  EXPECT_GT(fit->plan.flopsRecompute, 0);

  TrainingOptions budget;
  budget.planner = "auto";
  budget.budget = std::to_string(memory);
  TrainingReport atBatch, beyond;
  EXPECT_LE(measuredPeak(kDeepMlp, batch, budget, &atBatch), memory);
  EXPECT_EQ(atBatch.planner, fit->plan.planner);
  EXPECT_EQ(atBatch.budgetMet, std::optional<bool>(true));
  // One more row and no plan the search tries fits: the best is over.
  EXPECT_GT(measuredPeak(kDeepMlp, batch + 1, budget, &beyond), memory);
  EXPECT_EQ(beyond.budgetMet, std::optional<bool>(false));
}

TEST(FitTest, ZeroOverheadAllowsOnlyPlainAutodiff) {
  const int64_t memory = 1 << 20;
  FitOptions noRecompute = fitOptions(memory, "auto");
  noRecompute.maxOverhead = 0.0;
  absl::StatusOr<FitReport> limited =
      fitBatch(zooBuilder("mlp", kDeepMlp), noRecompute);
  absl::StatusOr<FitReport> plain =
      fitBatch(zooBuilder("mlp", kDeepMlp), fitOptions(memory, "none"));
  ASSERT_TRUE(limited.ok() && plain.ok());
  EXPECT_EQ(limited->batch, plain->batch);
  EXPECT_EQ(limited->plan.overhead, 0.0);
  for (const FitTrial &trial : limited->trials)
    EXPECT_EQ(trial.fits, trial.batch <= limited->batch) << trial.batch;
}

TEST(FitTest, NoBatchFittingIsAnError) {
  absl::StatusOr<FitReport> fit =
      fitBatch(zooBuilder("mlp", kDeepMlp), fitOptions(1024, "auto"));
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.status().message().find("no batch of @mlp fits 1.00 KiB"),
            std::string::npos)
      << fit.status();
}

TEST(FitTest, TheLimitIsTheLargestBatch) {
  FitOptions options = fitOptions(int64_t(1) << 30, "none");
  options.maxBatch = 100;
  absl::StatusOr<FitReport> fit =
      fitBatch(zooBuilder("mlp", kDeepMlp), options);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->batch, 100);
  EXPECT_TRUE(fit->atMaxBatch);
  EXPECT_EQ(fit->trials.back().batch, 100);
}

TEST(FitTest, ANonMonotoneModelStillGetsABuiltBoundary) {
  // Batch 4 (and only 4) is a model far too wide: 1, 2 fit, 4 does not, 3
  // does, so the answer is 3 with 4 seen failing, though 8 would fit.
  std::vector<int64_t> built;
  BatchedGraphFn build = [&](int64_t batch) {
    built.push_back(batch);
    ZooOptions options = kDeepMlp;
    options["batch"] = std::to_string(batch);
    if (batch == 4)
      options["width"] = "4096";
    return buildZooModel("mlp", options);
  };
  absl::StatusOr<FitReport> fit = fitBatch(build, fitOptions(1 << 20, "none"));
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->batch, 3);
  std::vector<int64_t> tried;
  for (const FitTrial &trial : fit->trials)
    tried.push_back(trial.batch);
  EXPECT_EQ(tried, built);
  EXPECT_EQ(tried, (std::vector<int64_t>{1, 2, 4, 3}));
  EXPECT_TRUE(fit->trials[3].fits);
  EXPECT_FALSE(fit->trials[2].fits);
}

TEST(FitTest, BadOptionsAreErrors) {
  EXPECT_FALSE(
      fitBatch(zooBuilder("mlp", kDeepMlp), fitOptions(0, "none")).ok());
  FitOptions negative = fitOptions(1 << 20, "none");
  negative.maxOverhead = -0.5;
  EXPECT_FALSE(fitBatch(zooBuilder("mlp", kDeepMlp), negative).ok());
  // An unknown strategy fails on the first batch.
  EXPECT_FALSE(
      fitBatch(zooBuilder("mlp", kDeepMlp), fitOptions(1 << 20, "bogus")).ok());
}

/// The zoo's graph at batch 5, rebatched to `batch`, must print as the zoo's
/// graph at that batch.
void expectRebatchedLikeTheZoo(const std::string &name, ZooOptions options,
                               int64_t batch) {
  SCOPED_TRACE(name);
  options["batch"] = "5";
  absl::StatusOr<std::unique_ptr<Graph>> small = buildZooModel(name, options);
  ASSERT_TRUE(small.ok()) << small.status();
  // Through text, as `remat fit FILE` reads it.
  absl::StatusOr<std::unique_ptr<Graph>> parsed =
      parseGraph(printGraph(**small), "model.remat");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<BatchedGraphFn> build = rebatchingBuilder(**parsed);
  ASSERT_TRUE(build.ok()) << build.status();
  absl::StatusOr<std::unique_ptr<Graph>> rebatched = (*build)(batch);
  ASSERT_TRUE(rebatched.ok()) << rebatched.status();
  options["batch"] = std::to_string(batch);
  absl::StatusOr<std::unique_ptr<Graph>> expected =
      buildZooModel(name, options);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(printGraph(**rebatched), printGraph(**expected));
}

TEST(FitTest, RebatchedFilesMatchTheZooAtThatBatch) {
  expectRebatchedLikeTheZoo("mlp", kDeepMlp, 37);
  expectRebatchedLikeTheZoo(
      "resnet", {{"depth", "18"}, {"image", "32"}, {"classes", "10"}}, 12);
  expectRebatchedLikeTheZoo("transformer",
                            {{"layers", "1"},
                             {"seq", "8"},
                             {"d-model", "16"},
                             {"heads", "2"},
                             {"vocab", "32"}},
                            3);
}

TEST(FitTest, InputsOfDifferentLeadingDimsHaveNoBatch) {
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      parseGraph("graph @g {\n"
                 "  input %x : f32[4,8]\n"
                 "  input %y : f32[2,8]\n"
                 "  %s = add(%x, %x)\n"
                 "  %loss = reduce_sum(%s)\n"
                 "  output %loss\n"
                 "}\n",
                 "g.remat");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<BatchedGraphFn> build = rebatchingBuilder(**graph);
  ASSERT_FALSE(build.ok());
  EXPECT_EQ(build.status().message(),
            "g.remat:3:3: error: '%y = input': fit: input %y has batch 2 but "
            "%x has 4");
}

TEST(FitTest, ABatchWhoseBytesOverflowDoesNotFitAndTheLargestThatDoesIsKept) {
  // Each row of %x is 2^40 floats, 4 TiB: from 2^20 rows on, the training
  // graph's values need more than 2^63-1 bytes together. That batch is a
  // failure of the search, not of the command; the search still returns
  // the largest batch whose plan was built within the memory.
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      parseGraph("graph @wide {\n"
                 "  input %x : f32[4,1099511627776]\n"
                 "  %y = relu(%x)\n"
                 "  %loss = reduce_sum(%y) {axes = [0, 1]}\n"
                 "  output %loss\n"
                 "}\n",
                 "wide.remat");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<BatchedGraphFn> build = rebatchingBuilder(**graph);
  ASSERT_TRUE(build.ok()) << build.status();
  const int64_t memory = std::numeric_limits<int64_t>::max();
  for (const char *strategy : {"none", "auto"}) {
    SCOPED_TRACE(strategy);
    FitOptions options = fitOptions(memory, strategy);
    options.maxBatch = int64_t(1) << 24;
    absl::StatusOr<FitReport> fit = fitBatch(*build, options);
    ASSERT_TRUE(fit.ok()) << fit.status();
    const std::vector<FitTrial> &trials = fit->trials;
    auto tried = [&](int64_t batch) {
      return std::find_if(trials.begin(), trials.end(),
                          [&](const FitTrial &t) { return t.batch == batch; });
    };
    // The batch returned was built within the memory, the next one was
    // tried and did not fit: its bytes overflow int64.
    auto found = tried(fit->batch), next = tried(fit->batch + 1);
    ASSERT_NE(found, trials.end());
    ASSERT_NE(next, trials.end());
    EXPECT_TRUE(found->fits);
    EXPECT_LE(found->peakBytes, memory);
    EXPECT_FALSE(next->fits);
    EXPECT_EQ(next->planner, "none: too large to count");
    // 2^19 rows need 2 * 2^19 * 2^42 = 2^62 bytes of %x and %y alone.
    EXPECT_GE(fit->batch, int64_t(1) << 19);
    EXPECT_LT(fit->batch, int64_t(1) << 20);
  }
}

} // namespace
} // namespace remat

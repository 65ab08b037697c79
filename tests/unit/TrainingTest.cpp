//===- TrainingTest.cpp - strategy=none and its report ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `buildTrainingGraph` with the `none` strategy: op counts and FLOPs worked out
/// from the model's structure, the planned peak against the executor's
/// measured peak, and the JSON report's keys.
///
//===----------------------------------------------------------------------===//

#include "remat/Training/Training.h"

#include "remat/Analysis/Cost.h"
#include "remat/IO/Report.h"
#include "remat/IR/Graph.h"
#include "remat/Runtime/Executor.h"
#include "remat/Zoo/Zoo.h"

#include "llvm/Support/JSON.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace remat {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Graph> mlp(int64_t layers) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = buildZooModel(
      "mlp", {{"layers", std::to_string(layers)},
              {"width", "16"},
              {"batch", "4"},
              {"input", "8"}});
  EXPECT_TRUE(graph.ok()) << graph.status();
  return std::move(*graph);
}

/// `report` as `printReportJson` writes it, parsed; null when it is not JSON.
llvm::json::Value reportJson(const TrainingReport &report) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printReportJson(report, os);
  os.flush();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  EXPECT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  return parsed ? std::move(*parsed) : llvm::json::Value(nullptr);
}

TEST(TrainingTest, NoneIsPlainAutodiff) {
  std::unique_ptr<Graph> graph = mlp(5);
  int64_t forwardFlops = graphFlops(*graph);
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->planner, "none");
  EXPECT_EQ(report->graph, "mlp");
  // Each hidden layer is matmul, add, relu, and the head matmul, add, loss:
  // 3 * 5 + 3 forward ops. Autodiff adds per hidden layer relu_grad, the
  // bias gradient (reduce_sum, reshape) and two matmuls, minus the first
  // layer's input gradient; for the head the seed, the loss gradient, the
  // bias gradient and two matmuls: 5 * 5 - 1 + 6 = 30.
  EXPECT_EQ(report->opsBefore, 18);
  EXPECT_EQ(report->opsAfter, 18 + 30);
  EXPECT_EQ(report->flopsForward, forwardFlops);
  EXPECT_EQ(report->flopsForward + report->flopsBackward, graphFlops(*graph));
  EXPECT_GT(report->flopsBackward, report->flopsForward);
  EXPECT_EQ(report->flopsRecompute, 0);
  EXPECT_EQ(report->overhead, 0.0);
  EXPECT_TRUE(report->checkpoints.empty());
  EXPECT_EQ(report->peakBytesBefore, report->peakBytesAfter);
  EXPECT_EQ(report->peakBytesAfter, simulateMemory(*graph).peakBytes);
  EXPECT_EQ(report->peakBreakdownAfter.total(), report->peakBytesAfter);
  ASSERT_EQ(report->timings.size(), 4u);
  EXPECT_EQ(report->timings[0].pass, "autodiff");
  EXPECT_EQ(report->timings[1].pass, "plan");
  EXPECT_EQ(report->timings[2].pass, "schedule");
  EXPECT_EQ(report->timings[3].pass, "verify");

  // The executor measures the planned peak.
  absl::StatusOr<RunResult> run = runGraph(*graph, {.seed = 4});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->peakBytes, report->peakBytesAfter);
}

TEST(TrainingTest, UnknownStrategy) {
  std::unique_ptr<Graph> graph = mlp(1);
  TrainingOptions options;
  options.planner = "sideways";
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, options);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("unknown planner 'sideways' (known: none, all, "));
  EXPECT_EQ(graph->outputs().size(), 1u);
}

TEST(TrainingTest, ReportJsonHasTheDesignKeys) {
  std::unique_ptr<Graph> graph = mlp(2);
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*graph, {});
  ASSERT_TRUE(report.ok()) << report.status();
  llvm::json::Value parsed = reportJson(*report);
  const llvm::json::Object *object = parsed.getAsObject();
  ASSERT_NE(object, nullptr);
  for (llvm::StringRef key :
       {"graph", "strategy", "budget_bytes", "ops_before", "ops_after",
        "peak_bytes_before", "peak_bytes_after", "flops_forward",
        "flops_backward", "flops_recompute", "overhead", "checkpoints",
        "pass_seconds"})
    EXPECT_NE(object->get(key), nullptr) << key.str();
  EXPECT_EQ(object->getString("strategy"), llvm::StringRef("none"));
  EXPECT_EQ(object->getInteger("peak_bytes_after"), report->peakBytesAfter);
  EXPECT_EQ(object->getInteger("ops_before"), report->opsBefore);
  EXPECT_TRUE(object->get("budget_bytes")->getAsNull().hasValue());
}

/// The report's `cost_unit` of `graph` built with `options`.
std::string costUnit(Graph &graph, const TrainingOptions &options) {
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(graph, options);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok())
    return "";
  llvm::json::Value parsed = reportJson(*report);
  const llvm::json::Object *object = parsed.getAsObject();
  llvm::Optional<llvm::StringRef> unit =
      object ? object->getString("cost_unit") : llvm::None;
  return unit ? unit->str() : "";
}

// Cost attributes say their own unit only through the caller (the PyTorch
// bridge's measured times): the report counts what it is told, at every
// planner, the budget search's builds included.
TEST(TrainingTest, CostAttributesInNanosecondsMakeTheReportCountTime) {
  TrainingOptions options;
  EXPECT_EQ(costUnit(*mlp(2), options), "flops");
  options.costAttributesAreNanoseconds = true;
  EXPECT_EQ(costUnit(*mlp(2), options), "ns");
  options.planner = "auto";
  options.budget = "60%";
  EXPECT_EQ(costUnit(*mlp(6), options), "ns");
  absl::StatusOr<TrainingReport> report = buildTrainingGraph(*mlp(2), {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->countsNanoseconds());
}

} // namespace
} // namespace remat

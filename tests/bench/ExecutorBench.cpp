//===- ExecutorBench.cpp - The reference executor on the zoo's small models -===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Times the reference executor on the small zoo models that the gradient
/// checks use: one forward run, one training-graph run (forward and
/// backward), and a whole `--check-grad` with two samples per param. These
/// are what the test suite waits on. Each reports the graph's op count and
/// the measured peak.
///
//===----------------------------------------------------------------------===//

#include "remat/IR/Graph.h"
#include "remat/Training/Training.h"
#include "remat/Runtime/Executor.h"
#include "remat/Runtime/GradientCheck.h"
#include "remat/Zoo/Zoo.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

namespace remat {
namespace {

struct SmallModel {
  const char *label;
  const char *name;
  ZooOptions options;
};

/// The models and sizes of the ctest gradient checks (tests/CMakeLists.txt).
const std::vector<SmallModel> &smallModels() {
  static const std::vector<SmallModel> models = {
      {"mlp", "mlp", {{"layers", "3"}, {"width", "16"}, {"batch", "4"}}},
      {"resnet18", "resnet",
       {{"depth", "18"}, {"batch", "2"}, {"image", "32"}}},
      {"vgg16", "vgg",
       {{"depth", "16"}, {"batch", "1"}, {"image", "32"}, {"classes", "10"}}},
      {"mobilenet_v2", "mobilenet_v2",
       {{"batch", "2"}, {"image", "32"}, {"classes", "10"}}},
      {"unet", "unet",
       {{"depth", "2"}, {"channels", "4"}, {"batch", "1"}, {"image", "16"}}},
      {"transformer", "transformer",
       {{"layers", "2"},
        {"d-model", "32"},
        {"heads", "2"},
        {"seq", "8"},
        {"batch", "2"},
        {"vocab", "50"}}},
      {"lstm", "lstm", {{"steps", "5"}, {"hidden", "8"}, {"batch", "2"}}},
      {"densenet121", "densenet",
       {{"depth", "121"},
        {"batch", "1"},
        {"image", "32"},
        {"growth", "4"},
        {"classes", "10"}}},
  };
  return models;
}

std::unique_ptr<Graph> buildOrDie(const SmallModel &model) {
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      buildZooModel(model.name, model.options);
  if (!graph.ok()) {
    fprintf(stderr, "%s\n", std::string(graph.status().message()).c_str());
    std::abort();
  }
  return std::move(*graph);
}

void runAndReport(benchmark::State &state, const Graph &graph) {
  int64_t peak = 0;
  for (auto _ : state) {
    absl::StatusOr<RunResult> result = runGraph(graph);
    if (!result.ok()) {
      state.SkipWithError("run failed");
      return;
    }
    peak = result->peakBytes;
  }
  state.counters["ops"] = double(graph.numOps());
  state.counters["peak_bytes"] = double(peak);
}

void BM_RunForward(benchmark::State &state, const SmallModel &model) {
  runAndReport(state, *buildOrDie(model));
}

void BM_RunTraining(benchmark::State &state, const SmallModel &model) {
  std::unique_ptr<Graph> graph = buildOrDie(model);
  if (!buildTrainingGraph(*graph, TrainingOptions()).ok()) {
    state.SkipWithError("training graph failed");
    return;
  }
  runAndReport(state, *graph);
}

void BM_CheckGrad(benchmark::State &state, const SmallModel &model) {
  std::unique_ptr<Graph> graph = buildOrDie(model);
  GradientCheckOptions options;
  options.samplesPerParam = 2;
  int64_t entries = 0;
  for (auto _ : state) {
    absl::StatusOr<GradientCheckReport> report = checkGradients(*graph, options);
    if (!report.ok() || !report->passed) {
      state.SkipWithError("gradient check failed");
      return;
    }
    entries = int64_t(report->samples.size());
  }
  state.counters["entries"] = double(entries);
}

int registerAll() {
  for (const SmallModel &model : smallModels()) {
    std::string label = model.label;
    benchmark::RegisterBenchmark(("BM_RunForward/" + label).c_str(),
                                 BM_RunForward, model)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_RunTraining/" + label).c_str(),
                                 BM_RunTraining, model)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_CheckGrad/" + label).c_str(),
                                 BM_CheckGrad, model)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  return 0;
}

[[maybe_unused]] const int registered = registerAll();

} // namespace
} // namespace remat

BENCHMARK_MAIN();

//===- StrategyBench.cpp - Every strategy on the reference models ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs `remat opt --strategy=S` (buildTrainingGraph) for every strategy on
/// the models of the table: the 1000-layer MLP, ResNet-50 and -152,
/// the 1001-layer pre-activation ResNet, VGG-16, MobileNetV2, U-Net, a
/// 12-layer transformer, an LSTM over 100 steps and DenseNet-121, at the
/// zoo's default sizes. The time is the whole build; the counters are the
/// report's peaks (plain autodiff's and the strategy's), their ratio, the
/// recompute overhead and the pass time. Figures only; nothing is asserted.
///
//===----------------------------------------------------------------------===//

#include "remat/IR/Graph.h"
#include "remat/Training/Training.h"
#include "remat/Zoo/Zoo.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace remat {
namespace {

struct Model {
  const char *label;
  const char *name;
  ZooOptions options;
};

const std::vector<Model> &models() {
  static const std::vector<Model> list = {
      {"mlp1000", "mlp",
       {{"layers", "1000"}, {"width", "64"}, {"batch", "8192"}}},
      {"resnet50", "resnet", {{"depth", "50"}}},
      {"resnet152", "resnet", {{"depth", "152"}}},
      {"preact1001", "resnet", {{"preact", "true"}, {"depth", "1001"}}},
      {"vgg16", "vgg", {{"depth", "16"}}},
      {"mobilenet_v2", "mobilenet_v2", {}},
      {"unet", "unet", {}},
      {"transformer12", "transformer", {{"layers", "12"}}},
      {"lstm100", "lstm", {{"steps", "100"}}},
      {"densenet121", "densenet", {{"depth", "121"}}},
  };
  return list;
}

const char *const kStrategies[] = {"none",   "all",   "collection", "speed",
                                   "memory", "sqrtn", "regions"};

void BM_Strategy(benchmark::State &state, const Model &model,
                 const std::string &strategy) {
  absl::StatusOr<std::unique_ptr<Graph>> forward =
      buildZooModel(model.name, model.options);
  if (!forward.ok()) {
    state.SkipWithError(std::string(forward.status().message()).c_str());
    return;
  }
  TrainingReport report;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Graph> graph = (*forward)->clone();
    TrainingOptions options;
    options.planner = strategy;
    state.ResumeTiming();
    absl::StatusOr<TrainingReport> result = buildTrainingGraph(*graph, options);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    report = std::move(*result);
    state.PauseTiming();
    graph.reset();
    state.ResumeTiming();
  }
  state.counters["ops"] = double(report.opsAfter);
  state.counters["kept"] = double(report.checkpoints.size());
  state.counters["peak_before_MiB"] = double(report.peakBytesBefore) / (1 << 20);
  state.counters["peak_after_MiB"] = double(report.peakBytesAfter) / (1 << 20);
  state.counters["ratio"] =
      report.peakBytesBefore
          ? double(report.peakBytesAfter) / double(report.peakBytesBefore)
          : 0.0;
  state.counters["overhead"] = report.overhead;
  state.counters["pass_s"] = report.passSeconds;
}

int registerAll() {
  for (const Model &model : models())
    for (const char *strategy : kStrategies)
      benchmark::RegisterBenchmark(
          (std::string("BM_Strategy/") + model.label + "/" + strategy).c_str(),
          BM_Strategy, model, std::string(strategy))
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
  return 0;
}

[[maybe_unused]] const int registered = registerAll();

} // namespace
} // namespace remat

BENCHMARK_MAIN();

//===- ScaleBench.cpp - How each layer scales with graph size ---------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Builds, prints, parses, verifies, copies, sorts, simulates the memory of,
/// differentiates, rematerializes and schedules MLP chains from 1k to over 1M
/// ops. Each benchmark reports `ops` (the graph
/// size) and an `ops/s` rate, so that time per op can be read off as size
/// grows: a flat rate means linear cost.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Memory.h"
#include "remat/Analysis/TopoSort.h"
#include "remat/IO/TextFormat.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Pass/Planner.h"
#include "remat/Pass/Recompute.h"
#include "remat/Pass/Schedule.h"
#include "remat/Zoo/Zoo.h"

#include <benchmark/benchmark.h>

#include <cstdlib>

namespace remat {
namespace {

/// An MLP with about `numOps` ops: five per layer (the weight and bias
/// declarations, matmul, bias add, relu).
std::unique_ptr<Graph> buildChain(int64_t numOps) {
  ZooOptions options = {{"layers", std::to_string(numOps / 5)},
                        {"width", "8"},
                        {"batch", "2"}};
  absl::StatusOr<std::unique_ptr<Graph>> graph = buildZooModel("mlp", options);
  if (!graph.ok()) {
    fprintf(stderr, "%s\n", std::string(graph.status().message()).c_str());
    std::abort();
  }
  return std::move(*graph);
}

void reportSize(benchmark::State &state, const Graph &graph) {
  state.counters["ops"] = graph.numOps();
  state.counters["ops/s"] = benchmark::Counter(
      double(graph.numOps()), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Build(benchmark::State &state) {
  size_t numOps = 0;
  for (auto _ : state) {
    std::unique_ptr<Graph> graph = buildChain(state.range(0));
    numOps = graph->numOps();
    benchmark::DoNotOptimize(graph.get());
  }
  state.counters["ops"] = numOps;
  state.counters["ops/s"] = benchmark::Counter(
      double(numOps), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Print(benchmark::State &state) {
  std::unique_ptr<Graph> graph = buildChain(state.range(0));
  for (auto _ : state)
    benchmark::DoNotOptimize(printGraph(*graph));
  reportSize(state, *graph);
}

void BM_Parse(benchmark::State &state) {
  std::unique_ptr<Graph> graph = buildChain(state.range(0));
  std::string text = printGraph(*graph);
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<Graph>> parsed = parseGraph(text, "bench");
    if (!parsed.ok())
      state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(parsed);
  }
  reportSize(state, *graph);
}

void BM_Verify(benchmark::State &state) {
  std::unique_ptr<Graph> graph = buildChain(state.range(0));
  for (auto _ : state)
    if (!verify(*graph).ok())
      state.SkipWithError("verify failed");
  reportSize(state, *graph);
}

/// A deep copy keeping ids, as every candidate of the budget search starts
/// from (`Graph::CloneIds::Keep`), of the chain's training graph.
void BM_Clone(benchmark::State &state) {
  std::unique_ptr<Graph> training = buildChain(state.range(0));
  if (!differentiate(*training).ok()) {
    state.SkipWithError("autodiff failed");
    return;
  }
  for (auto _ : state) {
    std::unique_ptr<Graph> copy = training->clone(Graph::CloneIds::Keep);
    state.PauseTiming();
    copy.reset();
    state.ResumeTiming();
  }
  reportSize(state, *training);
}

void BM_TopoSort(benchmark::State &state) {
  std::unique_ptr<Graph> graph = buildChain(state.range(0));
  for (auto _ : state)
    benchmark::DoNotOptimize(topologicalOrder(*graph));
  reportSize(state, *graph);
}

void BM_SimulateMemory(benchmark::State &state) {
  std::unique_ptr<Graph> graph = buildChain(state.range(0));
  for (auto _ : state)
    benchmark::DoNotOptimize(simulateMemory(*graph).peakBytes);
  reportSize(state, *graph);
}

/// `ops` is the forward graph's size; the training graph is about 2.6x that.
void BM_Autodiff(benchmark::State &state) {
  std::unique_ptr<Graph> forward = buildChain(state.range(0));
  int64_t added = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Graph> graph = forward->clone();
    state.ResumeTiming();
    absl::StatusOr<AutodiffResult> result = differentiate(*graph);
    if (!result.ok())
      state.SkipWithError("autodiff failed");
    else
      added = result->numOpsAdded;
    state.PauseTiming();
    graph.reset();
    state.ResumeTiming();
  }
  reportSize(state, *forward);
  state.counters["ops_added"] = double(added);
}

/// Checkpoint selection (sqrtn) and the recompute rewrite, autodiff included:
/// the forward graph becomes the training graph.
void BM_Recompute(benchmark::State &state) {
  std::unique_ptr<Graph> forward = buildChain(state.range(0));
  int64_t copies = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Graph> graph = forward->clone();
    state.ResumeTiming();
    absl::StatusOr<RematPlan> plan = planRematerialization(*graph, "sqrtn");
    absl::StatusOr<RecomputeResult> result =
        plan.ok() ? recomputeGradients(*graph, *plan)
                  : absl::StatusOr<RecomputeResult>(plan.status());
    if (!result.ok())
      state.SkipWithError("recompute failed");
    else
      copies = result->numCopies;
    state.PauseTiming();
    graph.reset();
    state.ResumeTiming();
  }
  reportSize(state, *forward);
  state.counters["copies"] = double(copies);
}

/// The schedule pass on the sqrtn training graph of the chain.
void BM_Schedule(benchmark::State &state) {
  std::unique_ptr<Graph> training = buildChain(state.range(0));
  absl::StatusOr<RematPlan> plan =
      planRematerialization(*training, "sqrtn");
  if (!plan.ok() || !recomputeGradients(*training, *plan).ok()) {
    state.SkipWithError("recompute failed");
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Graph> graph = training->clone();
    state.ResumeTiming();
    if (!scheduleForMemory(*graph).ok())
      state.SkipWithError("schedule failed");
    state.PauseTiming();
    graph.reset();
    state.ResumeTiming();
  }
  reportSize(state, *training);
}

// 1k to a little over 1M ops, by factors of 4.
#define REMAT_SCALE_BENCHMARK(fn)                                              \
  BENCHMARK(fn)                                                                \
      ->Arg(1000)                                                              \
      ->Arg(4000)                                                              \
      ->Arg(16000)                                                             \
      ->Arg(64000)                                                             \
      ->Arg(256000)                                                            \
      ->Arg(1020000)                                                           \
      ->Unit(benchmark::kMillisecond)

REMAT_SCALE_BENCHMARK(BM_Build);
REMAT_SCALE_BENCHMARK(BM_Print);
REMAT_SCALE_BENCHMARK(BM_Parse);
REMAT_SCALE_BENCHMARK(BM_Verify);
REMAT_SCALE_BENCHMARK(BM_Clone);
REMAT_SCALE_BENCHMARK(BM_TopoSort);
REMAT_SCALE_BENCHMARK(BM_SimulateMemory);
REMAT_SCALE_BENCHMARK(BM_Autodiff);
REMAT_SCALE_BENCHMARK(BM_Recompute);
REMAT_SCALE_BENCHMARK(BM_Schedule);

} // namespace
} // namespace remat

BENCHMARK_MAIN();

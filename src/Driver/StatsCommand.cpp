//===- StatsCommand.cpp - remat stats
//---------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Sizes of a graph and the peak memory of its schedule, as text or JSON (the
/// fields are documented in docs/cli.md).
///
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"
#include "GraphInput.h"
#include "Pictures.h"

#include "remat/Analysis/Cost.h"
#include "remat/Analysis/Memory.h"
#include "remat/Analysis/Placement.h"
#include "remat/IO/Report.h"
#include "remat/IO/TextFormat.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include "llvm/Support/JSON.h"

#include <fmt/format.h>

namespace remat::driver {
namespace {

const CommandSpec &statsSpec() {
  static const CommandSpec spec{
      .name = "stats",
      .synopsis = "FILE [--json] [--timeline=SVG] [-o OUT]",
      .description =
          "Prints the size of the graph in FILE (`-` for stdin) and the peak "
          "memory of its schedule:\nops (excluding input/param declarations), "
          "parameter elements and bytes, inputs, FLOPs,\nand the peak live "
          "bytes with the step that reaches it and what they are made of.",
      .options = withOnnxImportOptions({{.name = "json", .help = "Prints JSON instead of text."},
                  {.name = "timeline",
                   .valueName = "SVG",
                   .help = "Also draws the live bytes at every step, split "
                           "by kind, as an SVG picture in the file SVG."},
                  {.name = "output",
                   .shortName = 'o',
                   .valueName = "OUT",
                   .help = "Writes to OUT instead of stdout."}})};
  return spec;
}

/// Everything `remat stats` reports about one graph.
struct GraphStats {
  std::string graph;
  int64_t ops = 0;
  int64_t params = 0;
  int64_t paramBytes = 0;
  int64_t inputs = 0;
  int64_t inputBytes = 0;
  int64_t outputs = 0;
  int64_t flops = 0;
  int64_t numSteps = 0;
  MemoryProfile memory;
  /// The op at the peak step, described; empty for an empty graph.
  std::string peakOp;
  /// Per device of a multi-device graph (docs/multi-device.md); empty when
  /// the graph names no device or its placement does not hold.
  std::vector<DeviceProfile> devices;
};

GraphStats computeStats(const Graph &graph) {
  GraphStats stats;
  stats.graph = graph.name().str();
  // Every declaration is an input or a param.
  stats.ops = graph.numOps() - graph.inputs().size() - graph.params().size();
  for (const Value *param : graph.params()) {
    stats.params += param->type().numElements();
    stats.paramBytes += param->type().byteSize();
  }
  stats.inputs = graph.inputs().size();
  for (const Value *input : graph.inputs())
    stats.inputBytes += input->type().byteSize();
  stats.outputs = graph.outputs().size();
  stats.flops = graphFlops(graph);
  stats.numSteps = graph.numOps();
  stats.memory = simulateMemory(graph);
  if (stats.memory.peakStep >= 0)
    stats.peakOp =
        std::next(graph.ops().begin(), stats.memory.peakStep)->describe();
  if (absl::StatusOr<Placement> placement = computePlacement(graph);
      placement.ok())
    stats.devices = profileDevices(graph, *placement);
  return stats;
}

void printJson(const GraphStats &stats, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("graph", stats.graph);
    json.attribute("ops", stats.ops);
    json.attribute("params", stats.params);
    json.attribute("param_bytes", stats.paramBytes);
    json.attribute("inputs", stats.inputs);
    json.attribute("input_bytes", stats.inputBytes);
    json.attribute("outputs", stats.outputs);
    json.attribute("flops", stats.flops);
    json.attribute("steps", stats.numSteps);
    json.attribute("peak_bytes", stats.memory.peakBytes);
    json.attribute("peak_step", stats.memory.peakStep);
    writeBreakdownJson(json, "peak_breakdown", stats.memory.peakBreakdown);
    if (!stats.devices.empty())
      writeDevicesJson(json, stats.devices, /*withTransfers=*/true);
  });
  os << '\n';
}

std::string bytesText(int64_t bytes) {
  return bytes < 1024 ? formatBytes(bytes)
                      : fmt::format("{} ({} bytes)", formatBytes(bytes), bytes);
}

void printText(const GraphStats &stats, llvm::raw_ostream &os) {
  const MemoryBreakdown &peak = stats.memory.peakBreakdown;
  os << fmt::format("graph        @{}\n", stats.graph);
  os << fmt::format("ops          {}\n", stats.ops);
  os << fmt::format("params       {} elements, {}\n", stats.params,
                    bytesText(stats.paramBytes));
  os << fmt::format("inputs       {}, {}\n", stats.inputs,
                    bytesText(stats.inputBytes));
  os << fmt::format("outputs      {}\n", stats.outputs);
  os << fmt::format("flops        {:.3f} GFLOP ({})\n",
                    double(stats.flops) / 1e9, stats.flops);
  if (stats.memory.peakStep < 0) {
    os << "peak memory  0 B (empty schedule)\n";
    return;
  }
  os << fmt::format("peak memory  {} at step {} of {}: {}\n",
                    bytesText(stats.memory.peakBytes), stats.memory.peakStep,
                    stats.numSteps, stats.peakOp);
  os << fmt::format("  params       {}\n", bytesText(peak.params));
  os << fmt::format("  param grads  {}\n", bytesText(peak.paramGrads));
  os << fmt::format("  inputs       {}\n", bytesText(peak.inputs));
  os << fmt::format("  activations  {}\n", bytesText(peak.activations));
  if (stats.devices.empty())
    return;
  os << "devices      peak, sent, transfers, collective calls\n";
  for (const DeviceProfile &device : stats.devices)
    os << fmt::format("  {:<10} {}  {}  {}  {}\n", device.device,
                      bytesText(device.peakBytes), formatBytes(device.bytesSent),
                      device.transfersSent, device.collectiveCalls);
}

absl::Status runStatsCommand(const ParsedArgs &args, CommandContext &ctx) {
  const CommandSpec &spec = statsSpec();
  REMAT_ASSIGN_OR_RETURN(std::string path,
                         singlePositional(spec, args, "FILE"));
  std::optional<std::string> timeline = args.get("timeline");
  REMAT_RETURN_IF_ERROR(checkOutputsSpareInputs(
      {{"-o", args.get("output")}, {"--timeline", timeline}},
      {{"the input graph", path}}));
  if (timeline && *timeline == "-")
    return invalidArgument("--timeline writes a picture to a file, not stdout");
  REMAT_ASSIGN_OR_RETURN(auto graph, readGraphInput(path, args));
  GraphStats stats = computeStats(*graph);
  if (timeline) {
    TimelineExtras extras{.title = fmt::format("@{}: live bytes", stats.graph)};
    REMAT_RETURN_IF_ERROR(writeTimeline(*timeline, *graph, extras, ctx.out));
  }
  disposeGraph(std::move(graph), ctx);
  bool json = args.has("json");
  return writeOutput(args.get("output"), ctx.out, [&](llvm::raw_ostream &os) {
    if (json)
      printJson(stats, os);
    else
      printText(stats, os);
  });
}

} // namespace

const Command kStatsCommand{statsSpec, runStatsCommand};

} // namespace remat::driver

//===- ExportCommand.cpp - remat export -------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"
#include "DataExchange.h"

#include "remat/IO/OnnxExport.h"
#include "remat/IO/TextFormat.h"
#include "remat/Support/Status.h"

#include <limits>

namespace remat::driver {
namespace {

const CommandSpec &exportSpec() {
  static const CommandSpec spec{
      .name = "export",
      .synopsis = "TRAIN.remat [--params=MODEL.onnx] [--opset=17] -o OUT.onnx",
      .description =
          "Writes a training graph (what `remat opt` builds) as an ONNX model "
          "of default-domain\noperators that ONNX Runtime runs as one "
          "training step: inputs are the data and\nevery param, outputs the "
          "loss, every `<param>.grad`, then the other outputs.\nThe plan's "
          "recomputed copies and their order survive the runtime's "
          "optimizer\n(docs/export.md).",
      .options = {{.name = "params",
                   .valueName = "MODEL.onnx",
                   .help = "Embeds the weights of the ONNX model the graph "
                           "was imported from as initializers\n(still "
                           "inputs, which a caller may feed), matched to "
                           "params as `run --params`\nmatches them; a "
                           "model that names no param is an error."},
                  {.name = "opset",
                   .valueName = "N",
                   .help = "The default-domain opset (17, the default and "
                           "the one supported)."},
                  {.name = "no-forced-dependencies",
                   .help = "Drops the control dependencies instead of "
                           "forcing them as data: for measuring what they "
                           "do (the runtime may then merge recomputed "
                           "copies with their originals)."},
                  {.name = "pinned-node-bytes",
                   .valueName = "N",
                   .help = "Keeps every node of an op's lowering that "
                           "writes at least N bytes (65536)\nafter what "
                           "its op follows, so the runtime cannot run it "
                           "early."},
                  {.name = "hide-idle-buffers",
                   .valueName = "ROUNDS",
                   .help = "Hides from ONNX Runtime's planner the dims of "
                           "the tensors whose buffers it\nwould hold idle for "
                           "reuse at the step's peak, round by round until "
                           "none is,\nat most ROUNDS (1000 by default; 0: "
                           "none); prints what its replay of the\nplanner "
                           "found when given."},
                  {.name = "peak-order-rounds",
                   .valueName = "ROUNDS",
                   .help = "Replays ONNX Runtime's order and, at its peak, "
                           "makes nodes wait as remat's\nschedule orders "
                           "them, round by round until the peak is the "
                           "schedule's, at most\nROUNDS (0, the default: "
                           "none); prints what its replay found."},
                  {.name = "output",
                   .shortName = 'o',
                   .valueName = "OUT",
                   .help = "Writes the model to OUT (required: it is "
                           "binary)."}}};
  return spec;
}

/// Reads `--NAME=ROUNDS` into `rounds` where given (and says whether it
/// was): rounds of a pass that replays the runtime's order, which only the
/// forced dependencies fix.
absl::StatusOr<bool> replayRounds(const ParsedArgs &args, const char *name,
                                  bool forced, int &rounds) {
  REMAT_ASSIGN_OR_RETURN(
      std::optional<int64_t> value,
      integerOption(args, name, 0, std::numeric_limits<int>::max()));
  if (!value)
    return false;
  rounds = int(*value);
  if (!forced && rounds > 0)
    return invalidArgument("option '--{}' replays the runtime's order, which "
                           "only the forced dependencies fix: not with "
                           "'--no-forced-dependencies'",
                           name);
  return true;
}

absl::Status runExportCommand(const ParsedArgs &args, CommandContext &ctx) {
  const CommandSpec &spec = exportSpec();
  REMAT_ASSIGN_OR_RETURN(std::string path,
                         singlePositional(spec, args, "TRAIN.remat"));
  std::optional<std::string> output = args.get("output");
  if (!output || *output == "-")
    return invalidArgument("'remat export' writes a binary model: give its "
                           "file with -o OUT.onnx");
  std::optional<std::string> params = args.get("params");
  REMAT_RETURN_IF_ERROR(checkOutputsSpareInputs(
      {{"-o", output}}, {{"the input graph", path},
                         {"the --params model", params}}));
  OnnxExportOptions options;
  if (std::optional<std::string> opset = args.get("opset")) {
    if (llvm::StringRef(*opset).getAsInteger(10, options.opset))
      return invalidArgument("option '--opset' wants a number, got '{}'",
                             *opset);
  }
  options.forceDependencies = !args.has("no-forced-dependencies");
  REMAT_ASSIGN_OR_RETURN(std::optional<int64_t> pinned,
                         integerOption(args, "pinned-node-bytes", 0));
  options.pinnedNodeBytes = pinned.value_or(options.pinnedNodeBytes);
  REMAT_ASSIGN_OR_RETURN(bool hideGiven,
                         replayRounds(args, "hide-idle-buffers",
                                      options.forceDependencies,
                                      options.idleBufferRounds));
  REMAT_ASSIGN_OR_RETURN(bool orderGiven,
                         replayRounds(args, "peak-order-rounds",
                                      options.forceDependencies,
                                      options.peakOrderRounds));
  REMAT_ASSIGN_OR_RETURN(auto graph, parseGraphFile(path));
  TensorMap weights;
  if (params) {
    // Unmatched params stay inputs that the caller feeds.
    REMAT_ASSIGN_OR_RETURN(weights,
                           loadOnnxParams(*graph, *params,
                                          "are inputs with no embedded "
                                          "weights",
                                          ctx.err));
    options.initializers = &weights;
  }
  REMAT_ASSIGN_OR_RETURN(OnnxExport exported, exportOnnx(*graph, options));
  disposeGraph(std::move(graph), ctx);
  // The replays' figures, for the steps asked for by name.
  if (const auto &order = exported.peakOrder; order && orderGiven)
    ctx.err << fmt::format("remat: ONNX Runtime's order, replayed: peak {} "
                           "live bytes, {} after {} waits (the schedule's: "
                           "{})\n",
                           order->peakBefore, order->peakAfter, order->waits,
                           order->schedulePeak);
  if (const auto &idle = exported.idleBuffers; idle && hideGiven)
    ctx.err << fmt::format("remat: ONNX Runtime's allocation planner, "
                           "replayed: peak {} bytes, {} after hiding {} "
                           "tensors ({} with no buffer held for reuse)\n",
                           idle->peakBefore, idle->peakAfter, idle->hidden,
                           idle->peakLive);
  return writeOutput(output, ctx.out,
                     [&](llvm::raw_ostream &os) { os << exported.model; });
}

} // namespace

const Command kExportCommand{exportSpec, runExportCommand};

} // namespace remat::driver

//===- OptCommand.cpp - remat opt -------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs a textual pass pipeline over a graph and prints the result. With
/// `--split-input-file` each `// -----`-separated graph is processed on its
/// own and the outputs are separated the same way; an error in one graph is
/// reported and the next one still runs.
///
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/PassManager.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Support/Status.h"

#include <fmt/format.h>

namespace remat::driver {
namespace {

const CommandSpec &optSpec() {
  static const CommandSpec spec{
      .name = "opt",
      .synopsis = "FILE -p PIPELINE [--verify-each] [--timing] "
                  "[--split-input-file] [-o OUT]",
      .description =
          "Runs the pass pipeline PIPELINE on the graph in FILE (`-` for "
          "stdin) and prints the\nresulting graph as text IR. A pipeline is "
          "a comma-separated list of passes, each\nwith optional options: "
          "`dce,cse,toposort` or `dce{keep-unused-leaves=false}`.\nThe "
          "result is verified before it is printed.",
      .options = {
          {.name = "pipeline",
           .shortName = 'p',
           .valueName = "PIPELINE",
           .help = "The passes to run, in order."},
          {.name = "verify-each",
           .help = "Verifies the graph after every pass; a failure names "
                   "the pass."},
          {.name = "timing",
           .help = "Prints each pass's run time and whether it changed the "
                   "graph to stderr."},
          {.name = "split-input-file",
           .help = "Treats each `// -----`-separated part of FILE as its own "
                   "graph."},
          {.name = "output",
           .shortName = 'o',
           .valueName = "OUT",
           .help = "Writes to OUT instead of stdout."}}};
  return spec;
}

void printOptHelp(llvm::raw_ostream &os) {
  printUsage(optSpec(), os);
  std::vector<const PassInfo *> passes = PassRegistry::global().all();
  size_t width = 0;
  for (const PassInfo *pass : passes)
    width = std::max(width, pass->argument.size());
  os << "\npasses (options with their defaults):\n";
  for (const PassInfo *pass : passes) {
    os << fmt::format("  {:<{}}  {}\n", pass->argument, width, pass->summary);
    for (const PassOptionInfo &option : pass->options)
      os << fmt::format("    {{{}={}}}  {}\n", option.name, option.defaultValue,
                        option.help);
  }
}

void printTimings(const PipelineResult &result, llvm::raw_ostream &err) {
  double total = 0;
  size_t width = 5;
  for (const PassTiming &timing : result.timings)
    width = std::max(width, timing.argument.size());
  err << "pass timing:\n";
  for (const PassTiming &timing : result.timings) {
    total += timing.seconds;
    err << fmt::format("  {:<{}}  {:10.6f} s  {}\n", timing.argument, width,
                       timing.seconds,
                       timing.changed ? "changed" : "unchanged");
  }
  err << fmt::format("  {:<{}}  {:10.6f} s\n", "total", width, total);
  err.flush();
}

/// Runs a fresh instance of `pipeline` on `graph` and verifies the result.
absl::Status optimize(Graph &graph, llvm::StringRef pipeline,
                      const ParsedArgs &args, CommandContext &ctx) {
  PassManager pm;
  pm.enableVerifier(args.has("verify-each"));
  REMAT_RETURN_IF_ERROR(parsePassPipeline(pipeline, pm));
  REMAT_ASSIGN_OR_RETURN(PipelineResult result, pm.run(graph));
  if (args.has("timing"))
    printTimings(result, ctx.err);
  return verify(graph);
}

} // namespace

absl::Status runOptCommand(llvm::ArrayRef<std::string> argv,
                           CommandContext &ctx) {
  const CommandSpec &spec = optSpec();
  REMAT_ASSIGN_OR_RETURN(ParsedArgs args, parseArgs(spec, argv));
  if (args.help) {
    printOptHelp(ctx.out);
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(std::string path,
                         singlePositional(spec, args, "FILE"));
  std::optional<std::string> pipeline = args.get("pipeline");
  if (!pipeline)
    return invalidArgument(
        "'remat opt' needs a pipeline: -p PIPELINE (see 'remat opt --help')");
  // A malformed pipeline is reported before the input is read.
  PassManager check;
  REMAT_RETURN_IF_ERROR(parsePassPipeline(*pipeline, check));

  if (!args.has("split-input-file")) {
    REMAT_ASSIGN_OR_RETURN(auto graph, parseGraphFile(path));
    REMAT_RETURN_IF_ERROR(optimize(*graph, *pipeline, args, ctx));
    absl::Status written =
        writeOutput(args.get("output"), ctx.out,
                    [&](llvm::raw_ostream &os) { printGraph(*graph, os); });
    disposeGraph(std::move(graph), ctx);
    return written;
  }

  // Each graph's error is reported as it happens; the others still run.
  REMAT_ASSIGN_OR_RETURN(std::vector<InputChunk> chunks, readSplitInput(path));
  std::string name = inputName(path);
  std::vector<std::string> printed;
  for (const InputChunk &chunk : chunks) {
    absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(chunk.text, name);
    absl::Status status = graph.status();
    if (status.ok())
      status = optimize(**graph, *pipeline, args, ctx);
    if (status.ok())
      printed.push_back(printGraph(**graph));
    else
      reportError(status, ctx.err);
  }
  REMAT_RETURN_IF_ERROR(
      writeOutput(args.get("output"), ctx.out, [&](llvm::raw_ostream &os) {
        for (size_t i = 0; i < printed.size(); ++i)
          os << (i == 0 ? "" : "// -----\n") << printed[i];
      }));
  if (printed.size() != chunks.size())
    return invalidArgument("{} of {} graphs in '{}' failed",
                           chunks.size() - printed.size(), chunks.size(), name);
  return absl::OkStatus();
}

} // namespace remat::driver

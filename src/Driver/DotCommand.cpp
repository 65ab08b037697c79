//===- DotCommand.cpp - remat dot -------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"
#include "GraphInput.h"

#include "remat/IO/Dot.h"
#include "remat/IO/TextFormat.h"
#include "remat/Support/Status.h"

namespace remat::driver {
namespace {

const CommandSpec &dotSpec() {
  static const CommandSpec spec{
      .name = "dot",
      .synopsis = "FILE [-o OUT]",
      .description =
          "Writes the graph in FILE (`-` for stdin) in graphviz's DOT "
          "language: one node per op\nwith its kind and result types, one "
          "edge per operand labelled with the value,\ndashed edges for "
          "control dependencies, one cluster per region tag.\nRender with "
          "`dot -Tsvg`.",
      .options = withOnnxImportOptions({{.name = "output",
                   .shortName = 'o',
                   .valueName = "OUT",
                   .help = "Writes to OUT instead of stdout."}})};
  return spec;
}

absl::Status runDotCommand(const ParsedArgs &args, CommandContext &ctx) {
  const CommandSpec &spec = dotSpec();
  REMAT_ASSIGN_OR_RETURN(std::string path,
                         singlePositional(spec, args, "FILE"));
  REMAT_RETURN_IF_ERROR(checkOutputsSpareInputs({{"-o", args.get("output")}},
                                                {{"the input graph", path}}));
  REMAT_ASSIGN_OR_RETURN(auto graph, readGraphInput(path, args));
  absl::Status written =
      writeOutput(args.get("output"), ctx.out,
                  [&](llvm::raw_ostream &os) { printDot(*graph, os); });
  disposeGraph(std::move(graph), ctx);
  return written;
}

} // namespace

const Command kDotCommand{dotSpec, runDotCommand};

} // namespace remat::driver

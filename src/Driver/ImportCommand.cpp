//===- ImportCommand.cpp - remat import -------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"
#include "GraphInput.h"

#include "remat/IO/Onnx.h"
#include "remat/IO/TextFormat.h"
#include "remat/Support/Status.h"

namespace remat::driver {
namespace {

const CommandSpec &importSpec() {
  static const CommandSpec spec = [] {
    CommandSpec spec{
        .name = "import",
        .synopsis = "MODEL.onnx [--input-shape=NAME=D0xD1x...] [--loss=LOSS] "
                    "[-o OUT]",
        .description =
            "Imports an ONNX model (opsets 13 to 20, as PyTorch's "
            "torch.onnx.export writes it,\nweights in an external "
            "MODEL.onnx.data too) and prints it as text IR with a\nscalar "
            "loss as the first output. Initializers become params (float "
            "weights) or\ninputs (batch-norm running statistics); `remat run "
            "--params=MODEL.onnx` feeds\ntheir values. Every command that "
            "reads a graph file also reads the model itself,\nwith these "
            "options. See docs/import.md.",
        .options = onnxImportOptionSpecs()};
    spec.options.push_back({.name = "output",
                            .shortName = 'o',
                            .valueName = "OUT",
                            .help = "Writes to OUT instead of stdout."});
    return spec;
  }();
  return spec;
}

absl::Status runImportCommand(const ParsedArgs &args, CommandContext &ctx) {
  const CommandSpec &spec = importSpec();
  REMAT_ASSIGN_OR_RETURN(std::string path,
                         singlePositional(spec, args, "MODEL.onnx"));
  REMAT_RETURN_IF_ERROR(checkOutputsSpareInputs({{"-o", args.get("output")}},
                                                {{"the input model", path}}));
  REMAT_ASSIGN_OR_RETURN(OnnxImportOptions options, onnxImportOptions(args));
  REMAT_ASSIGN_OR_RETURN(auto graph, importOnnxFile(path, options));
  absl::Status written =
      writeOutput(args.get("output"), ctx.out,
                  [&](llvm::raw_ostream &os) { printGraph(*graph, os); });
  disposeGraph(std::move(graph), ctx);
  return written;
}

} // namespace

const Command kImportCommand{importSpec, runImportCommand};

} // namespace remat::driver

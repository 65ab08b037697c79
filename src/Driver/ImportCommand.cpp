//===- ImportCommand.cpp - remat import -------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"

#include "remat/IO/Onnx.h"
#include "remat/IO/TextFormat.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/StringExtras.h"

namespace remat::driver {
namespace {

const CommandSpec &importSpec() {
  static const CommandSpec spec{
      .name = "import",
      .synopsis = "MODEL.onnx [--input-shape=NAME=D0xD1x...] [--loss=LOSS] "
                  "[-o OUT]",
      .description =
          "Imports an ONNX model (opsets 13 to 17, as torch.onnx.export "
          "writes it) and prints\nit as text IR with a scalar loss as the "
          "first output. Initializers become params\n(float weights) or "
          "inputs (batch-norm running statistics); `remat run "
          "--params=MODEL.onnx`\nfeeds their values. See docs/import.md.",
      .options =
          {{.name = "input-shape",
            .valueName = "NAME=D0xD1x...",
            .help = "Fixes the shape of graph input NAME; comma-separate "
                    "several (NAME=2x3,OTHER=4)."},
           {.name = "loss",
            .valueName = "LOSS",
            .help = "softmax_cross_entropy (adds an i32 input 'labels'), mse "
                    "(adds an input 'target'), sum, or output (default: the "
                    "model's first output is the loss)."},
           {.name = "output",
            .shortName = 'o',
            .valueName = "OUT",
            .help = "Writes to OUT instead of stdout."}}};
  return spec;
}

/// Parses `NAME=2x3x4[,NAME=...]`.
absl::Status parseInputShapes(llvm::StringRef text,
                              OnnxImportOptions &options) {
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [name, dims] = item.rsplit('=');
    if (name.empty() || dims.empty() || !item.contains('='))
      return invalidArgument("option '--input-shape' wants NAME=D0xD1x..., got "
                             "'{}'",
                             item.str());
    std::vector<int64_t> shape;
    llvm::SmallVector<llvm::StringRef> parts;
    dims.split(parts, 'x');
    for (llvm::StringRef part : parts) {
      int64_t dim = 0;
      if (part.getAsInteger(10, dim) || dim < 0)
        return invalidArgument("option '--input-shape': '{}' in '{}' is not a "
                               "non-negative dimension",
                               part.str(), item.str());
      shape.push_back(dim);
    }
    options.inputShapes[name.str()] = std::move(shape);
  }
  return absl::OkStatus();
}

} // namespace

absl::Status runImportCommand(llvm::ArrayRef<std::string> argv,
                              CommandContext &ctx) {
  const CommandSpec &spec = importSpec();
  REMAT_ASSIGN_OR_RETURN(ParsedArgs args, parseArgs(spec, argv));
  if (args.help) {
    printUsage(spec, ctx.out);
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(std::string path,
                         singlePositional(spec, args, "MODEL.onnx"));
  OnnxImportOptions options;
  if (std::optional<std::string> shapes = args.get("input-shape"))
    REMAT_RETURN_IF_ERROR(parseInputShapes(*shapes, options));
  if (std::optional<std::string> loss = args.get("loss")) {
    REMAT_ASSIGN_OR_RETURN(options.loss, parseOnnxLoss(*loss));
  }
  REMAT_ASSIGN_OR_RETURN(auto graph, importOnnxFile(path, options));
  absl::Status written =
      writeOutput(args.get("output"), ctx.out,
                  [&](llvm::raw_ostream &os) { printGraph(*graph, os); });
  disposeGraph(std::move(graph), ctx);
  return written;
}

} // namespace remat::driver

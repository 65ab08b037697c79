//===- GraphInput.cpp - The graph file a command reads -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "GraphInput.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

namespace remat::driver {
namespace {

/// The first byte of a serialized ModelProto: field 1 (`ir_version`) as a
/// varint, the field every exporter writes first.
constexpr char kModelProtoFirstByte = 0x08;

/// Parses `NAME=2x3x4[,NAME=...]` into `options`.
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
    if (!options.inputShapes.emplace(name.str(), std::move(shape)).second)
      return invalidArgument("option '--input-shape' names input '{}' twice "
                             "(in '{}')",
                             name.str(), text.str());
  }
  return absl::OkStatus();
}

} // namespace

std::vector<OptionSpec> onnxImportOptionSpecs() {
  return {{.name = "input-shape",
           .valueName = "NAME=D0xD1x...",
           .help = "For an ONNX model: fixes the shape of graph input NAME; "
                   "comma-separate several (NAME=2x3,OTHER=4)."},
          {.name = "loss",
           .valueName = "LOSS",
           .help = "For an ONNX model: softmax_cross_entropy (adds an i32 "
                   "input 'labels'), mse (adds an input 'target'), sum, or "
                   "output (default: the model's first output is the loss)."}};
}

std::vector<OptionSpec> withOnnxImportOptions(std::vector<OptionSpec> options) {
  for (OptionSpec &option : onnxImportOptionSpecs())
    options.push_back(std::move(option));
  return options;
}

absl::StatusOr<OnnxImportOptions> onnxImportOptions(const ParsedArgs &args) {
  OnnxImportOptions options;
  if (std::optional<std::string> shapes = args.get("input-shape"))
    REMAT_RETURN_IF_ERROR(parseInputShapes(*shapes, options));
  if (std::optional<std::string> loss = args.get("loss")) {
    REMAT_ASSIGN_OR_RETURN(options.loss, parseOnnxLoss(*loss));
  }
  return options;
}

bool isOnnxModelFile(llvm::StringRef path) {
  if (path == "-")
    return false;
  if (path.endswith(".onnx"))
    return true;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> head =
      llvm::MemoryBuffer::getFileSlice(path, /*MapSize=*/1, /*Offset=*/0);
  return head && (*head)->getBufferSize() == 1 &&
         (*head)->getBuffer().front() == kModelProtoFirstByte;
}

absl::StatusOr<std::unique_ptr<Graph>> readGraphInput(llvm::StringRef path,
                                                      const ParsedArgs &args) {
  if (isOnnxModelFile(path)) {
    REMAT_ASSIGN_OR_RETURN(OnnxImportOptions options, onnxImportOptions(args));
    return importOnnxFile(path, options);
  }
  for (const OptionSpec &option : onnxImportOptionSpecs())
    if (args.has(option.name))
      return invalidArgument("option '--{}' is for an ONNX model, and '{}' is "
                             "text IR",
                             option.name.str(), path.str());
  return parseGraphFile(path);
}

} // namespace remat::driver

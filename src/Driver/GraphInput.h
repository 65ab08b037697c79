//===- GraphInput.h - The graph file a command reads -------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every command that reads a graph file also takes an ONNX model in its
/// place, imported as `remat import` would (docs/import.md), with the
/// import's own `--input-shape` and `--loss`. Private to src/Driver.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_DRIVER_GRAPHINPUT_H
#define REMAT_SRC_DRIVER_GRAPHINPUT_H

#include "Args.h"

#include "remat/IO/Onnx.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <vector>

namespace remat {
class Graph;
} // namespace remat

namespace remat::driver {

/// `--input-shape` and `--loss`, as `remat import` and every command that
/// reads a graph file declare them.
std::vector<OptionSpec> onnxImportOptionSpecs();

/// `options` followed by `onnxImportOptionSpecs()`: the options of a
/// command that reads a graph file.
std::vector<OptionSpec> withOnnxImportOptions(std::vector<OptionSpec> options);

/// The import options `args` give: `--input-shape=NAME=2x3[,NAME=...]`
/// (naming an input twice is an error) and `--loss`.
absl::StatusOr<OnnxImportOptions> onnxImportOptions(const ParsedArgs &args);

/// Whether `path` holds an ONNX model rather than text IR: it is named
/// `.onnx`, or it starts as a serialized ModelProto does (field 1, the IR
/// version, a byte that no text IR file starts with). Standard input is
/// text IR.
bool isOnnxModelFile(llvm::StringRef path);

/// The graph in `path`: text IR, or an ONNX model imported with the options
/// of `args`, which text IR may not be given.
absl::StatusOr<std::unique_ptr<Graph>> readGraphInput(llvm::StringRef path,
                                                      const ParsedArgs &args);

} // namespace remat::driver

#endif // REMAT_SRC_DRIVER_GRAPHINPUT_H

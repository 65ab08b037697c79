//===- Onnx.h - Importing ONNX models ----------------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Turns an ONNX model (as PyTorch's `torch.onnx.export` writes it) into a
/// remat graph with static shapes, and reads its weights as named tensors.
/// The model is checked by ONNX's checker and shape inference first. Every
/// error is one line `file: node 'name' (OpType): message` (or `file: message`
/// when no node is at fault); nothing is half-imported. See docs/import.md.
///
/// The reader of weights lives here, beside the importer that names them,
/// and returns Runtime's `HostTensor`: the one place IO reaches into Runtime.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_ONNX_H
#define REMAT_IO_ONNX_H

#include "remat/IR/Graph.h"
#include "remat/Runtime/Tensor.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace remat {

/// The loss appended to a forward-only model.
enum class OnnxLoss {
  /// None: the model's first output must already be a scalar.
  Output,
  /// softmax_cross_entropy of the first output [..., C] against a new i32
  /// input `labels` [...].
  SoftmaxCrossEntropy,
  /// mse_loss of the first output against a new input `target` of its type.
  Mse,
  /// The sum of every element of the first output.
  Sum,
};

/// Parses `softmax_cross_entropy`, `mse`, `sum` or `output`.
absl::StatusOr<OnnxLoss> parseOnnxLoss(llvm::StringRef name);

struct OnnxImportOptions {
  /// Static shapes of graph inputs by ONNX name; they replace the model's own
  /// (which may have dynamic dimensions) and must agree with its static ones.
  std::map<std::string, std::vector<int64_t>, std::less<>> inputShapes;
  OnnxLoss loss = OnnxLoss::Output;
};

/// Imports the serialized ModelProto `bytes`; `fileName` begins every error.
absl::StatusOr<std::unique_ptr<Graph>>
importOnnx(llvm::StringRef bytes, llvm::StringRef fileName,
           const OnnxImportOptions &options = {});

/// Reads the file `path` and imports it.
absl::StatusOr<std::unique_ptr<Graph>>
importOnnxFile(llvm::StringRef path, const OnnxImportOptions &options = {});

/// The model's initializers and the tensors of its Constant nodes, by the
/// names the importer gives their leaves, with their values: what
/// `remat run --params=MODEL.onnx` feeds.
absl::StatusOr<std::map<std::string, HostTensor, std::less<>>>
readOnnxTensors(llvm::StringRef bytes, llvm::StringRef fileName);

/// Reads the file `path` and returns its tensors.
absl::StatusOr<std::map<std::string, HostTensor, std::less<>>>
readOnnxTensorsFile(llvm::StringRef path);

} // namespace remat

#endif // REMAT_IO_ONNX_H

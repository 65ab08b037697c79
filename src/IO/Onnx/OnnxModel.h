//===- OnnxModel.h - Loading and checking ONNX models ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Parsing ModelProto bytes and running ONNX's checker and shape inference,
/// with ONNX's exceptions turned into located errors. Private to src/IO/Onnx.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNX_ONNXMODEL_H
#define REMAT_SRC_IO_ONNX_ONNXMODEL_H

#include "remat/IR/Type.h"
#include "remat/Runtime/Tensor.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace remat::onnximport {

/// The oldest and newest default-domain opsets the importer accepts.
inline constexpr int64_t kMinOpset = 13;
inline constexpr int64_t kMaxOpset = 20;
/// The newest default-domain opset and IR version libonnx 1.12 knows.
inline constexpr int64_t kLibOnnxOpset = 17;
inline constexpr int64_t kLibOnnxIrVersion = 8;

/// Whether `domain` (of a node or an opset import) is ONNX's default one,
/// which a model may spell "" or "ai.onnx".
inline bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// Parses `bytes` as a ModelProto and loads its external data (below).
absl::StatusOr<onnx::ModelProto> parseModel(llvm::StringRef bytes,
                                            llvm::StringRef fileName);

/// Moves the data of every tensor the model keeps in external files (the
/// initializers and the main graph's attribute tensors) into the tensor, as
/// raw data. A file's location must be relative, without `..`, and resolve
/// inside the directory of `fileName`, which must name a file.
absl::Status loadExternalData(onnx::ModelProto &model,
                              llvm::StringRef fileName);

/// Whether libonnx 1.12 must check `model` through `libOnnxView`: its IR
/// version or default-domain opset is newer than libonnx knows.
bool needsLibOnnxView(const onnx::ModelProto &model);

/// The values of a reduction's `axes` input, by its name, where known.
using KnownAxes =
    llvm::function_ref<std::optional<std::vector<int64_t>>(const std::string &)>;

/// A copy of `model` at IR version 8 and opset 17, its nodes of newer
/// operators in their opset-17 forms (LibOnnxView.cpp), for libonnx's
/// checker and shape inference; value names are kept. The checker needs no
/// axes; shape inference needs those `knownAxes` gives once converted.
onnx::ModelProto libOnnxView(const onnx::ModelProto &model,
                             const KnownAxes &knownAxes);

/// The model's default-domain opset, checked against the supported range.
absl::StatusOr<int64_t> defaultOpset(const onnx::ModelProto &model,
                                     llvm::StringRef fileName);

/// Gives the graph inputs named in `inputShapes` those shapes (checked against
/// the static dims the model has).
absl::Status applyInputShapes(
    onnx::ModelProto &model, llvm::StringRef fileName,
    const std::map<std::string, std::vector<int64_t>, std::less<>>
        &inputShapes);

/// Runs ONNX's checker, after the window attributes it trusts.
absl::Status checkModel(const onnx::ModelProto &model,
                        llvm::StringRef fileName);

/// Runs ONNX's strict shape inference, which records value_info for the
/// values it can type. libonnx's inference functions trust their input (a
/// Conv weight of higher rank than its input reads past a shape), so the
/// importer calls this only on a model its converters have accepted.
absl::Status inferShapes(onnx::ModelProto &model, llvm::StringRef fileName);

/// The static type in `info`, or an error naming `what` (a graph input) when
/// a dimension is dynamic or the element type unsupported.
absl::StatusOr<Type> staticType(const onnx::ValueInfoProto &info,
                                llvm::StringRef fileName, llvm::StringRef what);

/// Decodes `proto` into a host tensor of its own type.
absl::StatusOr<HostTensor> decodeHostTensor(const onnx::TensorProto &proto);

} // namespace remat::onnximport

#endif // REMAT_SRC_IO_ONNX_ONNXMODEL_H

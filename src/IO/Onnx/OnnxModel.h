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
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

namespace remat::onnximport {

/// The oldest and newest default-domain opsets the importer accepts.
inline constexpr int64_t kMinOpset = 13;
inline constexpr int64_t kMaxOpset = 17;

/// Parses `bytes` as a ModelProto.
absl::StatusOr<onnx::ModelProto> parseModel(llvm::StringRef bytes,
                                            llvm::StringRef fileName);

/// The model's default-domain opset, checked against the supported range.
absl::StatusOr<int64_t> defaultOpset(const onnx::ModelProto &model,
                                     llvm::StringRef fileName);

/// Gives the graph inputs named in `inputShapes` those shapes (checked against
/// the static dims the model has), then runs ONNX's checker.
absl::Status applyInputShapesAndCheck(
    onnx::ModelProto &model, llvm::StringRef fileName,
    const std::map<std::string, std::vector<int64_t>, std::less<>>
        &inputShapes);

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

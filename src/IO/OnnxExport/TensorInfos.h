//===- TensorInfos.h - Every tensor's type in an exported model --*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The element type and dims of every tensor of an exported model, from
/// ONNX's shape inference, for the passes that plan around how a runtime
/// orders nodes and reuses buffers (PinOrder.h, IdleBuffers.h).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_TENSORINFOS_H
#define REMAT_SRC_IO_ONNXEXPORT_TENSORINFOS_H

#include "remat/Support/Status.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace remat::onnxexport {

/// Bytes of one element of an ONNX element type; 0 for strings and types
/// the export never writes.
int64_t elementBytes(int onnxType);

/// A tensor whose dims are all known.
struct TensorInfo {
  /// An ONNX element type.
  int type = 0;
  llvm::SmallVector<int64_t, 4> dims;
  int64_t bytes = 0;

  bool isFloat() const {
    return type == onnx::TensorProto::FLOAT ||
           type == onnx::TensorProto::DOUBLE;
  }
};

class TensorInfos {
public:
  /// What `model` says of its inputs, outputs and initializers and what
  /// ONNX's shape inference finds for the rest. The model is left as it
  /// was. An error where the inference fails (a bug in the export).
  static absl::StatusOr<TensorInfos> infer(onnx::ModelProto &model);

  /// The tensor `name`, where its dims are known.
  const TensorInfo *find(const std::string &name) const {
    auto it = infos_.find(name);
    return it == infos_.end() ? nullptr : &it->second;
  }
  /// Records a tensor a pass adds.
  void add(const std::string &name, TensorInfo info) {
    infos_[name] = std::move(info);
  }

private:
  void add(const onnx::ValueInfoProto &info);
  llvm::StringMap<TensorInfo> infos_;
};

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_TENSORINFOS_H

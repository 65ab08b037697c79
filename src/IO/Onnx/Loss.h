//===- Loss.h - The loss appended to a forward-only model -------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Private to src/IO/Onnx.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNX_LOSS_H
#define REMAT_SRC_IO_ONNX_LOSS_H

#include "ImportContext.h"

#include "remat/IO/Onnx.h"

namespace remat::onnximport {

/// Puts the scalar loss `loss` asks for in front of `outputs` (the model's
/// outputs, the first of which it is computed from), declaring the inputs it
/// needs (`labels`, `target`).
absl::Status addLoss(ImportContext &ctx, OnnxLoss loss,
                     std::vector<Value *> &outputs);

} // namespace remat::onnximport

#endif // REMAT_SRC_IO_ONNX_LOSS_H

//===- RuntimeFacts.h - What ONNX Runtime does with an op type ---*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The facts about ONNX Runtime 1.30's CPU kernels that the export's steps
/// plan around, by ONNX op type, in one place: which results are views,
/// which kernels may write over their input, and which results take their
/// dims from values rather than from their inputs' dims. The order and the
/// planner that use them are replayed in PlannerReplay.h.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_RUNTIMEFACTS_H
#define REMAT_SRC_IO_ONNXEXPORT_RUNTIMEFACTS_H

#include <string>

namespace remat::onnxexport {

/// Ops whose result is a view of their first input: they allocate nothing.
bool isViewOp(const std::string &opType);

/// Unary kernels that may write their result over their input's buffer
/// when that input is read by nothing else (`MayInplace(0, 0)`).
bool mayRunInPlace(const std::string &opType);

/// Ops whose result's dims do not follow from their inputs' dims: hiding
/// the inputs' dims would not hide the result's.
bool dimsFromValues(const std::string &opType);

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_RUNTIMEFACTS_H

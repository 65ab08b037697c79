//===- IdleBuffers.h - No buffer held idle for reuse at the peak -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// ONNX Runtime's allocation planner (sequential execution on the CPU) gives
/// a dead tensor's buffer to the next tensor of the same element size and
/// dims, and keeps it allocated until then. A plan that frees a stage's
/// activations early and makes tensors of those shapes again only in the
/// backward pass leaves their buffers idle in between, often across the
/// step's peak. The planner never reuses the buffer of a tensor whose dims
/// it does not know; this pass replays the planner on the runtime's own
/// order and hides the dims of the tensors whose buffers sit idle at the
/// replayed peak, round by round.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_IDLEBUFFERS_H
#define REMAT_SRC_IO_ONNXEXPORT_IDLEBUFFERS_H

#include "OnnxGraph.h"

#include "remat/IO/OnnxExport.h"

namespace remat::onnxexport {

/// Hides from ONNX Runtime's planner the dims of the tensors whose buffers
/// it would hold idle at the step's peak, at most `rounds` times: each such
/// tensor's producer reads its first input (and every input of the same
/// dims) through a `Reshape` to `Shape(x) + z`, `z` a zero computed from
/// data, so the runtime knows the result's rank but not its dims. Values are
/// unchanged; only buffers at least `minBytes` are hidden.
/// Returns what the replay of the planner found.
IdleBufferReplay hideIdleBuffers(OnnxGraph &graph, int rounds,
                                 int64_t minBytes);

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_IDLEBUFFERS_H

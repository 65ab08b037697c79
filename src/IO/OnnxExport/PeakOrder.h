//===- PeakOrder.h - The runtime's peak in the schedule's order -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// ONNX Runtime runs each node where its depth-first walk back from the
/// step's last nodes reaches it, not where remat's schedule put it. The
/// forced dependencies and the pins keep the plan's copies and each op's
/// nodes in place, not every op: on GPT-2's least-peak plan the runtime's
/// order held 103 MB more live bytes at its peak than the schedule's. This
/// pass replays the runtime's order and, at its peak, adds waits that agree
/// with the schedule: a tensor the runtime made before the peak's node but
/// the schedule after it waits for that node; a reader of a tensor held at
/// the peak that the schedule runs before the peak's node, and the runtime
/// after, is waited for by it. Round by round, until the runtime's peak is
/// the schedule's.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_PEAKORDER_H
#define REMAT_SRC_IO_ONNXEXPORT_PEAKORDER_H

#include "OnnxGraph.h"
#include "Waits.h"

#include "remat/IO/OnnxExport.h"

namespace remat::onnxexport {

/// Adds, in at most `rounds` rounds, the waits that bring the live bytes at
/// the peak of ONNX Runtime's order down to the peak of the model's node
/// order (remat's schedule), for tensors of at least `minBytes`. Every wait
/// agrees with the node order, so the graph stays acyclic and its values
/// unchanged. Returns what the replay of the runtime's order found.
PeakOrderReplay orderPeakAsScheduled(OnnxGraph &graph, Waits &waits,
                                     int rounds, int64_t minBytes);

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_PEAKORDER_H

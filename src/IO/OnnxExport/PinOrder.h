//===- PinOrder.h - Each op's nodes kept after what the op follows -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A runtime orders an ONNX graph by data alone. ONNX Runtime's default is a
/// depth-first walk back from the nodes nothing reads that enters a node's
/// inputs latest-written first: a node of an op's lowering that reads only
/// old values (a batch norm's `x - mean` in a recomputed copy, a ReLU
/// gradient's mask of the forward activation) is reached before the walk
/// has gone back through the step so far, and runs that much earlier,
/// holding its result meanwhile. The export's forced dependencies
/// (ForcedOrder.h) order ops; this pass orders the nodes within each op.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_PINORDER_H
#define REMAT_SRC_IO_ONNXEXPORT_PINORDER_H

#include "ForcedOrder.h"
#include "OnnxGraph.h"
#include "Waits.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace remat::onnxexport {

/// The bytes `node`'s outputs hold; -1 where a size is unknown.
int64_t bytesWritten(const onnx::NodeProto &node, const TensorInfos &infos);

/// The slot of `node`'s smallest float input of at most `most` bytes; -1
/// when there is none.
int smallestFloatInput(const onnx::NodeProto &node, const TensorInfos &infos,
                       int64_t most);

/// The input slot through which `node` is made to wait: its smallest float
/// input of at most a quarter of what it writes (or 64 bytes), when it
/// writes at least `minBytes`; -1 when there is none.
int pinnedSlot(const onnx::NodeProto &node, const TensorInfos &infos,
               int64_t minBytes);

/// Makes every node of `ops` that does not read its op's `follows` (itself
/// or through another node of the op) wait for it, when the node writes at
/// least `minBytes` and reads a float tensor of at most a quarter of that
/// (or 64 bytes): the node reads that tensor as `t - z`, `z` the follows'
/// zero (exact for every `t`). Nodes without such an input (a transpose of
/// an old activation) stay free. `ops` in node order (ForcedOrder's
/// result); nodes outside them are kept as they are. Returns how many
/// nodes were made to wait.
int pinToOps(OnnxGraph &graph, Waits &waits, llvm::ArrayRef<OpNodes> ops,
             int64_t minBytes);

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_PINORDER_H

//===- OnnxExport.h - Training graphs as ONNX models -------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes a training graph (plain autodiff's, or any plan's, recomputed
/// copies and all) as an ONNX model of default-domain operators only, which
/// ONNX Runtime, or any ONNX runtime, runs as one training step: inputs are
/// the data inputs and every param, outputs the loss, every `<param>.grad`,
/// then the graph's other outputs. Every remat op, backward ops included,
/// has a standard-op form (src/IO/OnnxExport/, one op family per file); an
/// op with none (`dropout`, whose mask ONNX cannot replay; `all_reduce`,
/// `transfer`) is an error naming it. See docs/export.md.
///
/// A runtime's optimizer merges identical subexpressions and orders nodes
/// by data alone (ONNX Runtime: each node just before its first reader, the
/// unread ones last), and ONNX has no control dependencies: an op that waits
/// for another by control (a recomputed copy and its trigger), or follows an
/// op nothing reads (a parameter gradient), reads its smallest float operand
/// `k` as `k - (z1 + z2 + ...)`, each `z` the zero `0 * float(bool(g0))` of
/// an awaited value's first element `g0`: `+0` even where `g0` is infinite
/// or NaN, a data dependency that no optimizer folds away (docs/export.md).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_ONNXEXPORT_H
#define REMAT_IO_ONNXEXPORT_H

#include "remat/Runtime/Tensor.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace remat {

class Graph;

/// What the replay of ONNX Runtime's allocation planner found before and
/// after hiding idle buffers: the step's peak of held bytes (the process's
/// run peak, less kernels' scratch), and how many tensors were hidden;
/// `peakLive` is the peak with no buffer held for reuse, which hiding
/// approaches.
struct IdleBufferReplay {
  int64_t peakBefore = 0, peakAfter = 0, peakLive = 0;
  int hidden = 0;
};

/// What the replay of ONNX Runtime's order found before and after the waits
/// that bring its peak of live bytes to the schedule's (`schedulePeak`),
/// and how many nodes were made to wait.
struct PeakOrderReplay {
  int64_t peakBefore = 0, peakAfter = 0, schedulePeak = 0;
  int waits = 0;
};

struct OnnxExportOptions {
  /// The default-domain opset the model imports. Only 17 is accepted (the
  /// lowerings write its operators' forms); another is an error.
  int64_t opset = 17;
  /// Values embedded as initializers, by leaf name (`--params=MODEL.onnx`):
  /// they stay graph inputs, so a caller may feed other weights. Leaves of
  /// another type are an error; names no leaf has are ignored.
  const std::map<std::string, HostTensor, std::less<>> *initializers =
      nullptr;
  /// Turns control dependencies into data dependencies. Off only to
  /// measure what they do: a runtime may then merge each recomputed copy
  /// with its original and undo the plan.
  bool forceDependencies = true;
  /// With them, a node of an op's lowering that writes at least this many
  /// bytes waits for what its op follows (docs/export.md): smaller ones
  /// may run early at little cost.
  int64_t pinnedNodeBytes = 64 << 10;
  /// With them, at most this many rounds of waits that bring the live
  /// bytes at the peak of ONNX Runtime's order down to the schedule's
  /// (docs/export.md); 0: none. Off unless asked for: the replay does not
  /// see the runtime's fusions, and docs/export.md has a model where the
  /// waits raised the measured peak.
  int peakOrderRounds = 0;
  /// With them, the dims of the tensors whose buffers ONNX Runtime's
  /// planner would hold idle at the step's peak are hidden from it, round by
  /// round until none is, at most this many rounds (docs/export.md); 0:
  /// none. What it saved on the models measured, and what it costs with the
  /// runtime's arena off, is in docs/export.md.
  int idleBufferRounds = 1000;
};

/// An exported model and what its steps' replays found.
struct OnnxExport {
  /// The serialized ModelProto.
  std::string model;
  /// What the peak-order waits' replay of the runtime's order found, where
  /// they ran (`peakOrderRounds`).
  std::optional<PeakOrderReplay> peakOrder;
  /// What the hiding's replay of the planner found, where it ran
  /// (`idleBufferRounds`).
  std::optional<IdleBufferReplay> idleBuffers;
};

/// The ONNX model of `graph`, a verified training graph.
absl::StatusOr<OnnxExport> exportOnnx(const Graph &graph,
                                      const OnnxExportOptions &options = {});

} // namespace remat

#endif // REMAT_IO_ONNXEXPORT_H

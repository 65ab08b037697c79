//===- MeasuredCosts.h - Op costs a runtime measured ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Seconds per op measured by a runtime that ran remat's ONNX export
/// (`ort-run --profile=FILE`), turned into every compute op's `cost`
/// attribute in nanoseconds: the planners and the report then count time
/// where they counted FLOPs (docs/export.md#costs-measured-by-onnx-runtime).
///
/// A profile names the runtime's nodes. The export names each node after the
/// first result of the op it lowers (`<result>.<OnnxOp>[.<n>]`), and a
/// runtime that fuses or converts nodes keeps a name's start (`conv1.Conv`
/// fused with its ReLU, `maxpool_nchwc`): a node is the op whose result name
/// is its longest prefix followed by `.`, `_` or `/`.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_MEASUREDCOSTS_H
#define REMAT_IO_MEASUREDCOSTS_H

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

class Graph;

/// One node of a runtime's profile: its name and its mean seconds per step.
struct NodeSeconds {
  std::string name;
  double seconds = 0;
};

/// A runtime's profile: the file it came from, and its nodes.
struct NodeProfile {
  std::string path;
  std::vector<NodeSeconds> nodes;
};

/// Reads `{"nodes": [{"name": N, "seconds": S}, ...]}`, the profile
/// `ort-run --profile` writes (other fields are ignored). Errors name the
/// file and, for malformed JSON, the line and column.
absl::StatusOr<NodeProfile> readNodeProfile(llvm::StringRef path);

/// What `applyMeasuredCosts` attributed.
struct MeasuredCostSummary {
  /// Compute ops some node names; and those of nonzero FLOPs none does,
  /// costed at the measured ops' time per FLOP, with the first of them as
  /// `%name = kind` (a runtime may elide an op: reshape, identity).
  int64_t opsMeasured = 0;
  int64_t opsEstimated = 0;
  std::string firstEstimated;
  /// Nodes that name no op (a runtime's own layout reorders), their seconds
  /// and the first of them by name.
  int64_t nodesUnattributed = 0;
  double secondsUnattributed = 0;
  std::string firstUnattributed;
  /// Seconds of the nodes attributed to ops.
  double secondsMeasured = 0;
};

/// Sets every compute op's `cost` to its nodes' nanoseconds (at least 1),
/// or, for an op no node names, to its FLOPs times the nanoseconds per FLOP
/// of the measured ops (none when it has no FLOPs). An error naming the
/// file when no node names an op of `graph` (a profile of another graph).
absl::StatusOr<MeasuredCostSummary>
applyMeasuredCosts(Graph &graph, const NodeProfile &profile);

} // namespace remat

#endif // REMAT_IO_MEASUREDCOSTS_H

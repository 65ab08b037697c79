//===- Executor.h - The reference executor -----------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs a verified graph on the CPU in schedule order. Inputs and params come
/// from feeds or are filled deterministically from a seed; each tensor is
/// allocated when its producer runs and freed after its last reader, through a
/// tracking allocator, so the measured peak is comparable byte for byte with
/// `simulateMemory`. See docs/executor.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_EXECUTOR_H
#define REMAT_RUNTIME_EXECUTOR_H

#include "remat/Runtime/Tensor.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace remat {

class Graph;
class DeviceShare;

/// Tensors by value name, in name order.
using TensorMap = std::map<std::string, HostTensor, std::less<>>;

struct RunOptions {
  /// Seeds the data of inputs and params that `feeds` does not provide.
  uint64_t seed = 0;
  /// Values for inputs and params by name; may be null or partial.
  const TensorMap *feeds = nullptr;
  /// Runs f32 values as f64 (feeds are converted): for finite differences.
  bool widenFloats = false;
  /// Set by the distributed runtime: the run then holds, computes and frees
  /// only what `share` says this process holds, and hands cross-device ops
  /// to it (remat/Runtime/DeviceShare.h). Null runs the whole graph here.
  DeviceShare *share = nullptr;
};

struct RunResult {
  /// The tracking allocator's peak over the run, in bytes.
  int64_t peakBytes = 0;
  /// Wall time of the run, feeding included.
  double seconds = 0;
  /// Every graph output held by this process, in output order, with its
  /// value name.
  std::vector<std::pair<std::string, HostTensor>> outputs;
};

/// The data `runGraph` feeds to every input and param of `graph` for `seed`:
/// a pure function of the seed and each value's name (docs/executor.md).
/// Float values are uniform, scaled by fan-in for params; integer inputs are
/// kept in range of every op that indexes with them (class labels, embedding
/// ids, gather indices).
TensorMap makeFeeds(const Graph &graph, uint64_t seed);

/// Runs `graph`, which must be verified. Errors carry the failing op's
/// location: a missing kernel, an unsupported dtype, an index out of range.
absl::StatusOr<RunResult> runGraph(const Graph &graph,
                                   const RunOptions &options = {});

/// The largest differences between two runs' outputs that share a name.
struct OutputDiff {
  std::string name;
  double maxAbsDiff = 0;
  /// max |a - b| / max(|a|, |b|) over elements where either is nonzero.
  double maxRelDiff = 0;
  /// Set when the two outputs' types differ; the diffs are then infinite.
  bool typeMismatch = false;
};

/// Compares the outputs of `a` and `b` with the same name, in `a`'s order.
/// NaN against anything but NaN counts as an infinite difference.
std::vector<OutputDiff> compareOutputs(const RunResult &a, const RunResult &b);

} // namespace remat

#endif // REMAT_RUNTIME_EXECUTOR_H

//===- Autodiff.h - Reverse-mode gradient emission ---------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Appends to a graph's schedule the ops that compute gradients of some values
/// (the ys, by default the loss) with respect to others (the xs, by default
/// every param), as tf.gradients does on a static graph: restrict to the ops
/// between xs and ys, count uses, pop ready ops in reverse schedule order, sum
/// fan-out with add_n (early when partial gradients grow past a threshold),
/// pass zeros or nothing for results without a gradient. The gradient of x is
/// a graph output named `<x>.grad`. docs/autodiff.md has the details.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_AUTODIFF_H
#define REMAT_PASS_AUTODIFF_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

class Graph;
class Value;

/// What an x with no path to the ys gets.
enum class UnconnectedGradient {
  /// A zeros tensor of its type (shared with other zeros of that type).
  Zeros,
  /// No gradient: no output, and a null entry in `AutodiffResult`.
  None,
};

struct AutodiffOptions {
  /// Names of the values to differentiate; empty means graph output 0.
  std::vector<std::string> ys;
  /// Names of the gradients fed for each y (the same type as the y); empty
  /// means ones for every y. When given, one per y.
  std::vector<std::string> gradYs;
  /// Names of the values to differentiate with respect to; empty means every
  /// param, in declaration order.
  std::vector<std::string> xs;
  UnconnectedGradient unconnected = UnconnectedGradient::Zeros;
  /// Early aggregation: once a value has at least `aggregateCount` partial
  /// gradients whose bytes together exceed `aggregateBytes`, they are summed
  /// at once so that their storage can be freed.
  int64_t aggregateCount = 4;
  int64_t aggregateBytes = int64_t(128) << 20;
};

struct AutodiffResult {
  /// The gradient of each x, in `xs` order; null where there is none.
  std::vector<Value *> gradients;
  /// Number of ops appended.
  int64_t numOpsAdded = 0;
};

/// Emits the gradient ops into `graph`, which must be verified, and appends the
/// gradients to its outputs. Errors name the op and its location (an op without
/// a gradient rule, a non-float y, an unknown name); the graph is unchanged on
/// an error before emission starts.
absl::StatusOr<AutodiffResult> differentiate(Graph &graph,
                                             const AutodiffOptions &options = {});

} // namespace remat

#endif // REMAT_PASS_AUTODIFF_H

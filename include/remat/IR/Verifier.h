//===- Verifier.h - Structural checks on a graph -----------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The verifier checks what every pass may assume and must preserve:
///  - every op's kind is registered, its arity and attributes match the schema;
///  - every operand is a value of this graph defined earlier in the schedule,
///    and every control dependency runs earlier (the schedule is topological
///    over data and control edges);
///  - result types equal shape inference (declared for inputs and params);
///  - no size overflows int64 bytes;
///  - value names are unique, use lists are exact, and outputs and collections
///    refer to values of this graph.
/// The first failure is returned as a message naming the op, with its source
/// location when it has one: InvalidArgument, but OutOfRange for sizes past
/// int64 (a batch too large to count, which `remat fit` tells apart).
/// Linear in ops + edges.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_VERIFIER_H
#define REMAT_IR_VERIFIER_H

#include "absl/status/status.h"

namespace remat {

class Graph;

struct VerifierOptions {
  /// Re-run shape inference on every op and compare with its result types. A
  /// producer that has just inferred every type itself (the text parser) may
  /// skip this, the most expensive check.
  bool checkInferredTypes = true;
};

/// Checks `graph`; OK or the first problem found.
absl::Status verify(const Graph &graph, const VerifierOptions &options = {});

/// Only the check that the values of `graph` need at most 2^63-1 bytes
/// together, on which every byte total of the memory model relies: for a
/// transform that adds values (autodiff) to make before anything sums them.
/// Linear in values.
absl::Status verifyByteTotal(const Graph &graph);

} // namespace remat

#endif // REMAT_IR_VERIFIER_H

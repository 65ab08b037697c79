//===- Walk.h - Backward and forward walks over the graph -------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Walks from seed ops towards producers (backward) or users (forward), the
/// building blocks of recompute-segment discovery (the seed implementation's
/// `get_backward_walk_ops` / `get_forward_walk_ops`). Sets of ops and values
/// are bit vectors indexed by dense id. Every walk is iterative and costs
/// O(ops + edges) it reaches, plus O(ids / 64) for its bit vector.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_WALK_H
#define REMAT_ANALYSIS_WALK_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"

#include <vector>

namespace remat {

class Graph;
class Op;
class Value;

/// A set of ops of one graph, indexed by `Op::id()`; sized `opIdBound()`.
using OpSet = llvm::BitVector;
/// A set of values of one graph, indexed by `Value::id()`; sized
/// `valueIdBound()`.
using ValueSet = llvm::BitVector;

/// The set holding `ops`.
OpSet makeOpSet(const Graph &graph, llvm::ArrayRef<Op *> ops);
/// The set holding `values`.
ValueSet makeValueSet(const Graph &graph, llvm::ArrayRef<Value *> values);

/// The position of every op in the schedule at the time it was built, so that
/// repeated walks can return their ops in schedule order without rescanning
/// the whole schedule. Stale once the schedule changes.
class SchedulePositions {
public:
  explicit SchedulePositions(const Graph &graph);

  /// Index of `op` in the schedule.
  unsigned operator[](const Op *op) const;

private:
  std::vector<unsigned> positionById_;
};

/// The ops of `set`, in schedule order. O(ops).
std::vector<Op *> opsInScheduleOrder(const Graph &graph, const OpSet &set);

/// How a walk spreads.
struct WalkOptions {
  /// Whether the seeds are part of the result. When false a seed is left out
  /// even if another seed reaches it, as in the seed implementation.
  bool inclusive = true;
  /// When set, the walk only reaches ops in this set; seeds outside it are
  /// dropped.
  const OpSet *within = nullptr;
  /// When set, the walk never crosses an edge that carries one of these
  /// values: a backward walk does not reach a stop value's producer through
  /// it, a forward walk does not reach its users through it.
  const ValueSet *stopAt = nullptr;
  /// Whether control edges are followed as well as data edges.
  bool followControl = true;
  /// When set, used to order the result in O(k log k) for k reached ops;
  /// otherwise the schedule is scanned once, O(ops).
  const SchedulePositions *positions = nullptr;
};

/// What a walk reached.
struct WalkResult {
  /// The reached ops as a set, sized `opIdBound()`.
  OpSet set;
  /// The same ops in schedule order.
  std::vector<Op *> ops;
};

/// Ops reached from `seeds` by following operands to their producers (and
/// control dependencies).
WalkResult backwardWalk(const Graph &graph, llvm::ArrayRef<Op *> seeds,
                        const WalkOptions &options = {});

/// Ops reached from `seeds` by following results to their users (and control
/// users).
WalkResult forwardWalk(const Graph &graph, llvm::ArrayRef<Op *> seeds,
                       const WalkOptions &options = {});

} // namespace remat

#endif // REMAT_ANALYSIS_WALK_H

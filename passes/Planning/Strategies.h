//===- Strategies.h - Checkpoint strategies' shared internals ---*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What `selectCheckpoints` (Strategies.cpp) hands to the strategies
/// that live in their own files: the candidate values every strategy chooses
/// from, and one entry point per larger strategy.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_STRATEGIES_H
#define REMAT_PASSES_PLANNING_STRATEGIES_H

#include "remat/Analysis/Walk.h"
#include "remat/Pass/Checkpoints.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace remat::strategies {

/// The forward values a strategy may keep: float results of ops with operands
/// on some path from an input or param to the loss, other than the loss.
struct Candidates {
  /// In schedule order (by producer, then result index).
  std::vector<Value *> values;
  /// The same values, indexed by `Value::id()`.
  ValueSet set;
  /// Ops on some path from a leaf to the loss, the loss's producer included.
  OpSet onPathOps;
};

/// The candidates of `forward`; empty when it has no outputs. O(ops + edges).
Candidates findCandidates(const Graph &forward);

/// The values of `candidates` that are in `chosen`, in schedule order.
std::vector<Value *> keepChosen(const Candidates &candidates,
                                const ValueSet &chosen);

/// `memory`: about sqrt(N) of the bottlenecks, evenly spaced.
absl::StatusOr<CheckpointPlan> selectMemory(const Graph &forward,
                                            const Candidates &candidates);

/// `sqrtn`: memory-balanced sqrt(N) segments of the schedule.
CheckpointPlan selectSqrtN(const Candidates &candidates);

/// `regions` (every tagged region when `paths` is empty) or `regions=paths`.
absl::StatusOr<CheckpointPlan> selectRegions(const Graph &forward,
                                             const Candidates &candidates,
                                             llvm::ArrayRef<std::string> paths);

} // namespace remat::strategies

#endif // REMAT_PASSES_PLANNING_STRATEGIES_H

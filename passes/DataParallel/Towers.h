//===- Towers.h - The pieces of the data-parallel pass -----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The stages of `data-parallel`, one file each: `replicateTowers` copies the
/// graph per device on slices of the batch, `Reducer` emits one reduction
/// mode, the packer groups gradients into buckets in the order they become
/// ready, and `scheduleEarly` orders the result so that each reduction runs
/// as soon as its inputs exist. Private to passes/DataParallel.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_DATAPARALLEL_TOWERS_H
#define REMAT_PASSES_DATAPARALLEL_TOWERS_H

#include "remat/Analysis/Placement.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/DataParallel.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace remat::dp {

/// The device name of tower `k`.
std::string towerDevice(int64_t k);

/// A training graph replicated over K towers, beside its original ops.
struct Towers {
  int64_t count = 0;
  /// The batch dim shared by every input.
  int64_t batch = 0;
  /// Params that have a gradient output, in output order.
  std::vector<Value *> params;
  /// grads[i][k]: tower k's gradient of params[i], not yet reduced.
  std::vector<std::vector<Value *>> grads;
  /// The original outputs and, per output, its copy in each tower.
  std::vector<Value *> outputs;
  std::vector<std::vector<Value *>> outputCopies;
  /// The tower ops in run order: for each original op, its copy in tower
  /// 0, 1, ...; the input slices first.
  std::vector<Op *> order;
  /// Tower 0's copy of each original value, by value id.
  std::vector<Value *> firstCopy;
  /// The original non-leaf ops, in schedule order: erased at the end.
  std::vector<Op *> originals;
};

/// Copies every non-leaf op of `graph` into `count` towers on `gpu:k`, each
/// reading its slice of every input. Fails on a graph without param
/// gradients, inputs of different batch dims, a batch that `count` does not
/// divide, or an op whose copy does not type-check on the smaller batch.
absl::StatusOr<Towers> replicateTowers(Graph &graph, int64_t count);

/// Emits the reduction of one tensor held by every tower.
class Reducer {
public:
  Reducer(Graph &graph, const DataParallelOptions &options, int64_t towers)
      : graph_(graph), options_(options), towers_(towers) {}

  /// Reduces `perTower` (one value per tower, of one type): returns the
  /// (averaged) sum on each tower. `index` of `count` picks the round-robin
  /// devices; `home` is the tower `colocate` sums on. New values are named
  /// after `name`.
  absl::StatusOr<std::vector<Value *>> reduce(llvm::ArrayRef<Value *> perTower,
                                              size_t index, size_t count,
                                              int64_t home,
                                              llvm::StringRef name);

  /// The ops created so far, in creation (topological) order.
  llvm::ArrayRef<Op *> created() const { return created_; }
  /// Records an op made outside (packing) so that it is scheduled too.
  void adopt(Op *op) { created_.push_back(op); }

  /// Creates `kind` on `device` (empty: unplaced) and records it.
  absl::StatusOr<Op *> emit(llvm::StringRef kind,
                            llvm::ArrayRef<Value *> operands, AttrList attrs,
                            llvm::StringRef device,
                            llvm::ArrayRef<std::string> names);

private:
  /// Sum on tower `at` of `values`, the j-th held by tower firstTower + j.
  absl::StatusOr<Value *> sumOn(llvm::ArrayRef<Value *> values,
                                int64_t firstTower, int64_t at,
                                llvm::StringRef name);
  absl::StatusOr<Value *> moveTo(Value *value, int64_t from, int64_t to);
  absl::StatusOr<Value *> scaled(Value *sum, int64_t at, llvm::StringRef name);
  /// `total` (on tower `at`) scaled and copied to every tower.
  absl::StatusOr<std::vector<Value *>> spread(Value *total, int64_t at,
                                              llvm::StringRef name);

  Graph &graph_;
  const DataParallelOptions &options_;
  int64_t towers_;
  std::vector<Op *> created_;
};

/// The tower each param's gradient is summed on by `colocate`: params of at
/// least `smallParamElements` elements go, in order, to the parameter device
/// holding the fewest elements so far; smaller ones to `smallParamDevice`.
absl::StatusOr<std::vector<int64_t>>
placeParams(llvm::ArrayRef<int64_t> elements,
            const DataParallelOptions &options, int64_t towers);

/// Reduces `towers.grads` in buckets of near-equal size formed in the order
/// the gradients become ready; returns reduced[i][k] like an unpacked
/// reduction, or nullopt (after a note) when packing does not apply.
absl::StatusOr<std::optional<std::vector<std::vector<Value *>>>>
reducePacked(const Towers &towers, Reducer &reducer,
             const DataParallelOptions &options);

/// Sets the schedule: leaves, then the tower ops in `towers.order`, each op
/// of `late` (in topological order) moved right after its latest operand.
void scheduleEarly(Graph &graph, llvm::ArrayRef<Op *> towerOrder,
                   llvm::ArrayRef<Op *> late);

} // namespace remat::dp

#endif // REMAT_PASSES_DATAPARALLEL_TOWERS_H

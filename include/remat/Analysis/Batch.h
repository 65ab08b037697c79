//===- Batch.h - Which values carry the batch dim ---------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The batch of a graph and the values that carry it, for the transforms that
/// change it: `data-parallel` gives each tower a slice of the batch, and
/// `remat fit` builds a file's graph at other batch sizes. The heuristic is
/// documented in docs/multi-device.md ("Which dim is the batch").
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_BATCH_H
#define REMAT_ANALYSIS_BATCH_H

#include "remat/IR/Attribute.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace remat {

class Graph;
class Op;
class Value;

/// The batch of `graph`: the leading dim that every input shares. Fails,
/// naming the input and prefixed with `user` (the pass or command asking),
/// on a graph without inputs, a scalar input, or inputs whose leading dims
/// differ.
absl::StatusOr<int64_t> findBatchDim(const Graph &graph, llvm::StringRef user);

/// Follows the batch dim through a graph, op by op in schedule order. Every
/// input carries it; a result carries it when its leading dim is the batch
/// and it reads a value that carries it, or when a `shape` or `input_shape`
/// attribute leading with the batch shapes it (the broadcasts and backward
/// ops that gradients of batch reductions build from scalars) and it is not
/// a re-layout of one operand (a bias gradient [1, 64] reshaped to [64] when
/// the batch is 64 holds no batch).
class BatchTracker {
public:
  BatchTracker(const Graph &graph, int64_t batch);

  int64_t batch() const { return batch_; }

  /// Marks the results of `op` that carry the batch; call in schedule order.
  void visit(const Op &op);

  bool carriesBatch(const Value &value) const;

  /// The attributes of visited `op` for a batch of `newBatch`: when its
  /// result carries the batch, `shape`/`input_shape` lists that lead with
  /// the batch lead with `newBatch`.
  AttrList rebatchedAttrs(const Op &op, int64_t newBatch) const;

private:
  bool shapedByBatch(const Op &op) const;

  int64_t batch_;
  llvm::BitVector batched_;
};

} // namespace remat

#endif // REMAT_ANALYSIS_BATCH_H

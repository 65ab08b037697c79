//===- Feeds.h - Deterministic data for inputs and params --------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The rules behind `makeFeeds`, shared with `runGraph`, which fills leaves
/// that have no feed straight into their tracked storage. Private to
/// src/Runtime.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_RUNTIME_FEEDS_H
#define REMAT_SRC_RUNTIME_FEEDS_H

#include "remat/Runtime/Tensor.h"

#include <cstdint>
#include <vector>

namespace remat {

class Graph;
class Value;

/// The range [0, bound) an integer value must stay in for every op that
/// indexes with it, directly or through views.
inline constexpr int64_t kDefaultIndexBound = 16;

/// For every value id, the smallest bound over the ops indexing with it
/// (class labels, embedding ids, gather indices, ...); `kDefaultIndexBound`
/// where no op does. Linear in ops + edges.
std::vector<int64_t> computeIndexBounds(const Graph &graph);

/// Whether the executor can hold data of `dtype` (f16 and bf16 it cannot).
bool isRunnableDType(DType dtype);

/// Writes the seeded data of leaf `leaf` into `out`, whose shape is the
/// leaf's and whose dtype is the leaf's or, for an f32 leaf, f64. Floats are
/// rounded to the leaf's own dtype first, so a widened run sees the same
/// numbers. `indexBound` applies to integer leaves.
void fillLeaf(const Value &leaf, uint64_t seed, int64_t indexBound,
              const Tensor &out);

/// Copies `from` into `to`, converting floats between f32 and f64; the shapes
/// must match and the dtypes be equal or both float.
void copyConverting(const Tensor &from, const Tensor &to);

} // namespace remat

#endif // REMAT_SRC_RUNTIME_FEEDS_H

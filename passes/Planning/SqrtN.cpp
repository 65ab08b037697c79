//===- SqrtN.cpp - Memory-balanced sqrt(N) segments -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--strategy=sqrtn`: Chen et al. 2016 on the linearised graph. The schedule
/// is cut into about k = ceil(sqrt(N)) segments holding equal bytes of
/// candidates; the candidate that closes a segment is kept.
///
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "remat/IR/Graph.h"
#include "remat/Analysis/Memory.h"

#include <cmath>

namespace remat::strategies {

CheckpointPlan selectSqrtN(const Candidates &candidates) {
  CheckpointPlan plan;
  if (candidates.values.empty())
    return plan;
  // Sums in 128 bits: bytes * k may exceed int64 on huge graphs.
  using Wide = __int128;
  Wide total = 0;
  for (const Value *value : candidates.values)
    total += ownedBytes(*value);
  if (total == 0)
    return plan;
  Wide segments = Wide(std::ceil(std::sqrt(double(candidates.values.size()))));

  // Keep when running / total >= 1 / segments, in integers.
  Wide running = 0;
  for (Value *value : candidates.values) {
    running += ownedBytes(*value);
    if (running * segments >= total) {
      plan.kept.push_back(value);
      running = 0;
    }
  }
  return plan;
}

} // namespace remat::strategies

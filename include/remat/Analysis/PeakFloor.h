//===- PeakFloor.h - A lower bound on the peak of every plan -----*- C++
//-*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The peak floor of a plain training graph (autodiff's output, before any
/// rewrite) is a number of bytes that the simulated peak
/// (docs/memory-model.md) of every graph the recompute rewrite can make of
/// it reaches, whatever the plan and the schedule. A budget below it cannot
/// be met. The proof is in docs/memory-model.md ("The peak floor"); in
/// short, both rewrites (kept values, explicit schedules) only add copies of
/// forward ops and reroute reads of forward values to copies of the same
/// type, and gradient ops are never copied nor their reads of gradient
/// values rerouted. So params and inputs are live at every step, and:
///  1. every op of the plain graph runs once as itself, and at its step the
///     storages it reads (or their copies: distinct owners stay distinct,
///     of the same sizes) and writes are live;
///  2. at the step that produces the last output's storage, every output's
///     storage is live, with what that step's op reads and writes; a
///     gradient op on which another output's gradient producer depends is
///     not that step;
///  3. at a gradient op's step, the outputs its gradient ancestors produced
///     are live, and each other gradient value an ancestor produced is live
///     or its other readers ran before, their outputs then live.
/// The floor is the largest of bound 1 over ops, the least bound 2 over
/// the possible last producers, and bound 3 at a few gradient ops (each
/// costs a walk of the graph). Storage of operand-less ops other than
/// params and inputs (constants) is left out: a rewrite or scheduler may
/// share or duplicate such values. O(ops + edges), no recursion.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_PEAKFLOOR_H
#define REMAT_ANALYSIS_PEAKFLOOR_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>

namespace remat {

class Graph;
class Op;

/// A lower bound on the peak of every training graph made from one plain
/// training graph.
struct PeakFloor {
  /// The bound, in bytes.
  int64_t bytes = 0;
  /// Bytes of params and inputs, live at every step.
  int64_t leafBytes = 0;
  /// Bytes of the storage of the graph outputs, params and inputs aside.
  int64_t outputBytes = 0;
  /// The op at whose step every plan holds `bytes`; null when the leaves
  /// alone give the bound (or the graph is empty).
  const Op *op = nullptr;
  /// Whether the bound is that of the last output's step (3 above): `op`
  /// is then the producer of an output that gives the least such bound;
  /// the plan's last output may come later and cost more.
  bool lastOutput = false;
};

/// The peak floor of `graph`, a plain training graph whose ops with an id
/// below `forwardOpIdBound` are the forward pass. The graph must be
/// verified; a byte sum over int64 is a located error all the same.
absl::StatusOr<PeakFloor> computePeakFloor(const Graph &graph,
                                           unsigned forwardOpIdBound);

/// One line naming the op of `floor` for messages: `'%h = matmul'` (with
/// its location when known), and for the last output's bound `when every
/// output is live`.
std::string describePeakFloorOp(const PeakFloor &floor);

} // namespace remat

#endif // REMAT_ANALYSIS_PEAKFLOOR_H

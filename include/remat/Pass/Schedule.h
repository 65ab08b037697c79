//===- Schedule.h - The memory-aware schedule pass --------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reorders a verified graph's schedule (a topological order over data and
/// control edges) to lower its peak memory as `simulateMemory` counts it:
/// ops that create storage sink to just before their first reader (recomputed
/// copies, fills, forward values read only by the backward pass), last
/// readers of big operands with smaller results (reductions, gradient
/// accumulations) hoist to just after their operands' producers, and two
/// greedy list schedules compete with both: by the bytes each op frees, and
/// by the bytes the chain of ops it starts leaves and rises to. The peak never
/// rises: the input order is kept unless another is strictly better.
/// O((ops + edges) log ops), no recursion. See docs/schedule.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_SCHEDULE_H
#define REMAT_PASS_SCHEDULE_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace remat {

class Graph;
class Op;

struct ScheduleResult {
  /// Simulated peak of the input schedule.
  int64_t peakBytesBefore = 0;
  /// Simulated peak of the schedule left in the graph; never above
  /// `peakBytesBefore`, and below it exactly when the order changed.
  int64_t peakBytesAfter = 0;
  /// The fewest ops that must move to turn the input order into the new one:
  /// the op count minus the longest run of ops kept in their relative order.
  int64_t opsMoved = 0;
};

/// Reorders `graph` (verified) to lower its simulated peak; never raises it.
absl::StatusOr<ScheduleResult> scheduleForMemory(Graph &graph);

/// The order `scheduleForMemory` would leave in a graph, and its figures.
struct MemorySchedule {
  ScheduleResult result;
  /// Every op of the graph, in the new order (the input order when no other
  /// is strictly better).
  std::vector<Op *> ops;
};

/// What `scheduleForMemory(graph)` would do, leaving `graph` as it is: for a
/// caller that needs the order of a graph it will not run.
absl::StatusOr<MemorySchedule> memorySchedule(const Graph &graph);

/// The pass, `schedule`, is created by `createSchedulePass` (Passes.h).

} // namespace remat

#endif // REMAT_PASS_SCHEDULE_H

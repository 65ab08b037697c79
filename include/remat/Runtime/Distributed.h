//===- Distributed.h - Running one device per MPI rank -----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs a multi-device graph under `mpirun`: rank k runs the ops of `gpu:k`
/// with its own tracking allocator, `all_reduce` is `MPI_Allreduce` over the
/// ranks of its group and `transfer` a point-to-point message. Rank 0 then
/// gathers the outputs and every rank's figures. See docs/multi-device.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_DISTRIBUTED_H
#define REMAT_RUNTIME_DISTRIBUTED_H

#include "remat/Runtime/Executor.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <vector>

namespace remat {

class Graph;

/// The rank a launcher (`mpirun`) gave this process, read from its
/// environment without starting MPI; 0 outside a launcher. Every rank of a
/// job reads the same files and fails alike: only rank 0 reports.
int launcherRank();

/// Whether this build of remat can run graphs over MPI.
bool haveDistributedRuntime();

/// What one rank measured.
struct RankFigures {
  int64_t peakBytes = 0;
  int64_t bytesSent = 0;
  int64_t transfersSent = 0;
  int64_t collectiveCalls = 0;
  double seconds = 0;
};

struct DistributedRun {
  int rank = 0;
  int ranks = 1;
  /// On rank 0: every output of the graph, gathered from its rank; the peak
  /// and time are rank 0's. Elsewhere: this rank's own outputs.
  RunResult run;
  /// On rank 0: the figures of every rank, by rank.
  std::vector<RankFigures> figures;
};

/// Initialises MPI if needed and runs this rank's share of verified `graph`,
/// whose devices must be numbered 0..ranks-1. Errors found before anything
/// runs (placement, device count) are the same on every rank; an error
/// during the run aborts every rank (MPI_Abort) after printing it.
absl::StatusOr<DistributedRun> runDistributed(const Graph &graph,
                                              const RunOptions &options);

} // namespace remat

#endif // REMAT_RUNTIME_DISTRIBUTED_H

//===- DistributedSummary.h - What remat run --distributed reports -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Rank 0's summary of a distributed run: per device, the peak its rank's
/// tracking allocator measured beside the simulated one, the bytes it sent
/// and its collective calls; and whether every tower's copy of each reduced
/// gradient (`X.replicaK` beside `X`) came out bit for bit the same.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_DRIVER_DISTRIBUTEDSUMMARY_H
#define REMAT_SRC_DRIVER_DISTRIBUTEDSUMMARY_H

#include "remat/Analysis/Placement.h"
#include "remat/Runtime/Distributed.h"

#include "absl/status/statusor.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace remat::driver {

struct DistributedSummary {
  int ranks = 0;
  /// By rank: measured figures and the simulation of the same device.
  std::vector<RankFigures> measured;
  std::vector<DeviceProfile> simulated;
  /// Outputs `X.replicaK` compared with `X`.
  int64_t replicasCompared = 0;
  /// Those whose bytes differ from `X`'s.
  std::vector<std::string> replicasDiffering;
};

absl::StatusOr<DistributedSummary> summarizeDistributed(const Graph &graph,
                                                        const DistributedRun &run);
void printDistributedText(const DistributedSummary &summary,
                          llvm::raw_ostream &os);
void printDistributedJson(const DistributedSummary &summary,
                          llvm::json::OStream &json);

} // namespace remat::driver

#endif // REMAT_SRC_DRIVER_DISTRIBUTEDSUMMARY_H

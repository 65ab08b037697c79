//===- DataParallel.h - Replicating a training graph over devices -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The `data-parallel` pass turns a training graph (autodiff done, recompute
/// optional) into K towers, one per device `gpu:k`, each running the graph on
/// its slice of the batch, and reduces every param gradient across them. The
/// reduced gradient of tower 0 keeps the name `<param>.grad`, so the result
/// compares with the one-device graph (`remat run --compare`). See
/// docs/multi-device.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_DATAPARALLEL_H
#define REMAT_PASS_DATAPARALLEL_H

#include "remat/Pass/Pass.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat {

class PassRegistry;

/// How gradients are reduced across towers.
enum class ReduceMode {
  /// One `all_reduce` per gradient (or bucket); the sum lands on every tower.
  AllReduce,
  /// Sums inside two halves of the towers, adds the halves, sends the total
  /// back (K even).
  Hierarchical,
  /// Sums on the device of the gradient's param, then sends it to every tower.
  Colocate,
  /// Sums with `add_n` on devices taken round-robin, walking the gradients in
  /// reverse, then sends it to every tower.
  Naive,
};

/// The mode named `name` ("allreduce", ...), or nullopt.
std::optional<ReduceMode> parseReduceMode(llvm::StringRef name);
llvm::StringRef reduceModeName(ReduceMode mode);

struct DataParallelOptions {
  int64_t towers = 2;
  ReduceMode reduce = ReduceMode::AllReduce;
  /// Scales the sums by 1/towers: the mean of the towers' gradients.
  bool average = true;
  /// Packs the gradients into this many buckets before reducing; 0 or 1
  /// reduces each gradient on its own.
  int64_t pack = 0;
  /// Devices that params are spread over (least loaded first) for
  /// `colocate`, and that `naive` sums on round-robin; empty means every
  /// tower's device.
  std::vector<std::string> paramDevices;
  /// Params of fewer elements than this all go to `smallParamDevice`.
  int64_t smallParamElements = 0;
  std::string smallParamDevice = "gpu:0";
  /// Receives notes such as a packing that was skipped; null prints them to
  /// stderr as `note: ...`.
  std::function<void(const std::string &)> note;
};

/// `data-parallel`: replicates the graph over `towers` devices and reduces
/// its gradients.
std::unique_ptr<Pass> createDataParallelPass(DataParallelOptions options = {});

void registerDataParallelPass(PassRegistry &registry);

} // namespace remat

#endif // REMAT_PASS_DATAPARALLEL_H

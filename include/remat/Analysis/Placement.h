//===- Placement.h - Which device holds each value ---------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The device of every value of a multi-device graph, and the checks that
/// make a graph runnable one device per process: an op placed on a device
/// reads only values of that device or replicated ones, and values cross
/// devices only through `transfer` and `all_reduce`. Inputs and params are
/// replicated (every device holds a copy); see docs/multi-device.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_PLACEMENT_H
#define REMAT_ANALYSIS_PLACEMENT_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

class Graph;
class Op;

/// Where each value lives. Device indices count from 0 in the order of
/// `devices`; `kReplicated` marks a value every device holds.
struct Placement {
  static constexpr int kReplicated = -1;
  /// The graph's devices, sorted by their number (`gpu:0`, `gpu:1`, ...).
  std::vector<std::string> devices;
  /// The index into `devices` of each value's device, by value id.
  std::vector<int> valueDevice;
  /// For each op by id: the device that runs it, or kReplicated. Cross-device
  /// ops (`transfer`, `all_reduce`) have kReplicated here; their operands and
  /// results say which devices take part.
  std::vector<int> opDevice;

  /// Whether `op` moves values between devices.
  static bool isCrossDevice(const Op &op);
};

/// The number in a device name `<kind>:<n>` ("gpu:3" is 3), which is also the
/// rank that runs it under MPI; an error for any other spelling.
absl::StatusOr<int> deviceNumber(llvm::StringRef device);

/// Places every value of verified `graph`. Fails, naming the op, when a
/// device name is not `<kind>:<n>`, when an op reads a value of another
/// device, or when an `all_reduce` has two operands on one device.
absl::StatusOr<Placement> computePlacement(const Graph &graph);

/// Per device: the simulated peak of the values it holds and its traffic.
struct DeviceProfile {
  std::string device;
  int64_t peakBytes = 0;
  /// Bytes of the values it sends by `transfer` plus its contributions to
  /// `all_reduce`s.
  int64_t bytesSent = 0;
  int64_t transfersSent = 0;
  /// The `all_reduce`s it takes part in.
  int64_t collectiveCalls = 0;
};

/// The memory and communication of each device of `graph`'s schedule, by
/// the rules of `simulateMemory` applied to the values each device holds
/// (replicated values count on every device).
std::vector<DeviceProfile> profileDevices(const Graph &graph,
                                          const Placement &placement);

} // namespace remat

#endif // REMAT_ANALYSIS_PLACEMENT_H

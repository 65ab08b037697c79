//===- Placement.cpp - Which device holds each value -------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One walk over the schedule places each result from its op's device and its
/// operands' devices; a second turns the liveness of `computeLiveness` into
/// live bytes per device with one difference array each.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Placement.h"

#include "remat/Analysis/Memory.h"
#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <algorithm>

namespace remat {

bool Placement::isCrossDevice(const Op &op) {
  return op.kind() == "transfer" || op.kind() == "all_reduce";
}

absl::StatusOr<int> deviceNumber(llvm::StringRef device) {
  auto [kind, number] = device.rsplit(':');
  int value = -1;
  if (kind.empty() || number.empty() || number.getAsInteger(10, value) ||
      value < 0)
    return invalidArgument("device '{}' is not of the form <kind>:<number>",
                           device.str());
  return value;
}

namespace {

/// Collects, numbers and sorts the devices `graph` names.
absl::StatusOr<std::vector<std::string>> collectDevices(const Graph &graph) {
  llvm::StringMap<const Op *> seen;
  auto note = [&](const Op &op, llvm::StringRef device) -> absl::Status {
    if (device.empty() || seen.count(device))
      return absl::OkStatus();
    absl::StatusOr<int> number = deviceNumber(device);
    if (!number.ok())
      return opError(op, std::string(number.status().message()));
    seen[device] = &op;
    return absl::OkStatus();
  };
  for (const Op &op : graph.ops()) {
    REMAT_RETURN_IF_ERROR(note(op, op.device()));
    if (op.kind() == "transfer")
      REMAT_RETURN_IF_ERROR(note(op, op.findAttr("to")->asString()));
  }
  std::vector<std::pair<int, std::string>> numbered;
  for (const auto &entry : seen)
    numbered.emplace_back(*deviceNumber(entry.getKey()), entry.getKey().str());
  llvm::sort(numbered);
  std::vector<std::string> devices;
  for (size_t i = 0; i < numbered.size(); ++i) {
    if (i > 0 && numbered[i].first == numbered[i - 1].first)
      return opError(*seen[numbered[i].second],
                     fmt::format("devices '{}' and '{}' share the number {}",
                                 numbered[i - 1].second, numbered[i].second,
                                 numbered[i].first));
    devices.push_back(numbered[i].second);
  }
  return devices;
}

class Placer {
public:
  Placer(const Graph &graph, Placement &placement)
      : graph_(graph), placement_(placement) {
    for (size_t i = 0; i < placement.devices.size(); ++i)
      index_[placement.devices[i]] = int(i);
  }

  absl::Status run() {
    placement_.valueDevice.assign(graph_.valueIdBound(), Placement::kReplicated);
    placement_.opDevice.assign(graph_.opIdBound(), Placement::kReplicated);
    for (const Op &op : graph_.ops()) {
      if (op.kind() == "all_reduce")
        REMAT_RETURN_IF_ERROR(placeAllReduce(op));
      else if (op.kind() == "transfer")
        placeAll(op, index_.lookup(op.findAttr("to")->asString()));
      else
        REMAT_RETURN_IF_ERROR(placeLocal(op));
    }
    return absl::OkStatus();
  }

private:
  int deviceOf(const Value *value) const {
    return placement_.valueDevice[value->id()];
  }

  void placeAll(const Op &op, int device) {
    for (const Value *result : op.results())
      placement_.valueDevice[result->id()] = device;
  }

  /// Result i joins operand i; the operands sit on distinct devices.
  absl::Status placeAllReduce(const Op &op) {
    llvm::SmallVector<bool, 8> used(placement_.devices.size(), false);
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      int device = deviceOf(op.operand(i));
      if (device == Placement::kReplicated)
        return opError(op, fmt::format("'all_reduce' operand {} (%{}) is on "
                                       "no device",
                                       i, op.operand(i)->name().str()));
      if (used[device])
        return opError(op, fmt::format("'all_reduce' has two operands on {}",
                                       placement_.devices[device]));
      used[device] = true;
      placement_.valueDevice[op.result(i)->id()] = device;
    }
    return absl::OkStatus();
  }

  /// An ordinary op runs on its device, or else on its operands' one device,
  /// or else (reading only replicated values) everywhere.
  absl::Status placeLocal(const Op &op) {
    int device = op.device().empty() ? Placement::kReplicated
                                     : index_.lookup(op.device());
    bool placed = !op.device().empty();
    for (const Value *operand : op.operands()) {
      int from = deviceOf(operand);
      if (from == Placement::kReplicated || from == device)
        continue;
      if (!placed && device == Placement::kReplicated) {
        device = from;
        continue;
      }
      return opError(
          op, fmt::format("reads %{} of {} on {}; values cross devices only "
                          "through 'transfer' or 'all_reduce'",
                          operand->name().str(), placement_.devices[from],
                          device == Placement::kReplicated
                              ? std::string("every device")
                              : placement_.devices[device]));
    }
    placement_.opDevice[op.id()] = device;
    placeAll(op, device);
    return absl::OkStatus();
  }

  const Graph &graph_;
  Placement &placement_;
  llvm::StringMap<int> index_;
};

} // namespace

absl::StatusOr<Placement> computePlacement(const Graph &graph) {
  Placement placement;
  REMAT_ASSIGN_OR_RETURN(placement.devices, collectDevices(graph));
  REMAT_RETURN_IF_ERROR(Placer(graph, placement).run());
  return placement;
}

std::vector<DeviceProfile> profileDevices(const Graph &graph,
                                          const Placement &placement) {
  size_t numDevices = placement.devices.size();
  std::vector<DeviceProfile> profiles(numDevices);
  for (size_t d = 0; d < numDevices; ++d)
    profiles[d].device = placement.devices[d];
  Liveness liveness = computeLiveness(graph);
  int64_t steps = liveness.numSteps;
  // Row numDevices holds the replicated values, counted on every device.
  std::vector<std::vector<int64_t>> delta(
      numDevices + 1, std::vector<int64_t>(steps + 1, 0));
  for (const Op &op : graph.ops())
    for (const Value *value : op.results()) {
      int64_t first = liveness.firstStep[value->id()];
      if (first < 0 || liveness.owner[value->id()] != value)
        continue;
      int device = placement.valueDevice[value->id()];
      auto &row = delta[device == Placement::kReplicated ? numDevices : device];
      row[first] += value->type().byteSize();
      row[liveness.lastStep[value->id()] + 1] -= value->type().byteSize();
    }
  for (size_t d = 0; d < numDevices; ++d) {
    int64_t live = 0, replicated = 0;
    for (int64_t s = 0; s < steps; ++s) {
      live += delta[d][s];
      replicated += delta[numDevices][s];
      profiles[d].peakBytes = std::max(profiles[d].peakBytes, live + replicated);
    }
  }
  for (const Op &op : graph.ops()) {
    if (!Placement::isCrossDevice(op))
      continue;
    bool collective = op.kind() == "all_reduce";
    for (const Value *operand : op.operands()) {
      int device = placement.valueDevice[operand->id()];
      if (device == Placement::kReplicated)
        continue;
      profiles[device].bytesSent += operand->type().byteSize();
      if (collective)
        ++profiles[device].collectiveCalls;
      else
        ++profiles[device].transfersSent;
    }
  }
  return profiles;
}

} // namespace remat

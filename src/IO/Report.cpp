//===- Report.cpp - The JSON report of remat opt
//----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IO/Report.h"

#include "remat/Support/Units.h"

#include "llvm/Support/JSON.h"

#include <algorithm>

namespace remat {

void writeBreakdownJson(llvm::json::OStream &json, llvm::StringRef key,
                        const MemoryBreakdown &breakdown) {
  json.attributeObject(key, [&] {
    json.attribute("params", breakdown.params);
    json.attribute("param_grads", breakdown.paramGrads);
    json.attribute("inputs", breakdown.inputs);
    json.attribute("activations", breakdown.activations);
  });
}

void writeDevicesJson(llvm::json::OStream &json,
                      llvm::ArrayRef<DeviceProfile> devices,
                      bool withTransfers) {
  json.attributeArray("devices", [&] {
    for (const DeviceProfile &device : devices)
      json.object([&] {
        json.attribute("device", device.device);
        json.attribute("peak_bytes", device.peakBytes);
        json.attribute("bytes_sent", device.bytesSent);
        if (withTransfers)
          json.attribute("transfers_sent", device.transfersSent);
        json.attribute("collective_calls", device.collectiveCalls);
      });
  });
}

void writeCheckpointsJson(llvm::json::OStream &json,
                          llvm::ArrayRef<ReportTensor> checkpoints) {
  json.attributeArray("checkpoints", [&] {
    for (const ReportTensor &tensor : checkpoints)
      json.value(tensor.name);
  });
}

int64_t TrainingReport::planPeakBytes() const {
  int64_t peak = devices.empty() ? peakBytesAfter : 0;
  for (const DeviceProfile &device : devices)
    peak = std::max(peak, device.peakBytes);
  return peak;
}

std::string TrainingReport::formatCost(int64_t cost) const {
  return countsNanoseconds() ? formatNanoseconds(cost) : formatFlops(cost);
}

void printReportJson(const TrainingReport &report, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("graph", report.graph);
    json.attribute("strategy", report.planner);
    json.attributeObject("aggregation", [&] {
      json.attribute("count", report.aggregateCount);
      json.attribute("bytes", report.aggregateBytes);
    });
    writeOptionalJson(json, "budget_bytes", report.budgetBytes);
    writeOptionalJson(json, "budget_met", report.budgetMet);
    writeOptionalJson(json, "peak_floor_bytes", report.peakFloorBytes);
    writeOptionalJson(json, "peak_floor_op", report.peakFloorOp);
    writeOptionalJson(json, "peak_over_floor", report.peakOverFloor);
    json.attribute("plans_tried", report.plansTried);
    writeOptionalJson(json, "optimality_gap", report.optimalityGap);
    writeOptionalJson(json, "recompute_lower_bound",
                      report.recomputeLowerBound);
    writeOptionalJson(json, "gap_to_bound", report.gapToBound);
    json.attribute("max_recomputations", report.maxRecomputations);
    json.attribute("ops_before", report.opsBefore);
    json.attribute("ops_after", report.opsAfter);
    json.attribute("peak_bytes_before", report.peakBytesBefore);
    json.attribute("peak_bytes_after", report.peakBytesAfter);
    json.attribute("peak_bytes_unscheduled", report.peakBytesUnscheduled);
    writeBreakdownJson(json, "peak_breakdown_after", report.peakBreakdownAfter);
    json.attribute("cost_unit", report.countsNanoseconds() ? "ns" : "flops");
    if (const std::optional<MeasuredCostSummary> &costs = report.measuredCosts)
      json.attributeObject("measured_costs", [&] {
        json.attribute("ops_measured", costs->opsMeasured);
        json.attribute("ops_estimated", costs->opsEstimated);
        json.attribute("seconds_measured", costs->secondsMeasured);
        json.attribute("nodes_unattributed", costs->nodesUnattributed);
        json.attribute("seconds_unattributed", costs->secondsUnattributed);
      });
    else
      json.attribute("measured_costs", nullptr);
    json.attribute("flops_forward", report.flopsForward);
    json.attribute("flops_backward", report.flopsBackward);
    json.attribute("flops_recompute", report.flopsRecompute);
    json.attribute("overhead", report.overhead);
    if (!report.devices.empty())
      writeDevicesJson(json, report.devices, /*withTransfers=*/false);
    writeCheckpointsJson(json, report.checkpoints);
    json.attribute("pass_seconds", report.passSeconds);
    json.attributeArray("passes", [&] {
      for (const ReportPassTime &timing : report.timings)
        json.object([&] {
          json.attribute("pass", timing.pass);
          json.attribute("seconds", timing.seconds);
        });
    });
  });
  os << "\n";
}

void printSweepJson(const SweepReport &sweep, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("graph", sweep.graph);
    json.attribute("peak_bytes_plain", sweep.peakBytesPlain);
    writeOptionalJson(json, "peak_floor_bytes", sweep.peakFloorBytes);
    json.attribute("plans_tried", sweep.plansTried);
    json.attribute("cost_unit", sweep.measuredCosts ? "ns" : "flops");
    json.attributeArray("points", [&] {
      for (const SweepPoint &point : sweep.points)
        json.object([&] {
          json.attribute("strategy", point.planner);
          json.attribute("peak_bytes", point.peakBytes);
          json.attribute("flops_recompute", point.flopsRecompute);
          json.attribute("overhead", point.overhead);
        });
    });
  });
  os << "\n";
}

} // namespace remat

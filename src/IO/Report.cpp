//===- Report.cpp - The JSON report of remat opt
//----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IO/Report.h"

#include "llvm/Support/JSON.h"

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

void printReportJson(const TrainingReport &report, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("graph", report.graph);
    json.attribute("strategy", report.strategy);
    if (report.budgetBytes)
      json.attribute("budget_bytes", *report.budgetBytes);
    else
      json.attribute("budget_bytes", nullptr);
    if (report.budgetMet)
      json.attribute("budget_met", *report.budgetMet);
    else
      json.attribute("budget_met", nullptr);
    json.attribute("plans_tried", report.plansTried);
    if (report.optimalityGap)
      json.attribute("optimality_gap", *report.optimalityGap);
    else
      json.attribute("optimality_gap", nullptr);
    json.attribute("max_recomputations", report.maxRecomputations);
    json.attribute("ops_before", report.opsBefore);
    json.attribute("ops_after", report.opsAfter);
    json.attribute("peak_bytes_before", report.peakBytesBefore);
    json.attribute("peak_bytes_after", report.peakBytesAfter);
    json.attribute("peak_bytes_unscheduled", report.peakBytesUnscheduled);
    writeBreakdownJson(json, "peak_breakdown_after", report.peakBreakdownAfter);
    json.attribute("flops_forward", report.flopsForward);
    json.attribute("flops_backward", report.flopsBackward);
    json.attribute("flops_recompute", report.flopsRecompute);
    json.attribute("overhead", report.overhead);
    json.attributeArray("checkpoints", [&] {
      for (const ReportTensor &tensor : report.checkpoints)
        json.value(tensor.name);
    });
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
    json.attribute("plans_tried", sweep.plansTried);
    json.attributeArray("points", [&] {
      for (const SweepPoint &point : sweep.points)
        json.object([&] {
          json.attribute("strategy", point.strategy);
          json.attribute("peak_bytes", point.peakBytes);
          json.attribute("flops_recompute", point.flopsRecompute);
          json.attribute("overhead", point.overhead);
        });
    });
  });
  os << "\n";
}

} // namespace remat

//===- Explain.cpp - The plan of remat opt, for a person --------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IO/Report.h"

#include "remat/Support/Units.h"

#include <fmt/format.h>

#include <iterator>

namespace remat {

/// "1 tensor", "2 tensors".
static std::string count(size_t n, llvm::StringRef noun) {
  return fmt::format("{} {}{}", n, noun.str(), n == 1 ? "" : "s");
}

/// `after` as a share of `before`, or "-" when there is no baseline.
static std::string share(int64_t after, int64_t before) {
  return before > 0 ? fmt::format("{:.1f}%", 100.0 * double(after) / before)
                    : std::string("-");
}

void printExplanation(const TrainingReport &report, llvm::raw_ostream &os) {
  int64_t keptBytes = 0;
  for (const ReportTensor &tensor : report.checkpoints)
    keptBytes += tensor.bytes;
  os << fmt::format("graph @{}, planner {}\n", report.graph, report.planner);
  if (report.budgetBytes)
    os << fmt::format("budget {} ({}), {} plan(s) tried\n",
                      formatBytes(*report.budgetBytes),
                      *report.budgetMet ? "met" : "not met", report.plansTried);
  if (report.optimalityGap)
    os << fmt::format("recompute cost within {:.2f}% of the optimum (proven)\n",
                      100 * *report.optimalityGap);
  if (report.recomputeLowerBound)
    os << fmt::format("no plan in plain autodiff's order recomputes less than "
                      "{}{}\n",
                      report.formatCost(int64_t(*report.recomputeLowerBound)),
                      report.gapToBound
                          ? fmt::format(" (this plan: {:+.1f}%)",
                                        100 * *report.gapToBound)
                          : std::string());
  if (report.maxRecomputations > 1)
    os << fmt::format("some ops recomputed {} times\n",
                      report.maxRecomputations);
  os << fmt::format("peak {} -> {} ({} of plain autodiff; {} before the "
                    "schedule pass)\n",
                    formatBytes(report.peakBytesBefore),
                    formatBytes(report.peakBytesAfter),
                    share(report.peakBytesAfter, report.peakBytesBefore),
                    formatBytes(report.peakBytesUnscheduled));
  os << fmt::format("{} forward {}, backward {}, recomputed {} "
                    "(overhead {:.3f})\n",
                    report.countsNanoseconds() ? "measured time" : "flops",
                    report.formatCost(report.flopsForward),
                    report.formatCost(report.flopsBackward),
                    report.formatCost(report.flopsRecompute), report.overhead);
  if (const std::optional<MeasuredCostSummary> &costs = report.measuredCosts) {
    double profiled = costs->secondsMeasured + costs->secondsUnattributed;
    os << fmt::format("costs measured: {} timed, {} costed by FLOPs; {} of "
                      "the profile's nodes ({:.1f}% of its time) name no op\n",
                      count(size_t(costs->opsMeasured), "op"),
                      count(size_t(costs->opsEstimated), "op"),
                      costs->nodesUnattributed,
                      profiled > 0 ? 100 * costs->secondsUnattributed / profiled
                                   : 0.0);
  }

  os << fmt::format("\nkept: {}, {}\n", count(report.checkpoints.size(), "tensor"),
                    formatBytes(keptBytes));
  for (const ReportTensor &tensor : report.checkpoints)
    os << fmt::format("  %{}  {}  {}\n", tensor.name, tensor.type,
                      formatBytes(tensor.bytes));

  int64_t copies = 0;
  for (const ReportSegment &segment : report.segments)
    copies += segment.numCopies;
  os << fmt::format("\nrecomputed: {}, {}, in the order they run\n",
                    count(report.segments.size(), "segment"),
                    count(size_t(copies), "op"));
  for (size_t i = 0; i < report.segments.size(); ++i) {
    const ReportSegment &segment = report.segments[i];
    os << fmt::format("  {:>4}. {}: {}, {}, {}", i + 1, segment.label,
                      count(size_t(segment.numCopies), "op"),
                      report.formatCost(segment.flops), formatBytes(segment.bytes));
    if (!segment.trigger.empty())
      os << fmt::format(", after %{}", segment.trigger);
    os << "\n";
  }
}

} // namespace remat

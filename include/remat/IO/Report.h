//===- Report.h - The JSON report of remat opt --------------------*- C++
//-*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes a `TrainingReport` as the JSON object that docs/report.md specifies.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_REPORT_H
#define REMAT_IO_REPORT_H

#include "remat/Analysis/Memory.h"
#include "remat/Analysis/Placement.h"
#include "remat/IO/MeasuredCosts.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat {

/// One pass's share of `TrainingReport::passSeconds`.
struct ReportPassTime {
  std::string pass;
  double seconds = 0;
  bool changed = false;
};

/// One candidate of a budget search, for `--timing`: the plan, how many
/// graphs were built for it (a modelled planner calibrates its budget over
/// several; 0 for the search's one autodiff) and their wall time.
struct ReportSearchTime {
  std::string planner;
  int builds = 0;
  double seconds = 0;
  /// Plans made but not built: they could not beat the best plan, or
  /// repeated one already built.
  int unbuilt = 0;
};

/// A kept tensor, for `--explain`.
struct ReportTensor {
  std::string name;
  std::string type;
  int64_t bytes = 0;
};

/// One segment of recomputation (remat/Pass/Recompute.h), for `--explain`.
struct ReportSegment {
  std::string label;
  unsigned level = 1;
  /// The gradient op it waits for, as `%name`; empty when none.
  std::string trigger;
  int64_t numCopies = 0;
  int64_t flops = 0;
  int64_t bytes = 0;
};

/// What `buildTrainingGraph` (remat/Training/Training.h) did: the fields of the
/// JSON report.
struct TrainingReport {
  std::string graph;
  std::string planner;
  /// Autodiff's early aggregation of partial gradients (`AutodiffOptions`)
  /// in the graph written: the options' own, or with a budget the search's
  /// choice.
  int64_t aggregateCount = 0;
  int64_t aggregateBytes = 0;
  std::optional<int64_t> budgetBytes;
  /// Whether `peakBytesAfter` is at most the budget; null without one.
  std::optional<bool> budgetMet;
  /// How many plans a budget search built and simulated (0 without one).
  int64_t plansTried = 0;
  /// With a budget, the peak no plan can go below
  /// (remat/Analysis/PeakFloor.h), and the op whose step forces it (`%h =
  /// matmul`, empty when params and inputs alone do); null without a budget
  /// and for a graph on devices.
  std::optional<int64_t> peakFloorBytes;
  std::optional<std::string> peakFloorOp;
  /// planPeakBytes() / peakFloorBytes - 1: how far the plan's peak may be
  /// from the least any plan reaches (0: it is that least); null when
  /// `peakFloorBytes` is.
  std::optional<double> peakOverFloor;
  /// The planner's proven relative gap to the least recompute cost (0:
  /// optimal); null when it proves nothing.
  std::optional<double> optimalityGap;
  /// With `TrainingOptions::boundSeconds`: a proven lower bound on the
  /// recompute cost (`flopsRecompute`'s unit) of every plan within the
  /// budget that runs the ops in plain autodiff's scheduled order
  /// (remat/Pass/RecomputeBound.h); null where none was found.
  std::optional<double> recomputeLowerBound;
  /// flopsRecompute / recomputeLowerBound - 1 (0 when both are 0): how far
  /// the plan may be from the least recompute. Negative where the plan's
  /// own schedule beats the order the bound covers. Null without a bound,
  /// when it is 0 and the plan recomputes, and when the plan misses the
  /// budget.
  std::optional<double> gapToBound;
  /// The most copies made of any one forward op: 1 for kept-value plans,
  /// more where a schedule recomputes a value several times; 0 without
  /// recomputation.
  int64_t maxRecomputations = 0;
  /// One line each, for stderr: e.g. a budget no plan reaches.
  std::vector<std::string> warnings;
  /// The plan's notes that it misses the budget by its planner's model
  /// (RematPlan::budgetNotes): folded into the warning when the built graph
  /// misses the budget too, else dropped. Not printed on their own.
  std::vector<std::string> budgetNotes;
  int64_t opsBefore = 0;
  int64_t opsAfter = 0;
  /// Peak of plain autodiff's training graph under the same schedule policy.
  int64_t peakBytesBefore = 0;
  int64_t peakBytesAfter = 0;
  MemoryBreakdown peakBreakdownAfter;
  /// What `TrainingOptions::measuredCosts` attributed; null when costs are
  /// FLOPs. Every `flops` field, segments' too, then holds nanoseconds.
  std::optional<MeasuredCostSummary> measuredCosts;
  /// Set from `TrainingOptions::costAttributesAreNanoseconds`.
  bool costAttributesAreNanoseconds = false;
  /// FLOPs of the forward ops, of the gradient ops, and of recomputed copies.
  int64_t flopsForward = 0;
  int64_t flopsBackward = 0;
  int64_t flopsRecompute = 0;
  /// flopsRecompute / (flopsForward + flopsBackward).
  double overhead = 0;
  /// The kept tensors, in schedule order (empty for `none`); the JSON lists
  /// their names.
  std::vector<ReportTensor> checkpoints;
  /// Segments in the order the backward pass recomputes them.
  std::vector<ReportSegment> segments;
  /// The final graph's peak before its `schedule` pass: the pass's effect.
  int64_t peakBytesUnscheduled = 0;
  /// Wall time of the passes, and each pass's share.
  double passSeconds = 0;
  std::vector<ReportPassTime> timings;
  /// The budget search: differentiating the forward graph once (`autodiff`,
  /// with plain autodiff's schedule), then every candidate in the order
  /// tried. Empty without a budget; not in the JSON.
  std::vector<ReportSearchTime> searchTimings;
  /// Per device of a graph placed on devices (`data-parallel`), by device
  /// number; empty for a one-device graph.
  std::vector<DeviceProfile> devices;

  /// The peak a budget bounds: the largest device's for a graph on devices,
  /// else `peakBytesAfter` (which then counts every device's values).
  int64_t planPeakBytes() const;
  /// Whether every `flops` field and the overhead count nanoseconds (measured
  /// costs, or cost attributes that are), not FLOPs.
  bool countsNanoseconds() const {
    return measuredCosts.has_value() || costAttributesAreNanoseconds;
  }
  /// `cost` (one of the `flops` fields) as text in the report's unit.
  std::string formatCost(int64_t cost) const;
};

/// Writes `breakdown` as the object attribute `key` of the object `json` is
/// in: `params`, `param_grads`, `inputs`, `activations` (bytes).
void writeBreakdownJson(llvm::json::OStream &json, llvm::StringRef key,
                        const MemoryBreakdown &breakdown);

/// Writes `devices` as the array attribute `devices` of the object `json` is
/// in: each device's name, peak bytes, bytes sent, and, with
/// `withTransfers` (`remat stats`), its transfers sent, then its collective
/// calls.
void writeDevicesJson(llvm::json::OStream &json,
                      llvm::ArrayRef<DeviceProfile> devices,
                      bool withTransfers);

/// Writes the kept tensors' names as the array attribute `checkpoints`.
void writeCheckpointsJson(llvm::json::OStream &json,
                          llvm::ArrayRef<ReportTensor> checkpoints);

/// Writes `key: value` into the object `json` is in, or `key: null` when
/// `value` is empty.
template <typename T>
void writeOptionalJson(llvm::json::OStream &json, llvm::StringRef key,
                       const std::optional<T> &value) {
  if (value)
    json.attribute(key, *value);
  else
    json.attribute(key, nullptr);
}

/// One JSON object, two-space indented, keys in a fixed order, then a newline.
void printReportJson(const TrainingReport &report, llvm::raw_ostream &os);

/// One plan on the memory/overhead Pareto curve of `remat opt --sweep`.
struct SweepPoint {
  std::string planner;
  int64_t peakBytes = 0;
  int64_t flopsRecompute = 0;
  double overhead = 0;
};

/// What `sweepTrainingPlans` (remat/Training/Training.h) found: the plans no
/// other plan beats on both peak and recompute, by rising peak and falling
/// overhead.
struct SweepReport {
  std::string graph;
  /// Plain autodiff's peak, the 100% of a share budget.
  int64_t peakBytesPlain = 0;
  /// The peak no plan goes below (remat/Analysis/PeakFloor.h): where the
  /// curve could end at best; null for a graph on devices.
  std::optional<int64_t> peakFloorBytes;
  int64_t plansTried = 0;
  /// Whether the points' costs are nanoseconds (`TrainingOptions::
  /// measuredCosts` or `costAttributesAreNanoseconds`), not FLOPs.
  bool measuredCosts = false;
  std::vector<SweepPoint> points;
};

/// The sweep as JSON (docs/report.md).
void printSweepJson(const SweepReport &sweep, llvm::raw_ostream &os);

/// The plan for a person (`remat opt --explain`): the kept tensors, each
/// segment with its cost, and the peaks.
void printExplanation(const TrainingReport &report, llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_IO_REPORT_H

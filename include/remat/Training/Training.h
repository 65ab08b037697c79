//===- Training.h - Forward graph to training graph ---------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pipeline behind `remat opt --planner=P`: autodiff, the planner's
/// rematerialization, scheduling and verification of a forward graph, and the
/// report of what that cost and saved (docs/report.md).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRAINING_TRAINING_H
#define REMAT_TRAINING_TRAINING_H

#include "remat/IO/MeasuredCosts.h"
#include "remat/IO/Report.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Pass/PassManager.h"
#include "remat/Pass/Planner.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat {

class Graph;

/// The planner that searches plans within a budget.
inline constexpr llvm::StringLiteral kAutoPlanner = "auto";

struct TrainingOptions {
  /// The planner that chooses which values to keep, as
  /// `PlannerRegistry::create` reads it; `none` is plain autodiff
  /// (docs/planners.md).
  std::string planner = "none";
  /// Orders recomputation with data rather than control dependencies.
  bool forceDataDependency = false;
  /// A memory budget as `parseByteSize` reads it (`16GiB`, or `40%` of plain
  /// autodiff's peak); none by default. With a budget and the planner
  /// `auto`, the plan is searched (see `buildTrainingGraph`).
  std::optional<std::string> budget;
  /// With a budget: also bounds the recompute cost of every plan within it
  /// (remat/Pass/RecomputeBound.h), solving for at most this many seconds;
  /// the report's `recomputeLowerBound` and `gapToBound`. Not for a sweep
  /// or a graph on devices.
  std::optional<double> boundSeconds;
  AutodiffOptions autodiff;
  /// With a budget and the planner `auto`, also searches the plans of the
  /// graph differentiated with every partial gradient summed at once
  /// (`aggregateCount` 2, `aggregateBytes` 0) where that lowers plain
  /// autodiff's peak: no FLOPs more, a few more ops. Off when the caller
  /// chose the aggregation (`--aggregate-count`, `--aggregate-bytes`).
  bool searchAggregation = true;
  /// With a budget and `auto`: where no plan reaches the budget, build the
  /// plan of lowest peak, then least recompute at that peak, which a search
  /// told the proven peak floor finds: the same plan whatever the budget out
  /// of reach (docs/strategies.md#budgets). Off where only whether a plan
  /// fits matters (`remat fit`'s batches).
  bool searchAtLowestPeak = true;
  /// A pass pipeline run on the scheduled training graph, as
  /// `parsePassPipeline` reads it (`data-parallel{towers=2}`); empty: none.
  /// The report then lists each device's peak, and a budget bounds the
  /// largest of them (`TrainingReport::planPeakBytes`).
  std::string finalPipeline;
  /// Seconds per node of a runtime's profile of this graph's export
  /// (remat/IO/MeasuredCosts.h), applied as every op's cost right after
  /// autodiff: the planners and the report then count nanoseconds; none
  /// (FLOPs) by default.
  std::shared_ptr<const NodeProfile> measuredCosts;
  /// Whether the ops' own `cost` attributes are nanoseconds (a caller that
  /// timed them, as the PyTorch bridge's `costs="measured"`), not FLOPs:
  /// the report then counts time (`TrainingReport::countsNanoseconds`).
  bool costAttributesAreNanoseconds = false;
  /// Where `planner` and `auto`'s candidates are looked up
  /// (`plannerRegistry()`); null: `PlannerRegistry::global()`.
  const PlannerRegistry *registry = nullptr;
  /// Verifies after every pass, not only at the end.
  bool verifyEach = false;
  /// Frees the graphs a build made and no longer needs (the budget search's
  /// differentiated graph and copies) before it returns. A process that
  /// exits right after leaves them to the operating system, as clang's
  /// `-disable-free` does: freeing a 2.65M-op graph op by op takes half a
  /// second.
  bool freeScratchGraphs = true;
  /// Receives the planners' progress lines (the ILP's incumbent, bound and
  /// gap); none by default.
  std::function<void(llvm::StringRef)> onProgress;

  const PlannerRegistry &plannerRegistry() const {
    return registry ? *registry : PlannerRegistry::global();
  }
};

/// The timings of a pipeline run, as reports list them.
std::vector<ReportPassTime> reportPassTimes(const PipelineResult &result);

/// Turns the forward graph `graph` (verified; loss = output 0) into its
/// training graph in place and reports the cost: checkpoint selection,
/// autodiff, the memory-aware schedule (whose peak is `peakBytesBefore`), the
/// recompute rewrite, the schedule again, the verifier and `finalPipeline`
/// (whose graph the peaks, ops and devices then describe; the FLOPs are of
/// the training graph before it). Errors: an unknown
/// planner or bad planner arguments, autodiff errors, verifier failures.
///
/// With a budget, every candidate plan is built on a copy of the graph and
/// judged by the simulated peak of its final, scheduled training graph (after
/// `finalPipeline`: the peak of its largest device), so the
/// plan returned is never over the budget when one reaches it. The planner
/// `auto` tries every planner of docs/strategies.md#budgets (on small graphs
/// `ilp` too), where it lowers the peak also on the graph with partial
/// gradients summed at once (`searchAggregation`), and keeps the least
/// recompute FLOPs within the budget; another planner is built as given. When nothing reaches the budget the lowest peak
/// found is built, `budgetMet` is false and a warning says so, with the peak
/// floor that no plan goes below (remat/Analysis/PeakFloor.h; also
/// `peakFloorBytes`, except after `finalPipeline`).
absl::StatusOr<TrainingReport> buildTrainingGraph(Graph &graph,
                                                  const TrainingOptions &options);

/// `buildTrainingGraph` for a graph that arrives differentiated by another
/// autodiff (the joint graph of PyTorch's AOT Autograd): `joint` is its
/// training graph, whose ops with an id below `forwardOps` are the forward
/// pass, numbered in schedule order before every gradient op. Autodiff and
/// the search of aggregations are skipped (`options.autodiff` is unused).
/// Errors also when the first `forwardOps` ops are not so numbered.
absl::StatusOr<TrainingReport>
buildJointTrainingGraph(Graph &joint, unsigned forwardOps,
                        const TrainingOptions &options);

/// Builds every plan the `auto` planner tries on copies of `graph` (which
/// is left as it is) and returns the Pareto curve of their final simulated
/// peaks and recompute: a larger budget never picks a higher-cost point.
absl::StatusOr<SweepReport> sweepTrainingPlans(const Graph &graph,
                                               const TrainingOptions &options);

} // namespace remat

#endif // REMAT_TRAINING_TRAINING_H

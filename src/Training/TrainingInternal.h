//===- TrainingInternal.h - The training pipeline's two halves --*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `buildTrainingGraph` (remat/Training/Training.h) either builds one planner's
/// training graph or searches the plans within a budget; the search builds
/// each candidate with the first.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_TRAINING_TRAININGINTERNAL_H
#define REMAT_SRC_TRAINING_TRAININGINTERNAL_H

#include "remat/Pass/Planner.h"
#include "remat/Pass/Schedule.h"
#include "remat/Training/Training.h"

#include <memory>

namespace remat {

/// A forward graph differentiated once, for a search that builds many plans
/// of it: each build starts from an exact copy (`Graph::CloneIds::Keep`), so
/// it is the graph a build from the forward graph would have differentiated.
struct DifferentiatedGraph {
  /// The training graph as autodiff left it (not scheduled).
  const Graph *graph = nullptr;
  unsigned forwardOpIdBound = 0;
  /// The forward graph's compute ops (`TrainingReport::opsBefore`).
  int64_t opsBefore = 0;
  ReportPassTime autodiffTime;
  /// What the options' measured costs attributed (null: FLOPs).
  std::optional<MeasuredCostSummary> measuredCosts;
  /// Plain autodiff's memory-aware schedule of `graph`, as op ids: what
  /// `scheduleForMemory` makes of it before any rewrite.
  std::vector<unsigned> plainOrder;
  ScheduleResult plainSchedule;
  /// Plain autodiff's schedule of a renumbered copy (`Graph::clone()`), the
  /// baseline of plans with an explicit schedule: set by the first such build
  /// and reused by the others.
  mutable std::optional<ScheduleResult> renumberedSchedule;
};

/// Whether `graph` is already what `graph.clone()` makes of it (ids, use
/// lists and control users in schedule order), so a renumbering copy would
/// change nothing.
bool isInCloneOrder(const Graph &graph);

/// Differentiates `graph` in place and finds the order `scheduleForMemory`
/// would give it, leaving its own: `differentiateUnscheduled`, then
/// `findPlainSchedule`.
absl::StatusOr<DifferentiatedGraph>
differentiateOnce(Graph &graph, const TrainingOptions &options);

/// Differentiates `graph` in place; the plain schedule is left to
/// `findPlainSchedule`.
absl::StatusOr<DifferentiatedGraph>
differentiateUnscheduled(Graph &graph, const TrainingOptions &options);

/// Finds plain autodiff's memory-aware schedule of `base.graph`, which it
/// only reads (`DifferentiatedGraph::plainOrder`, `plainSchedule`).
absl::Status findPlainSchedule(DifferentiatedGraph &base);

/// One plan's training graph and its report.
struct TrainingBuild {
  std::unique_ptr<Graph> graph;
  TrainingReport report;
  /// Whether the final verifier ran (see `verifyBuild`).
  bool verified = false;
};

/// A plan made on `DifferentiatedGraph::graph` itself, before any copy: its
/// ops and values are that graph's.
struct BasePlan {
  RematPlan plan;
  /// The report's `plan` step.
  ReportPassTime time;
};

/// Runs `options.planner`'s planner on `base.graph`, as a build would on
/// its copy, told `budgetBytes`.
absl::StatusOr<BasePlan>
planDifferentiated(const DifferentiatedGraph &base,
                   const TrainingOptions &options,
                   std::optional<int64_t> budgetBytes = std::nullopt);
/// The same with `planner`, made for `options.planner` and kept by the
/// caller across plans of `base`.
absl::StatusOr<BasePlan> planDifferentiated(const DifferentiatedGraph &base,
                                            const TrainingOptions &options,
                                            std::optional<int64_t> budgetBytes,
                                            Planner &planner);

/// How one plan of a differentiated graph is built.
struct BuildRequest {
  /// Told to the planner: the budget resolved to bytes.
  std::optional<int64_t> budgetBytes;
  /// Runs the final verifier; else `verifyBuild` does, later (a search
  /// verifies only the build it returns), and its step stays in the
  /// report's timings.
  bool verify = true;
  /// A plan made by `planDifferentiated` with the same options and budget,
  /// built instead of planning again.
  const BasePlan *plan = nullptr;
  /// The copy of the differentiated graph to build on
  /// (`Graph::CloneIds::Keep`), made beforehand.
  std::unique_ptr<Graph> copy;
};

/// Builds `options.planner`'s training graph on a copy of `base.graph`,
/// as `buildTrainingGraphAsGiven` would from the forward graph.
absl::StatusOr<TrainingBuild>
buildFromDifferentiated(const DifferentiatedGraph &base,
                        const TrainingOptions &options,
                        BuildRequest request = {});

/// Runs the verifier a build left out, timed as its report's `verify` step.
absl::Status verifyBuild(TrainingBuild &build);

/// Builds `options.planner`'s training graph, ignoring `options.budget`;
/// the planner is told `budgetBytes`, the budget resolved to bytes.
absl::StatusOr<TrainingReport>
buildTrainingGraphAsGiven(Graph &graph, const TrainingOptions &options,
                          std::optional<int64_t> budgetBytes = std::nullopt);

/// Builds the training graph of the plan chosen for `*options.budget`.
absl::StatusOr<TrainingReport>
buildTrainingGraphInBudget(Graph &graph, const TrainingOptions &options);

} // namespace remat

#endif // REMAT_SRC_TRAINING_TRAININGINTERNAL_H

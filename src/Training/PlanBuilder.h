//===- PlanBuilder.h - Plans of one differentiated graph, built -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The training build behind `remat opt --planner=P`, and the `PlanBuilder`
/// that a search makes once per differentiated graph: it plans on that graph
/// and builds each plan on an exact copy (`Graph::CloneIds::Keep`), so every
/// build is the one a build from the forward graph would have made.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_TRAINING_PLANBUILDER_H
#define REMAT_SRC_TRAINING_PLANBUILDER_H

#include "remat/Analysis/PeakFloor.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Planner.h"
#include "remat/Pass/RecomputeBound.h"
#include "remat/Pass/Schedule.h"
#include "remat/Training/Training.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat {

/// Builds `options.planner`'s training graph from the forward graph `graph`
/// in place, ignoring `options.budget`. With `jointForwardOps`, `graph` is
/// already a training graph whose first `jointForwardOps` ops (in schedule
/// order, numbered so) are its forward pass: autodiff is skipped.
absl::StatusOr<TrainingReport>
buildTrainingGraphAsGiven(Graph &graph, const TrainingOptions &options,
                          std::optional<unsigned> jointForwardOps);

/// A plan made on the builder's differentiated graph itself, before any
/// copy: its ops and values are that graph's.
struct BasePlan {
  RematPlan plan;
  /// The report's `plan` step.
  ReportPassTime time;
};

/// One plan's training graph and its report.
struct TrainingBuild {
  std::unique_ptr<Graph> graph;
  TrainingReport report;
  /// Whether the final verifier ran: a search runs it on the trial it
  /// keeps.
  bool verified = false;
};

/// What one candidate plan costs once built.
struct Trial {
  std::string planner;
  /// The final graph's simulated peak (`TrainingReport::planPeakBytes`),
  /// its recompute and overhead, as its report has them.
  int64_t peakBytes = 0, flopsRecompute = 0;
  double overhead = 0;
  /// The budget the planner was told, when not the search's own.
  std::optional<int64_t> plannerBudget;
  /// How many graphs were built to get here, and how many plans were made
  /// but not built: they could not beat the best plan, or repeated one.
  int builds = 1, unbuilt = 0;
  /// Not built because it could not beat the best plan: no figures.
  bool dropped = false;
  /// The index of the search's base it plans.
  int base = 0;
  /// The training graph built (not yet verified) and its report, kept
  /// while the trial may be the one returned.
  TrainingBuild build;
};

/// A differentiated graph, and its plans built on copies of it. The graph
/// is only read, but by `buildPlainInPlace`, its last build.
class PlanBuilder {
public:
  /// How `differentiate` takes the graph.
  struct Setup {
    /// The graph is a joint graph whose first `jointForwardOps` ops are its
    /// forward pass (`buildJointTrainingGraph`): autodiff is skipped.
    std::optional<unsigned> jointForwardOps;
    /// Finds the proven peak floor (remat/Analysis/PeakFloor.h) on a second
    /// thread while plain autodiff's schedule is found.
    bool findFloor = false;
    /// Keeps a copy of the forward graph, as numbered for the builds
    /// (`takeForwardCopy`).
    bool copyForward = false;
  };

  /// Differentiates the forward graph `graph` in place, its ids renumbered
  /// in schedule order first as every copy of it has them (the planners
  /// number ops by id), and finds plain autodiff's memory-aware schedule.
  /// The builder keeps `options` and refers to `graph`.
  static absl::StatusOr<std::unique_ptr<PlanBuilder>>
  differentiate(Graph &graph, const TrainingOptions &options,
                const Setup &setup);

  /// `planner.repeats` of the differentiated graph.
  absl::StatusOr<std::optional<std::string>> repeats(Planner &planner) const;

  /// Plans with `planner` (one of `options().plannerRegistry()`'s) on the
  /// differentiated graph, told `budgetBytes`; timed as the `plan` step.
  absl::StatusOr<BasePlan> plan(Planner &planner,
                                std::optional<int64_t> budgetBytes) const;

  /// How one plan is built.
  struct BuildRequest {
    /// The budget the planner was told, for the rewrite's steps.
    std::optional<int64_t> budgetBytes;
    /// Whether the trial keeps its graph, to be returned.
    bool keepGraph = true;
    /// The copy of the differentiated graph to build on
    /// (`Graph::CloneIds::Keep`), when made beforehand.
    std::unique_ptr<Graph> copy;
  };

  /// Builds `plan`, made by `plan()` and named `planner`, on a copy: the
  /// recompute rewrite, the schedule and the rest of a training build but
  /// the final verifier, whose step the report lists unrun: a search
  /// verifies only the trial it keeps. Non-const: the first plan with
  /// an explicit schedule finds plain autodiff's schedule of a renumbered
  /// copy, which the others reuse.
  absl::StatusOr<Trial> build(llvm::StringRef planner, const BasePlan &plan,
                              BuildRequest request);

  /// Plans plain autodiff and builds it on the differentiated graph itself,
  /// which is left empty: no copy, for the last build of a search.
  absl::StatusOr<Trial> buildPlainInPlace();

  /// Plain autodiff's trial from the schedule found for it, unbuilt; none
  /// for a graph on devices, which is judged by its largest device, which
  /// only a build knows.
  std::optional<Trial> unbuiltPlainTrial() const {
    if (!options_.finalPipeline.empty())
      return std::nullopt;
    Trial plain{"none", base_.plainSchedule.peakBytesAfter, 0, 0.0};
    plain.builds = 0;
    return plain;
  }

  /// The least FLOPs `plan` recomputes, counted without building
  /// (`recomputeFlopsLowerBound`).
  int64_t recomputeLowerBound(const RematPlan &plan) const;

  /// The proven peak floor of the differentiated graph's plans.
  absl::StatusOr<PeakFloor> findFloor() const;

  /// A bound on the recompute cost of the differentiated graph's plans
  /// within `budgetBytes`, solved for at most `seconds`.
  absl::StatusOr<RecomputeCostBound> boundRecompute(int64_t budgetBytes,
                                                    double seconds) const;

  const TrainingOptions &options() const { return options_; }
  const Graph &graph() const { return *graph_; }
  /// Plain autodiff's memory-aware schedule of the graph.
  const ScheduleResult &plainSchedule() const { return base_.plainSchedule; }
  /// The floor `differentiate` found (with `Setup::findFloor`).
  const std::optional<PeakFloor> &floor() const { return floor_; }
  /// The forward graph's copy (with `Setup::copyForward`), moved out.
  std::unique_ptr<Graph> takeForwardCopy() { return std::move(forwardCopy_); }

  /// What a build of a copy reads of the differentiated graph.
  struct Differentiated {
    unsigned forwardOpIdBound = 0;
    /// The forward graph's compute ops (`TrainingReport::opsBefore`).
    int64_t opsBefore = 0;
    ReportPassTime autodiffTime;
    /// What the options' measured costs attributed (none: FLOPs).
    std::optional<MeasuredCostSummary> measuredCosts;
    /// Plain autodiff's memory-aware schedule, as op ids, and its figures.
    std::vector<unsigned> plainOrder;
    ScheduleResult plainSchedule;
  };

private:
  PlanBuilder(Graph &graph, const TrainingOptions &options)
      : graph_(&graph), options_(options) {}

  Graph *graph_;
  TrainingOptions options_;
  Differentiated base_;
  /// Plain autodiff's schedule of a renumbered copy (`Graph::clone()`), the
  /// baseline of plans with an explicit schedule: found by the first such
  /// build, or by `differentiate` where the graph is numbered so already.
  std::optional<ScheduleResult> renumberedSchedule_;
  std::optional<PeakFloor> floor_;
  std::unique_ptr<Graph> forwardCopy_;
};

} // namespace remat

#endif // REMAT_SRC_TRAINING_PLANBUILDER_H

//===- RecomputeSteps.h - Forward graph to planned training graph -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The steps that turn a forward graph into its training graph with a plan,
/// written once for the `recompute` pass and for `remat opt`'s pipeline
/// (remat/Training/Training.h): `autodiff` and `plan`, then the steps that
/// realise the plan, `schedule` (plain autodiff's memory-aware order, which a
/// kept-value plan is rewritten in), `recompute` and `schedule` again. Each
/// step is a pass, so a PassManager times it and, verifying each pass, names
/// the step a broken graph came from. The plan is known only once planned:
/// the caller runs the first two steps, then the steps `addRewriteSteps`
/// chooses for that plan.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_RECOMPUTESTEPS_H
#define REMAT_PASS_RECOMPUTESTEPS_H

#include "remat/Pass/Pass.h"
#include "remat/Pass/Planner.h"
#include "remat/Pass/Recompute.h"
#include "remat/Pass/Schedule.h"

#include "absl/status/status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace remat {

class Graph;
class PassManager;

/// What the steps of one build learn, for the steps after them and for the
/// caller.
struct RecomputeState {
  /// Ops with a smaller id are the forward pass: set by `autodiff`, or by
  /// the caller of a graph differentiated beforehand.
  unsigned forwardOpIdBound = 0;
  AutodiffResult autodiff;
  /// Set by `plan`, or by the caller of a plan made beforehand.
  RematPlan plan;
  /// The first `schedule` step's result (plain autodiff's), and the second's
  /// (the rewritten graph's), where they ran.
  std::optional<ScheduleResult> plainSchedule, rewrittenSchedule;
  RecomputeResult rewrite;
};

struct RecomputeStepOptions {
  /// Autodiff's options and the rewrite's.
  RecomputeOptions recompute;
  /// Runs on the differentiated graph inside the `autodiff` step (e.g. to
  /// attach measured costs); none by default.
  std::function<absl::Status(Graph &)> afterAutodiff;
  /// What `plan` tells the planner.
  std::optional<int64_t> budgetBytes;
  std::function<void(llvm::StringRef)> onProgress;
  const PlannerRegistry *registry = nullptr;
  /// Plain autodiff's memory-aware order of the graph, by op id, and its
  /// figures, computed beforehand: the first `schedule` step applies it
  /// instead of scheduling again. Null: it schedules.
  const std::vector<unsigned> *plainOrder = nullptr;
  const ScheduleResult *plainOrderResult = nullptr;
  /// Whether the rewritten graph, and the graph of a plain plan, are
  /// scheduled; the `recompute` pass leaves that to a `schedule` pass.
  bool scheduleResult = true;
};

/// `autodiff`: differentiates the forward graph (verified; loss = output 0),
/// checks that its bytes still sum within int64 (planners sum them before
/// the graph is verified), then runs `options.afterAutodiff`. Changed when
/// it added ops.
std::unique_ptr<Pass> createAutodiffStep(RecomputeState &state,
                                         const RecomputeStepOptions &options);

/// What the `plan` step tells a planner of `graph`, differentiated, whose
/// forward ops have ids below `forwardOpIdBound`.
PlanningProblem planningProblem(const Graph &graph, unsigned forwardOpIdBound,
                                const RecomputeStepOptions &options);

/// `planner`'s plan of `graph`, differentiated, whose forward ops have ids
/// below `forwardOpIdBound`, told what `options` say: the `plan` step's work,
/// for a caller that plans a graph it will not change.
absl::StatusOr<RematPlan> planGraph(Planner &planner, const Graph &graph,
                                    unsigned forwardOpIdBound,
                                    const RecomputeStepOptions &options);

/// `plan`: `planner`'s plan of the differentiated graph. Never changes it.
std::unique_ptr<Pass> createPlanStep(RecomputeState &state, Planner &planner,
                                     const RecomputeStepOptions &options);

/// Adds to `pm` the steps that realise `state.plan`: for kept values
/// `schedule` (the rewrite reads the graph in plain autodiff's memory-aware
/// order), `recompute` and, with `scheduleResult`, `schedule`; for a
/// schedule of recompute steps (made in the order the planner saw)
/// `recompute`, then `schedule` likewise; for plain autodiff `schedule`
/// with `scheduleResult`, else nothing.
void addRewriteSteps(PassManager &pm, RecomputeState &state,
                     const RecomputeStepOptions &options);

} // namespace remat

#endif // REMAT_PASS_RECOMPUTESTEPS_H

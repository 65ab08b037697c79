//===- RecomputeSteps.cpp - Forward graph to planned training graph -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Pass/RecomputeSteps.h"

#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/PassManager.h"
#include "remat/Support/Status.h"

#include <string>
#include <utility>

namespace remat {
namespace {

/// One step: `run` says whether it changed the graph.
class Step : public Pass {
public:
  using RunFn = std::function<absl::StatusOr<bool>(Graph &)>;

  Step(llvm::StringRef argument, RunFn run)
      : argument_(argument.str()), run_(std::move(run)) {}

  llvm::StringRef argument() const override { return argument_; }
  llvm::StringRef summary() const override {
    return "A step of the training build";
  }
  absl::StatusOr<bool> run(Graph &graph) override { return run_(graph); }

private:
  std::string argument_;
  RunFn run_;
};

/// `schedule`: the memory-aware order, or the one `options` computed before.
std::unique_ptr<Pass> createScheduleStep(std::optional<ScheduleResult> &result,
                                         const RecomputeStepOptions &options,
                                         bool plain) {
  return std::make_unique<Step>(
      "schedule", [&result, &options, plain](Graph &graph)
                      -> absl::StatusOr<bool> {
        if (plain && options.plainOrder) {
          std::vector<Op *> byId(graph.opIdBound(), nullptr);
          for (Op &op : graph.ops())
            byId[op.id()] = &op;
          std::vector<Op *> order;
          order.reserve(options.plainOrder->size());
          for (unsigned id : *options.plainOrder)
            order.push_back(byId[id]);
          graph.setSchedule(order);
          result = *options.plainOrderResult;
        } else {
          REMAT_ASSIGN_OR_RETURN(result, scheduleForMemory(graph));
        }
        return result->opsMoved > 0;
      });
}

} // namespace

std::unique_ptr<Pass> createAutodiffStep(RecomputeState &state,
                                         const RecomputeStepOptions &options) {
  return std::make_unique<Step>(
      "autodiff", [&state, &options](Graph &graph) -> absl::StatusOr<bool> {
        state.forwardOpIdBound = graph.opIdBound();
        REMAT_ASSIGN_OR_RETURN(state.autodiff,
                               differentiate(graph, options.recompute.autodiff));
        REMAT_RETURN_IF_ERROR(verifyByteTotal(graph));
        if (options.afterAutodiff)
          REMAT_RETURN_IF_ERROR(options.afterAutodiff(graph));
        return state.autodiff.numOpsAdded > 0;
      });
}

PlanningProblem planningProblem(const Graph &graph, unsigned forwardOpIdBound,
                                const RecomputeStepOptions &options) {
  PlanningProblem problem;
  problem.graph = &graph;
  problem.forwardOpIdBound = forwardOpIdBound;
  problem.budgetBytes = options.budgetBytes;
  problem.onProgress = options.onProgress;
  problem.registry = options.registry;
  return problem;
}

absl::StatusOr<RematPlan> planGraph(Planner &planner, const Graph &graph,
                                    unsigned forwardOpIdBound,
                                    const RecomputeStepOptions &options) {
  return planner.plan(planningProblem(graph, forwardOpIdBound, options));
}

std::unique_ptr<Pass> createPlanStep(RecomputeState &state, Planner &planner,
                                     const RecomputeStepOptions &options) {
  return std::make_unique<Step>(
      "plan", [&state, &planner, &options](Graph &graph)
                  -> absl::StatusOr<bool> {
        REMAT_ASSIGN_OR_RETURN(state.plan,
                               planGraph(planner, graph,
                                         state.forwardOpIdBound, options));
        return false;
      });
}

void addRewriteSteps(PassManager &pm, RecomputeState &state,
                     const RecomputeStepOptions &options) {
  const RematPlan &plan = state.plan;
  if (plan.plain) {
    if (options.scheduleResult)
      pm.addPass(createScheduleStep(state.plainSchedule, options,
                                    /*plain=*/true));
    return;
  }
  if (!plan.schedule)
    pm.addPass(
        createScheduleStep(state.plainSchedule, options, /*plain=*/true));
  pm.addPass(std::make_unique<Step>(
      "recompute", [&state, &options](Graph &graph) -> absl::StatusOr<bool> {
        REMAT_ASSIGN_OR_RETURN(state.rewrite,
                               rematerialize(graph, state.forwardOpIdBound,
                                             state.plan, options.recompute));
        return state.rewrite.numCopies > 0;
      }));
  if (options.scheduleResult)
    pm.addPass(createScheduleStep(state.rewrittenSchedule, options,
                                  /*plain=*/false));
}

} // namespace remat

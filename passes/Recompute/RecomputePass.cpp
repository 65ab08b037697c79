//===- RecomputePass.cpp - The `recompute` pass and its entry points ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The rewrite walks the gradient ops in schedule order. Each operand that is
/// a forward value the plan does not keep is replaced by a copy from the
/// operand's segment; a copy's own operands are kept values (read through one
/// shared stop_gradient each) or earlier copies of the same segment, built on
/// demand with an explicit stack. A segment's copies are created right before
/// its first reader, and its root copies (those reading only kept values) wait
/// for the gradient op that feeds that reader. Nested regions repeat the
/// rewrite one level down, on the copies of the enclosing level. Every step is
/// linear in the ops and edges it touches (docs/recompute.md).
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/Recompute.h"

#include "Recompute/Rematerializer.h"

#include "remat/IR/Graph.h"
#include "remat/Pass/Pass.h"
#include "remat/Pass/PassManager.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"
#include "remat/Pass/RecomputeSteps.h"
#include "remat/Support/Status.h"

#include <utility>

namespace remat {
namespace {

/// An error unless every kept value is a forward value of `graph`.
absl::Status checkPlan(const Graph &graph, unsigned forwardOpIdBound,
                       const RematPlan &plan) {
  for (const Value *kept : plan.kept)
    if (kept->producer()->graph() != &graph ||
        kept->producer()->id() >= forwardOpIdBound)
      return invalidArgument("checkpoint %{} is not a forward value of "
                             "graph @{}",
                             kept->name().str(), graph.name().str());
  return absl::OkStatus();
}

/// `recompute{strategy=S}`: a forward graph becomes its training graph with
/// the strategy's values kept and the rest recomputed.
class RecomputePass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "recompute";
  static constexpr llvm::StringLiteral kSummary =
      "Differentiates the loss and recomputes the forward values a planner "
      "does not keep";

  RecomputePass(std::string planner, RecomputeOptions options)
      : planner_(std::move(planner)), options_(std::move(options)) {}

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  /// The steps of `remat opt --planner` (remat/Pass/RecomputeSteps.h) but
  /// the last schedule, which a pipeline asks for with `schedule`.
  absl::StatusOr<bool> run(Graph &graph) override {
    REMAT_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner,
                           PlannerRegistry::global().create(planner_));
    RecomputeState state;
    RecomputeStepOptions steps;
    steps.recompute = options_;
    steps.scheduleResult = false;
    PassManager planning;
    planning.addPass(createAutodiffStep(state, steps));
    planning.addPass(createPlanStep(state, *planner, steps));
    REMAT_ASSIGN_OR_RETURN(PipelineResult planned, planning.run(graph));
    PassManager rewriting;
    addRewriteSteps(rewriting, state, steps);
    REMAT_ASSIGN_OR_RETURN(PipelineResult rewritten, rewriting.run(graph));
    return planned.changed || rewritten.changed;
  }

private:
  std::string planner_;
  RecomputeOptions options_;
};

} // namespace

std::unique_ptr<Pass> createRecomputePass(std::string planner,
                                          RecomputeOptions options) {
  return std::make_unique<RecomputePass>(std::move(planner),
                                         std::move(options));
}

void registerRecomputePass(PassRegistry &registry) {
  registry.add(
      {.argument = RecomputePass::kArgument.str(),
       .summary = RecomputePass::kSummary.str(),
       .options = {{.name = "planner",
                    .help = "The planner that chooses what to recompute, "
                            "one that needs no budget (listed by `remat opt "
                            "--help`; quoted with = or a comma: "
                            "\"sqrtn=4\")",
                    .kind = PassOptionKind::String,
                    .defaultValue = "sqrtn"},
                   {.name = "strategy",
                    .help = "The same as planner",
                    .kind = PassOptionKind::String,
                    .defaultValue = "sqrtn"},
                   {.name = "force-data-dependency",
                    .help = "Orders recomputation with a data dependency "
                            "instead of control dependencies",
                    .kind = PassOptionKind::Bool,
                    .defaultValue = "false"}},
       .factory = [](const PassOptions &text)
           -> absl::StatusOr<std::unique_ptr<Pass>> {
         if (text.lookup("planner") && text.lookup("strategy"))
           return invalidArgument("recompute: planner= and strategy= name "
                                  "the same thing; give one");
         std::string planner = text.getString(
             "planner", text.getString("strategy", "sqrtn"));
         REMAT_RETURN_IF_ERROR(
             PlannerRegistry::global().create(planner).status());
         RecomputeOptions options;
         REMAT_ASSIGN_OR_RETURN(options.forceDataDependency,
                                text.getBool("force-data-dependency", false));
         return createRecomputePass(std::move(planner), std::move(options));
       }});
}

bool mayRecompute(const Op &op) {
  const Attribute *recompute = op.findAttr(kRecomputeAttr);
  return !recompute || recompute->asBool();
}

absl::StatusOr<RecomputeResult> rematerialize(Graph &training,
                                              unsigned forwardOpIdBound,
                                              const RematPlan &plan,
                                              const RecomputeOptions &options) {
  if (plan.schedule)
    return recompute::realiseSchedule(training, forwardOpIdBound,
                                      *plan.schedule, options);
  REMAT_RETURN_IF_ERROR(checkPlan(training, forwardOpIdBound, plan));
  return recompute::Rematerializer(training, forwardOpIdBound, plan, options)
      .run();
}

absl::StatusOr<RecomputeResult>
recomputeGradients(Graph &graph, const RematPlan &plan,
                   const RecomputeOptions &options) {
  unsigned forwardOpIdBound = graph.opIdBound();
  REMAT_RETURN_IF_ERROR(checkPlan(graph, forwardOpIdBound, plan));
  REMAT_ASSIGN_OR_RETURN(AutodiffResult gradients,
                         differentiate(graph, options.autodiff));
  REMAT_ASSIGN_OR_RETURN(RecomputeResult result,
                         rematerialize(graph, forwardOpIdBound, plan, options));
  result.autodiff = std::move(gradients);
  return result;
}

} // namespace remat

//===- PlanBuilder.cpp - Plans of one differentiated graph, built ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One training build is the recompute steps (remat/Pass/RecomputeSteps.h)
/// run by pass managers, then the verifier, `finalPipeline` and the report.
/// A build as given runs them all on the forward graph; a `PlanBuilder`
/// runs autodiff once and the rest on each copy.
///
//===----------------------------------------------------------------------===//

#include "Training/PlanBuilder.h"

#include "remat/Analysis/Cost.h"
#include "remat/Analysis/Placement.h"
#include "remat/IO/MeasuredCosts.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Planner.h"
#include "remat/Pass/Recompute.h"
#include "remat/Pass/RecomputeSteps.h"
#include "remat/Pass/Schedule.h"
#include "remat/Support/Status.h"
#include "remat/Support/Stopwatch.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <future>
#include <utility>

namespace remat {

std::vector<ReportPassTime> reportPassTimes(const PipelineResult &result) {
  std::vector<ReportPassTime> times;
  for (const PassTiming &timing : result.timings)
    times.push_back({timing.argument, timing.seconds, timing.changed});
  return times;
}

namespace {

/// Ops other than input and param declarations, as `remat stats` counts them.
int64_t countComputeOps(const Graph &graph) {
  return int64_t(graph.numOps()) - graph.inputs().size() -
         graph.params().size();
}

/// Whether `graph`'s op and value ids count up from 0 in schedule order, as
/// `Graph::clone()` numbers a copy: a renumbered copy is then an exact one.
bool numberedInScheduleOrder(const Graph &graph) {
  unsigned ops = 0, values = 0;
  for (const Op &op : graph.ops()) {
    if (op.id() != ops++)
      return false;
    for (const Value *result : op.results())
      if (result->id() != values++)
        return false;
  }
  return ops == graph.opIdBound() && values == graph.valueIdBound();
}

/// Whether `graph` is already what `graph.clone()` makes of it (ids, use
/// lists and control users in schedule order), so a renumbering copy would
/// change nothing.
bool isInCloneOrder(const Graph &graph) {
  if (!numberedInScheduleOrder(graph))
    return false;
  auto byReader = [](const Use &a, const Use &b) {
    return std::make_pair(a.user->id(), a.operandIndex) <
           std::make_pair(b.user->id(), b.operandIndex);
  };
  auto byId = [](const Op *a, const Op *b) { return a->id() < b->id(); };
  for (const Op &op : graph.ops()) {
    if (!llvm::is_sorted(op.controlUsers(), byId))
      return false;
    for (const Value *result : op.results())
      if (!llvm::is_sorted(result->uses(), byReader))
        return false;
  }
  return true;
}

/// The steps' options for a build with `options`, told `budgetBytes`.
RecomputeStepOptions stepOptions(const TrainingOptions &options,
                                 std::optional<int64_t> budgetBytes) {
  RecomputeStepOptions steps;
  steps.recompute.forceDataDependency = options.forceDataDependency;
  steps.recompute.autodiff = options.autodiff;
  steps.budgetBytes = budgetBytes;
  steps.onProgress = options.onProgress;
  steps.registry = options.registry;
  return steps;
}

/// What one `TrainingRun` builds.
struct RunRequest {
  /// The planner, as `PlannerRegistry::create` reads it, or the name of
  /// `plan`'s.
  llvm::StringRef planner;
  /// Told to the planner: the budget resolved to bytes.
  std::optional<int64_t> budgetBytes;
  /// Runs the final verifier; else `PlanBuilder::verify` does, later (a
  /// search verifies only the build it returns), and its step stays in the
  /// report's timings.
  bool verify = true;
  /// A plan of the differentiated graph, built instead of planning.
  const BasePlan *plan = nullptr;
  /// The graph is a training graph whose first ops are the forward pass
  /// (`buildJointTrainingGraph`).
  std::optional<unsigned> jointForwardOps;
};

/// One training build: the steps of remat/Pass/RecomputeSteps.h, timed as
/// report passes, then the verifier, `finalPipeline` and the report.
class TrainingRun {
public:
  /// Differentiates and plans `graph` itself, unless it is a copy of a
  /// differentiated graph (`base`, whose renumbered plain schedule
  /// `renumbered` caches) and `request` gives a plan of it.
  TrainingRun(Graph &graph, const TrainingOptions &options,
              const RunRequest &request, TrainingReport &report,
              const PlanBuilder::Differentiated *base = nullptr,
              std::optional<ScheduleResult> *renumbered = nullptr)
      : graph_(graph), options_(options), request_(request), report_(report),
        base_(base), renumbered_(renumbered),
        steps_(stepOptions(options, request.budgetBytes)) {
    if (options.measuredCosts)
      steps_.afterAutodiff = [this](Graph &graph) -> absl::Status {
        REMAT_ASSIGN_OR_RETURN(
            report_.measuredCosts,
            applyMeasuredCosts(graph, *options_.measuredCosts));
        return absl::OkStatus();
      };
    if (base) {
      steps_.plainOrder = &base->plainOrder;
      steps_.plainOrderResult = &base->plainSchedule;
    }
  }

  /// Whether `run` ran the final verifier.
  bool verified() const { return verified_; }

  absl::Status run() {
    if (request_.planner == kAutoPlanner)
      return invalidArgument("planner 'auto' needs a budget (--budget=SIZE)");
    // An unknown planner fails before the graph changes.
    std::unique_ptr<Planner> planner;
    if (!request_.plan) {
      REMAT_ASSIGN_OR_RETURN(
          planner, options_.plannerRegistry().create(request_.planner));
    }
    report_.planner = request_.planner.str();
    report_.costAttributesAreNanoseconds =
        options_.costAttributesAreNanoseconds;
    report_.aggregateCount = options_.autodiff.aggregateCount;
    report_.aggregateBytes = options_.autodiff.aggregateBytes;

    PassManager planning = passManager();
    if (base_) {
      state_.forwardOpIdBound = base_->forwardOpIdBound;
      report_.measuredCosts = base_->measuredCosts;
      addTiming(base_->autodiffTime);
    } else if (request_.jointForwardOps) {
      REMAT_RETURN_IF_ERROR(adoptDifferentiated());
    } else {
      planning.addPass(createAutodiffStep(state_, steps_));
    }
    if (request_.plan) {
      state_.plan = carryPlan(request_.plan->plan);
      addTiming(request_.plan->time);
    } else {
      planning.addPass(createPlanStep(state_, *planner, steps_));
    }
    REMAT_RETURN_IF_ERROR(runSteps(planning));
    const RematPlan &plan = state_.plan;

    // A schedule names the ops it recomputes before in the order the plan
    // saw them: plain autodiff's peak is then taken on a copy.
    std::optional<ScheduleResult> renumbered;
    if (plan.schedule && renumbered_ && *renumbered_) {
      renumbered = **renumbered_;
    } else if (plan.schedule) {
      std::unique_ptr<Graph> plain = graph_.clone();
      REMAT_ASSIGN_OR_RETURN(renumbered, scheduleForMemory(*plain));
      if (renumbered_)
        *renumbered_ = renumbered;
    }

    PassManager rewriting = passManager();
    addRewriteSteps(rewriting, state_, steps_);
    // A build whose result is verified later still lists the step: a
    // final pipeline needs a verified graph.
    bool verifyNow = request_.verify || !options_.finalPipeline.empty();
    rewriting.addPass(createVerifyStep(verifyNow));
    REMAT_RETURN_IF_ERROR(runSteps(rewriting));
    verified_ = verifyNow;

    const ScheduleResult &baseline =
        plan.schedule ? *renumbered : *state_.plainSchedule;
    report_.peakBytesBefore = baseline.peakBytesAfter;
    report_.peakBytesUnscheduled =
        plan.plain ? baseline.peakBytesBefore
                   : state_.rewrittenSchedule->peakBytesBefore;
    const RecomputeResult &result = state_.rewrite;
    report_.optimalityGap = plan.optimalityGap;
    report_.maxRecomputations = result.maxRecomputations;
    for (const std::string &warning : plan.warnings)
      report_.warnings.push_back(warning);
    report_.budgetNotes = plan.budgetNotes;
    describePlan(result);
    countFlops(state_.forwardOpIdBound, result);
    if (!options_.finalPipeline.empty())
      REMAT_RETURN_IF_ERROR(runFinalPipeline());
    MemoryProfile memory = simulateMemory(graph_);
    report_.peakBytesAfter = memory.peakBytes;
    report_.peakBreakdownAfter = memory.peakBreakdown;
    report_.opsAfter = countComputeOps(graph_);
    if (report_.flopsRecompute > 0 &&
        report_.peakBytesAfter >= report_.peakBytesBefore)
      report_.warnings.push_back(fmt::format(
          "planner {} recomputes {} but saves no memory: the peak is {} "
          "(plain autodiff: {})",
          report_.planner, report_.formatCost(report_.flopsRecompute),
          formatBytes(report_.peakBytesAfter),
          formatBytes(report_.peakBytesBefore)));
    return absl::OkStatus();
  }

  /// Differentiates the graph in place (the `autodiff` step alone).
  absl::Status differentiateGraph() {
    if (request_.jointForwardOps)
      return adoptDifferentiated();
    PassManager pm = passManager();
    pm.addPass(createAutodiffStep(state_, steps_));
    return runSteps(pm);
  }

  unsigned forwardOpIdBound() const { return state_.forwardOpIdBound; }

private:
  /// Takes the graph as the training graph `jointForwardOps` says it is,
  /// once checked: its forward ops come first in the schedule, numbered in
  /// order (a renumbering copy then keeps the bound).
  absl::Status adoptDifferentiated() {
    unsigned bound = *request_.jointForwardOps;
    if (!numberedInScheduleOrder(graph_) || bound > graph_.numOps())
      return invalidArgument(
          "graph @{} is not a training graph whose first {} ops are its "
          "forward pass, numbered in schedule order",
          graph_.name().str(), bound);
    state_.forwardOpIdBound = bound;
    addTiming({"autodiff", 0, false});
    if (steps_.afterAutodiff)
      REMAT_RETURN_IF_ERROR(steps_.afterAutodiff(graph_));
    return absl::OkStatus();
  }

  /// A pass manager for steps, verifying after each with `verifyEach`.
  PassManager passManager() const {
    PassManager pm;
    pm.enableVerifier(options_.verifyEach);
    return pm;
  }

  /// Runs `pm`'s steps on the graph and adds their timings to the report.
  absl::Status runSteps(PassManager &pm) {
    REMAT_ASSIGN_OR_RETURN(PipelineResult result, pm.run(graph_));
    for (const ReportPassTime &timing : reportPassTimes(result))
      addTiming(timing);
    return absl::OkStatus();
  }

  void addTiming(const ReportPassTime &timing) {
    report_.timings.push_back(timing);
    report_.passSeconds += timing.seconds;
  }

  /// `verify`: the verifier, or only its place in the timings when the
  /// build is verified later (`PlanBuilder::verify`).
  static std::unique_ptr<Pass> createVerifyStep(bool verifyNow) {
    class VerifyStep : public Pass {
    public:
      explicit VerifyStep(bool now) : now_(now) {}
      llvm::StringRef argument() const override { return "verify"; }
      llvm::StringRef summary() const override {
        return "Verifies the training graph";
      }
      absl::StatusOr<bool> run(Graph &graph) override {
        if (now_)
          REMAT_RETURN_IF_ERROR(verify(graph));
        return false;
      }

    private:
      bool now_;
    };
    return std::make_unique<VerifyStep>(verifyNow);
  }

  /// `plan`, made on the base graph, with its ops and values those of the
  /// copy, which has the same ids (`Graph::CloneIds::Keep`).
  RematPlan carryPlan(const RematPlan &plan) const {
    std::vector<Op *> opById(graph_.opIdBound(), nullptr);
    std::vector<Value *> valueById(graph_.valueIdBound(), nullptr);
    for (Op &op : graph_.ops()) {
      opById[op.id()] = &op;
      for (Value *result : op.results())
        valueById[result->id()] = result;
    }
    RematPlan carried = plan;
    for (Value *&kept : carried.kept)
      kept = valueById[kept->id()];
    if (carried.schedule)
      for (RecomputeStep &step : *carried.schedule) {
        step.before = opById[step.before->id()];
        for (Op *&op : step.ops)
          op = opById[op->id()];
      }
    return carried;
  }

  /// Runs `finalPipeline` and profiles the devices of its result.
  absl::Status runFinalPipeline() {
    PassManager pm = passManager();
    REMAT_RETURN_IF_ERROR(parsePassPipeline(options_.finalPipeline, pm));
    REMAT_RETURN_IF_ERROR(runSteps(pm));
    REMAT_RETURN_IF_ERROR(verify(graph_));
    REMAT_ASSIGN_OR_RETURN(Placement placement, computePlacement(graph_));
    report_.devices = profileDevices(graph_, placement);
    return absl::OkStatus();
  }

  void describePlan(const RecomputeResult &result) {
    for (const Value *kept : result.kept)
      report_.checkpoints.push_back(
          {kept->name().str(), kept->type().str(), kept->type().byteSize()});
    for (const RecomputeSegment &segment : result.segments)
      report_.segments.push_back(
          {segment.label, segment.level,
           segment.trigger ? segment.trigger->result(0)->name().str() : "",
           segment.numCopies, segment.flops, segment.bytes});
  }

  /// Forward ops are those that existed before autodiff; copies are counted
  /// by the rewrite; the rest is the backward pass.
  void countFlops(unsigned forwardOpIdBound, const RecomputeResult &result) {
    int64_t total = 0;
    for (const Op &op : graph_.ops()) {
      int64_t flops = opFlops(op);
      total += flops;
      if (op.id() < forwardOpIdBound)
        report_.flopsForward += flops;
    }
    report_.flopsRecompute = result.flopsRecompute;
    report_.flopsBackward =
        total - report_.flopsForward - report_.flopsRecompute;
    int64_t training = report_.flopsForward + report_.flopsBackward;
    report_.overhead =
        training ? double(report_.flopsRecompute) / double(training) : 0.0;
  }

  Graph &graph_;
  const TrainingOptions &options_;
  const RunRequest &request_;
  TrainingReport &report_;
  const PlanBuilder::Differentiated *base_;
  std::optional<ScheduleResult> *renumbered_;
  RecomputeStepOptions steps_;
  RecomputeState state_;
  bool verified_ = false;
};

} // namespace

absl::StatusOr<TrainingReport>
buildTrainingGraphAsGiven(Graph &graph, const TrainingOptions &options,
                          std::optional<unsigned> jointForwardOps) {
  TrainingReport report;
  report.graph = graph.name().str();
  report.opsBefore = countComputeOps(graph);
  RunRequest request{.planner = options.planner,
                     .jointForwardOps = jointForwardOps};
  REMAT_RETURN_IF_ERROR(TrainingRun(graph, options, request, report).run());
  return report;
}

absl::StatusOr<std::unique_ptr<PlanBuilder>>
PlanBuilder::differentiate(Graph &graph, const TrainingOptions &options,
                           const Setup &setup) {
  // A parsed graph is already numbered so.
  if (!isInCloneOrder(graph)) {
    std::unique_ptr<Graph> forward = graph.clone();
    graph.swap(*forward);
  }
  std::unique_ptr<PlanBuilder> builder(new PlanBuilder(graph, options));
  if (setup.copyForward)
    builder->forwardCopy_ = graph.clone(Graph::CloneIds::Keep);
  Differentiated &base = builder->base_;
  base.opsBefore = countComputeOps(graph);
  TrainingReport report;
  RunRequest request{.planner = options.planner,
                     .jointForwardOps = setup.jointForwardOps};
  TrainingRun run(graph, options, request, report);
  REMAT_RETURN_IF_ERROR(run.differentiateGraph());
  base.forwardOpIdBound = run.forwardOpIdBound();
  base.autodiffTime = report.timings.front();
  base.measuredCosts = report.measuredCosts;
  // The floor is found on a second thread while plain autodiff's schedule
  // is: both only read the graph.
  std::future<absl::StatusOr<PeakFloor>> floor;
  if (setup.findFloor)
    floor = std::async(std::launch::async | std::launch::deferred,
                       [&graph, bound = base.forwardOpIdBound] {
                         return computePeakFloor(graph, bound);
                       });
  absl::StatusOr<MemorySchedule> plain = memorySchedule(graph);
  std::optional<absl::StatusOr<PeakFloor>> found;
  if (floor.valid())
    found = floor.get();
  REMAT_RETURN_IF_ERROR(plain.status());
  base.plainSchedule = plain->result;
  base.plainOrder.reserve(plain->ops.size());
  for (const Op *op : plain->ops)
    base.plainOrder.push_back(op->id());
  // Autodiff appends, so a forward graph numbered in order stays so: the
  // schedule of a renumbered copy is the one just made.
  if (numberedInScheduleOrder(graph))
    builder->renumberedSchedule_ = base.plainSchedule;
  if (found) {
    REMAT_ASSIGN_OR_RETURN(builder->floor_, std::move(*found));
  }
  return builder;
}

absl::StatusOr<BasePlan>
PlanBuilder::plan(Planner &planner, std::optional<int64_t> budgetBytes) const {
  BasePlan result;
  Stopwatch stopwatch;
  REMAT_ASSIGN_OR_RETURN(result.plan,
                         planGraph(planner, *graph_, base_.forwardOpIdBound,
                                   stepOptions(options_, budgetBytes)));
  result.time = {"plan", stopwatch.seconds(), false};
  return result;
}

absl::StatusOr<std::optional<std::string>>
PlanBuilder::repeats(Planner &planner) const {
  return planner.repeats(planningProblem(*graph_, base_.forwardOpIdBound,
                                         stepOptions(options_, std::nullopt)));
}

absl::StatusOr<Trial> PlanBuilder::build(llvm::StringRef planner,
                                         const BasePlan &plan,
                                         BuildRequest request) {
  TrainingBuild build;
  build.graph = request.copy ? std::move(request.copy)
                             : graph_->clone(Graph::CloneIds::Keep);
  build.report.graph = build.graph->name().str();
  build.report.opsBefore = base_.opsBefore;
  RunRequest run{.planner = planner,
                 .budgetBytes = request.budgetBytes,
                 .verify = false,
                 .plan = &plan};
  TrainingRun training(*build.graph, options_, run, build.report, &base_,
                       &renumberedSchedule_);
  REMAT_RETURN_IF_ERROR(training.run());
  build.verified = training.verified();
  Trial trial{planner.str(), build.report.planPeakBytes(),
              build.report.flopsRecompute, build.report.overhead};
  if (request.keepGraph)
    trial.build = std::move(build);
  return trial;
}

absl::StatusOr<Trial> PlanBuilder::buildPlainInPlace() {
  REMAT_ASSIGN_OR_RETURN(std::unique_ptr<Planner> none,
                         options_.plannerRegistry().create("none"));
  REMAT_ASSIGN_OR_RETURN(BasePlan plain, plan(*none, std::nullopt));
  auto graph = std::make_unique<Graph>();
  graph->swap(*graph_);
  return build("none", plain, {.copy = std::move(graph)});
}

int64_t PlanBuilder::recomputeLowerBound(const RematPlan &plan) const {
  return recomputeFlopsLowerBound(*graph_, base_.forwardOpIdBound, plan,
                                  base_.plainOrder);
}

absl::StatusOr<RecomputeCostBound>
PlanBuilder::boundRecompute(int64_t budgetBytes, double seconds) const {
  PlanningProblem problem;
  problem.graph = graph_;
  problem.forwardOpIdBound = base_.forwardOpIdBound;
  problem.budgetBytes = budgetBytes;
  return boundRecomputeCost(problem, seconds);
}

absl::StatusOr<PeakFloor> PlanBuilder::findFloor() const {
  return computePeakFloor(*graph_, base_.forwardOpIdBound);
}

} // namespace remat

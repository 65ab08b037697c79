//===- Training.cpp - Forward graph to training graph -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Training/Training.h"

#include "Training/TrainingInternal.h"

#include "remat/Analysis/Cost.h"
#include "remat/Analysis/Placement.h"
#include "remat/IO/MeasuredCosts.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Planner.h"
#include "remat/Pass/Recompute.h"
#include "remat/Pass/Schedule.h"
#include "remat/Support/Status.h"
#include "remat/Support/Stopwatch.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <utility>

namespace remat {

const PlannerRegistry &TrainingOptions::plannerRegistry() const {
  return planners ? *planners : PlannerRegistry::global();
}

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

/// Runs the steps of one training build, timing each as a report pass.
class TrainingRun {
public:
  /// Differentiates `graph` itself unless `base` says it is a copy of an
  /// already differentiated graph.
  /// With `given`, a plan of `base->graph`, builds that plan on the copy.
  TrainingRun(Graph &graph, const TrainingOptions &options,
              std::optional<int64_t> budgetBytes, TrainingReport &report,
              const DifferentiatedGraph *base = nullptr,
              bool verifyResult = true, const BasePlan *given = nullptr)
      : graph_(graph), options_(options), budgetBytes_(budgetBytes),
        report_(report), base_(base), verifyResult_(verifyResult),
        given_(given) {}

  /// Whether `run` ran the final verifier.
  bool verified() const { return verified_; }

  absl::Status run() {
    if (options_.strategy == kAutoStrategy)
      return invalidArgument("strategy 'auto' needs a budget (--budget=SIZE)");
    // An unknown strategy fails before the graph changes.
    std::unique_ptr<Planner> planner;
    if (!given_) {
      REMAT_ASSIGN_OR_RETURN(
          planner, options_.plannerRegistry().create(options_.strategy));
    }
    report_.strategy = options_.strategy;
    report_.aggregateCount = options_.autodiff.aggregateCount;
    report_.aggregateBytes = options_.autodiff.aggregateBytes;

    unsigned forwardOpIdBound = 0;
    if (base_) {
      forwardOpIdBound = base_->forwardOpIdBound;
      report_.measuredCosts = base_->measuredCosts;
      report_.timings.push_back(base_->autodiffTime);
      report_.passSeconds += base_->autodiffTime.seconds;
    } else {
      REMAT_ASSIGN_OR_RETURN(forwardOpIdBound, differentiateGraph());
    }
    RematPlan plan;
    if (given_) {
      plan = carryPlan(given_->plan);
      report_.timings.push_back(given_->time);
      report_.passSeconds += given_->time.seconds;
    } else {
      REMAT_RETURN_IF_ERROR(timed("plan", [&]() -> absl::StatusOr<bool> {
        REMAT_ASSIGN_OR_RETURN(plan, planOn(*planner, graph_, forwardOpIdBound,
                                            options_, budgetBytes_));
        return false;
      }));
    }
    // A schedule names the ops it recomputes before in the order the plan
    // saw them: plain autodiff's peak is then taken on a copy.
    ScheduleResult baseline;
    if (plan.schedule && base_ && base_->renumberedSchedule) {
      baseline = *base_->renumberedSchedule;
    } else if (plan.schedule) {
      std::unique_ptr<Graph> plain = graph_.clone();
      REMAT_ASSIGN_OR_RETURN(baseline, scheduleForMemory(*plain));
      if (base_)
        base_->renumberedSchedule = baseline;
    } else if (base_) {
      REMAT_ASSIGN_OR_RETURN(baseline, applyPlainSchedule());
    } else {
      REMAT_ASSIGN_OR_RETURN(baseline, schedule());
    }
    report_.peakBytesBefore = baseline.peakBytesAfter;

    RecomputeResult result;
    if (!plan.plain) {
      REMAT_RETURN_IF_ERROR(timed("recompute", [&]() -> absl::StatusOr<bool> {
        RecomputeOptions recomputeOptions;
        recomputeOptions.forceDataDependency = options_.forceDataDependency;
        REMAT_ASSIGN_OR_RETURN(result, rematerialize(graph_, forwardOpIdBound,
                                                     plan, recomputeOptions));
        return result.numCopies > 0;
      }));
      REMAT_RETURN_IF_ERROR(verifyEach());
      REMAT_ASSIGN_OR_RETURN(ScheduleResult scheduled, schedule());
      report_.peakBytesUnscheduled = scheduled.peakBytesBefore;
    } else {
      report_.peakBytesUnscheduled = baseline.peakBytesBefore;
    }
    // A build whose result is verified later still lists the step: a
    // final pipeline needs a verified graph.
    bool verifyNow = verifyResult_ || !options_.finalPipeline.empty();
    REMAT_RETURN_IF_ERROR(timed("verify", [&]() -> absl::StatusOr<bool> {
      if (verifyNow)
        REMAT_RETURN_IF_ERROR(verify(graph_));
      return false;
    }));
    verified_ = verifyNow;

    report_.optimalityGap = plan.optimalityGap;
    report_.maxRecomputations = result.maxRecomputations;
    for (std::string &warning : plan.warnings)
      report_.warnings.push_back(std::move(warning));
    report_.budgetNotes = std::move(plan.budgetNotes);
    describePlan(result);
    countFlops(forwardOpIdBound, result);
    if (!options_.finalPipeline.empty())
      REMAT_RETURN_IF_ERROR(runFinalPipeline());
    MemoryProfile memory = simulateMemory(graph_);
    report_.peakBytesAfter = memory.peakBytes;
    report_.peakBreakdownAfter = memory.peakBreakdown;
    report_.opsAfter = countComputeOps(graph_);
    if (report_.flopsRecompute > 0 &&
        report_.peakBytesAfter >= report_.peakBytesBefore)
      report_.warnings.push_back(fmt::format(
          "strategy {} recomputes {} but saves no memory: the peak is {} "
          "(plain autodiff: {})",
          report_.strategy, report_.formatCost(report_.flopsRecompute),
          formatBytes(report_.peakBytesAfter),
          formatBytes(report_.peakBytesBefore)));
    return absl::OkStatus();
  }

  /// Differentiates the graph in place; returns its forward op id bound.
  absl::StatusOr<unsigned> differentiateGraph() {
    unsigned forwardOpIdBound = graph_.opIdBound();
    REMAT_RETURN_IF_ERROR(timed("autodiff", [&]() -> absl::StatusOr<bool> {
      REMAT_ASSIGN_OR_RETURN(AutodiffResult gradients,
                             differentiate(graph_, options_.autodiff));
      // The gradients may take the byte total past int64, which planners
      // sum before the graph is verified: the error names the value.
      REMAT_RETURN_IF_ERROR(verifyByteTotal(graph_));
      if (options_.measuredCosts) {
        REMAT_ASSIGN_OR_RETURN(
            report_.measuredCosts,
            applyMeasuredCosts(graph_, *options_.measuredCosts));
      }
      return gradients.numOpsAdded > 0;
    }));
    REMAT_RETURN_IF_ERROR(verifyEach());
    return forwardOpIdBound;
  }

  /// Runs `planner` on `graph`.
  static absl::StatusOr<RematPlan>
  planOn(Planner &planner, const Graph &graph, unsigned forwardOpIdBound,
         const TrainingOptions &options, std::optional<int64_t> budgetBytes) {
    PlanningProblem problem;
    problem.graph = &graph;
    problem.forwardOpIdBound = forwardOpIdBound;
    problem.budgetBytes = budgetBytes;
    problem.onProgress = options.onProgress;
    return planner.plan(problem);
  }

private:
  /// `plan`, made on the base graph, with its ops and values those of the
  /// copy, which has the same ids (`Graph::CloneIds::Keep`).
  RematPlan carryPlan(const RematPlan &plan) const {
    std::vector<Op *> opById = opsById();
    std::vector<Value *> valueById(graph_.valueIdBound(), nullptr);
    for (Op &op : graph_.ops())
      for (Value *result : op.results())
        valueById[result->id()] = result;
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

  /// The copy's ops by id (null for ids no op has).
  std::vector<Op *> opsById() const {
    std::vector<Op *> byId(graph_.opIdBound(), nullptr);
    for (Op &op : graph_.ops())
      byId[op.id()] = &op;
    return byId;
  }

  /// Runs `fn`, which says whether it changed the graph, as the report's
  /// step `pass`.
  template <typename Fn> absl::Status timed(llvm::StringRef pass, Fn &&fn) {
    Stopwatch stopwatch;
    absl::StatusOr<bool> changed = fn();
    double seconds = stopwatch.seconds();
    report_.timings.push_back(
        {pass.str(), seconds, changed.ok() && *changed});
    report_.passSeconds += seconds;
    return changed.status();
  }

  absl::StatusOr<ScheduleResult> schedule() {
    ScheduleResult result;
    REMAT_RETURN_IF_ERROR(timed("schedule", [&]() -> absl::StatusOr<bool> {
      REMAT_ASSIGN_OR_RETURN(result, scheduleForMemory(graph_));
      return result.opsMoved > 0;
    }));
    REMAT_RETURN_IF_ERROR(verifyEach());
    return result;
  }

  /// Puts the copy of the base graph in plain autodiff's schedule, which
  /// the base computed once: the `schedule` step of every build.
  absl::StatusOr<ScheduleResult> applyPlainSchedule() {
    REMAT_RETURN_IF_ERROR(timed("schedule", [&]() -> absl::StatusOr<bool> {
      std::vector<Op *> byId = opsById();
      std::vector<Op *> order;
      order.reserve(base_->plainOrder.size());
      for (unsigned id : base_->plainOrder)
        order.push_back(byId[id]);
      graph_.setSchedule(order);
      return base_->plainSchedule.opsMoved > 0;
    }));
    REMAT_RETURN_IF_ERROR(verifyEach());
    return base_->plainSchedule;
  }

  /// Runs `finalPipeline` and profiles the devices of its result.
  absl::Status runFinalPipeline() {
    PassManager pm;
    pm.enableVerifier(options_.verifyEach);
    REMAT_RETURN_IF_ERROR(parsePassPipeline(options_.finalPipeline, pm));
    REMAT_ASSIGN_OR_RETURN(PipelineResult result, pm.run(graph_));
    for (ReportPassTime &timing : reportPassTimes(result)) {
      report_.passSeconds += timing.seconds;
      report_.timings.push_back(std::move(timing));
    }
    REMAT_RETURN_IF_ERROR(verify(graph_));
    REMAT_ASSIGN_OR_RETURN(Placement placement, computePlacement(graph_));
    report_.devices = profileDevices(graph_, placement);
    return absl::OkStatus();
  }

  absl::Status verifyEach() {
    return options_.verifyEach ? verify(graph_) : absl::OkStatus();
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
  std::optional<int64_t> budgetBytes_;
  TrainingReport &report_;
  const DifferentiatedGraph *base_;
  bool verifyResult_;
  const BasePlan *given_;
  bool verified_ = false;
};

} // namespace

absl::StatusOr<TrainingReport>
buildTrainingGraphAsGiven(Graph &graph, const TrainingOptions &options,
                          std::optional<int64_t> budgetBytes) {
  TrainingReport report;
  report.graph = graph.name().str();
  report.opsBefore = countComputeOps(graph);
  REMAT_RETURN_IF_ERROR(
      TrainingRun(graph, options, budgetBytes, report).run());
  return report;
}

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

absl::StatusOr<DifferentiatedGraph>
differentiateOnce(Graph &graph, const TrainingOptions &options) {
  DifferentiatedGraph base;
  base.graph = &graph;
  base.opsBefore = countComputeOps(graph);
  TrainingReport report;
  REMAT_ASSIGN_OR_RETURN(
      base.forwardOpIdBound,
      TrainingRun(graph, options, std::nullopt, report).differentiateGraph());
  base.autodiffTime = report.timings.front();
  base.measuredCosts = report.measuredCosts;
  REMAT_ASSIGN_OR_RETURN(MemorySchedule plain, memorySchedule(graph));
  base.plainSchedule = plain.result;
  base.plainOrder.reserve(plain.ops.size());
  for (const Op *op : plain.ops)
    base.plainOrder.push_back(op->id());
  // Autodiff appends, so a forward graph numbered in order stays so: the
  // schedule of a renumbered copy is the one just made.
  if (numberedInScheduleOrder(graph))
    base.renumberedSchedule = base.plainSchedule;
  return base;
}

absl::StatusOr<BasePlan>
planDifferentiated(const DifferentiatedGraph &base,
                   const TrainingOptions &options,
                   std::optional<int64_t> budgetBytes) {
  REMAT_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner,
                         options.plannerRegistry().create(options.strategy));
  return planDifferentiated(base, options, budgetBytes, *planner);
}

absl::StatusOr<BasePlan> planDifferentiated(const DifferentiatedGraph &base,
                                            const TrainingOptions &options,
                                            std::optional<int64_t> budgetBytes,
                                            Planner &planner) {
  BasePlan result;
  Stopwatch stopwatch;
  REMAT_ASSIGN_OR_RETURN(result.plan,
                         TrainingRun::planOn(planner, *base.graph,
                                             base.forwardOpIdBound, options,
                                             budgetBytes));
  result.time = {"plan", stopwatch.seconds(), false};
  return result;
}

absl::StatusOr<TrainingBuild>
buildFromDifferentiated(const DifferentiatedGraph &base,
                        const TrainingOptions &options,
                        std::optional<int64_t> budgetBytes, bool verify,
                        const BasePlan *plan, std::unique_ptr<Graph> copy) {
  TrainingBuild build;
  build.graph =
      copy ? std::move(copy) : base.graph->clone(Graph::CloneIds::Keep);
  build.report.graph = build.graph->name().str();
  build.report.opsBefore = base.opsBefore;
  TrainingRun run(*build.graph, options, budgetBytes, build.report, &base,
                  verify, plan);
  REMAT_RETURN_IF_ERROR(run.run());
  build.verified = run.verified();
  return build;
}

absl::Status verifyBuild(TrainingBuild &build) {
  if (build.verified)
    return absl::OkStatus();
  TrainingReport &report = build.report;
  Stopwatch stopwatch;
  REMAT_RETURN_IF_ERROR(verify(*build.graph));
  double seconds = stopwatch.seconds();
  for (ReportPassTime &timing : report.timings)
    if (timing.pass == "verify") {
      timing.seconds = seconds;
      break;
    }
  report.passSeconds += seconds;
  build.verified = true;
  return absl::OkStatus();
}

absl::StatusOr<TrainingReport>
buildTrainingGraph(Graph &graph, const TrainingOptions &options) {
  if (options.budget)
    return buildTrainingGraphInBudget(graph, options);
  return buildTrainingGraphAsGiven(graph, options);
}

} // namespace remat

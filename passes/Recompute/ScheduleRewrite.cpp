//===- ScheduleRewrite.cpp - Realising an explicit schedule ---------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A schedule (`RematPlan::schedule`) lists, for some ops of the training
/// graph, the forward ops recomputed just before them. The rewrite walks the
/// ops in schedule order once, keeping the newest version of every forward
/// value: a step's copies read the newest versions of their operands, and so
/// does every op after them. A value recomputed again simply gets a newer
/// copy, and the older one dies after its last reader, which is how
/// Checkmate's R matrix and Revolve's nested sweeps become a graph. What no
/// step recomputes is read from the forward pass and stays live until then.
/// Linear in the ops, edges and copies.
///
//===----------------------------------------------------------------------===//

#include "Recompute/Rematerializer.h"

#include "remat/Analysis/Cost.h"
#include "remat/Analysis/TopoSort.h"
#include "remat/IR/Diagnostics.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace remat::recompute {
namespace {

class ScheduleRewriter {
public:
  ScheduleRewriter(Graph &graph, unsigned forwardOpIdBound,
                   llvm::ArrayRef<RecomputeStep> steps)
      : graph_(graph), forwardOpIdBound_(forwardOpIdBound), steps_(steps),
        position_(graph.opIdBound(), kNotInGraph),
        newest_(graph.valueIdBound(), nullptr),
        originalOf_(graph.valueIdBound(), nullptr),
        copiesOf_(forwardOpIdBound, 0) {}

  absl::StatusOr<RecomputeResult> run() {
    std::vector<Op *> order;
    order.reserve(graph_.numOps());
    for (Op &op : graph_.ops()) {
      position_[op.id()] = int64_t(order.size());
      order.push_back(&op);
    }
    REMAT_RETURN_IF_ERROR(checkSteps());

    Op *lastGradientOp = nullptr;
    auto nextStep = stepsByPosition_.begin();
    for (int64_t at = 0, n = order.size(); at < n; ++at) {
      Op *op = order[at];
      for (; nextStep != stepsByPosition_.end() && nextStep->first == at;
           ++nextStep)
        runStep(steps_[nextStep->second], op,
                isForward(*op) ? nullptr : triggerFor(*op, lastGradientOp));
      for (unsigned i = 0, e = op->numOperands(); i < e; ++i)
        if (Value *newest = newestOf(op->operand(i)))
          op->setOperand(i, newest);
      if (!isForward(*op))
        lastGradientOp = op;
    }
    eraseUnreadCopies();
    if (readsLaterValue_) {
      REMAT_ASSIGN_OR_RETURN(std::vector<Op *> sorted,
                             topologicalOrder(graph_));
      graph_.setSchedule(sorted);
    }
    return finish(order);
  }

private:
  bool isForward(const Op &op) const { return op.id() < forwardOpIdBound_; }

  static constexpr int64_t kNotInGraph = -1;

  /// Whether `op` was in the schedule before the rewrite.
  bool wasScheduled(const Op *op) const {
    return op->graph() == &graph_ && op->id() < position_.size() &&
           position_[op->id()] != kNotInGraph;
  }

  /// What the copies made before gradient op `before` wait for, as in the
  /// kept-value rewrite: the last gradient op it reads, so that the schedule
  /// pass may run them anywhere between that op and `before` (a weight
  /// gradient's recomputed input before the input gradient beside it);
  /// `lastGradientOp`, the gradient op just before it, when it reads none.
  Op *triggerFor(const Op &before, Op *lastGradientOp) const {
    Op *latest = latestGradientOperandProducer(
        before,
        [&](const Op &op) { return wasScheduled(&op) && !isForward(op); },
        [&](const Op *op) { return position_[op->id()]; });
    return latest ? latest : lastGradientOp;
  }

  /// `%name (at file:line:col)`, naming the op by its first result.
  static std::string describe(const Op &op) {
    std::string name = op.numResults() ? "%" + op.result(0)->name().str()
                                       : "'" + op.describe() + "'";
    if (!op.loc().isKnown())
      return name;
    return name + " (at " + opLocation(op) + ")";
  }

  /// The newest copy of `value`'s original, where `value` is a forward
  /// value or one of its copies (an op already walked reads copies).
  Value *newestOf(const Value *value) const {
    if (value->id() < originalOf_.size() && originalOf_[value->id()])
      value = originalOf_[value->id()];
    return value->id() < newest_.size() ? newest_[value->id()] : nullptr;
  }

  absl::Status checkSteps() {
    for (size_t i = 0; i < steps_.size(); ++i) {
      const RecomputeStep &step = steps_[i];
      if (!step.before || !wasScheduled(step.before))
        return invalidArgument("schedule step {} comes before an op that is "
                               "not in graph @{}",
                               i, graph_.name().str());
      llvm::DenseSet<const Op *> seen;
      for (const Op *op : step.ops) {
        if (!op || !wasScheduled(op) || !isForward(*op) ||
            op->numOperands() == 0)
          return invalidArgument(
              "schedule step {} (before {}) recomputes {}, which is not a "
              "forward op with operands of graph @{}",
              i, opLocation(*step.before),
              op ? describe(*op) : std::string("a null op"),
              graph_.name().str());
        if (!seen.insert(op).second)
          return invalidArgument(
              "schedule step {} (before {}) recomputes {} twice", i,
              opLocation(*step.before), describe(*op));
      }
      stepsByPosition_.push_back({position_[step.before->id()], i});
    }
    // Steps before the same op keep their order.
    llvm::stable_sort(stepsByPosition_, llvm::less_first());
    return absl::OkStatus();
  }

  /// Copies the step's ops before `before`, in schedule order; those that
  /// read no copy of this step wait for `trigger`, so that scheduling cannot
  /// hoist them into the forward pass.
  void runStep(const RecomputeStep &step, Op *before, Op *trigger) {
    std::vector<Op *> ops(step.ops.begin(), step.ops.end());
    llvm::sort(ops, [&](Op *a, Op *b) {
      return position_[a->id()] < position_[b->id()];
    });
    RecomputeSegment segment;
    segment.label = "before %" + before->result(0)->name().str();
    segment.trigger = trigger;
    size_t firstCopy = copies_.size();
    for (Op *original : ops) {
      if (!mayRecompute(*original))
        continue;
      llvm::SmallVector<Value *, 4> operands;
      bool isRoot = true;
      for (Value *operand : original->operands()) {
        Value *newest = newestOf(operand);
        isRoot &= !newest || newest->producer()->id() < copyIdBound(firstCopy);
        operands.push_back(newest ? newest : operand);
        // A planner's order of the forward pass may differ from the graph's:
        // an input made after `before` here.
        if (!newest && wasScheduled(operand->producer()) &&
            position_[operand->producer()->id()] > position_[before->id()])
          readsLaterValue_ = true;
      }
      Op *copy = createCopy(graph_, *original, operands, before);
      if (isRoot && trigger)
        copy->addControlDep(trigger);
      if (newest_.size() < graph_.valueIdBound()) {
        newest_.resize(graph_.valueIdBound(), nullptr);
        originalOf_.resize(graph_.valueIdBound(), nullptr);
      }
      for (unsigned i = 0; i < original->numResults(); ++i) {
        newest_[original->result(i)->id()] = copy->result(i);
        originalOf_[copy->result(i)->id()] = original->result(i);
      }
      ++copiesOf_[original->id()];
      copies_.push_back(copy);
      if (copyOf_.size() < graph_.opIdBound())
        copyOf_.resize(graph_.opIdBound());
      copyOf_[copy->id()] = {original->id(), segments_.size()};
      countCopy(segment, *copy, +1);
    }
    if (segment.numCopies > 0)
      segments_.push_back(std::move(segment));
  }

  /// Copies nothing reads (a stage run again whose output has no reader
  /// left), whole chains of them, leave the graph and the figures.
  void eraseUnreadCopies() {
    eraseUnreadOps(graph_, copies_, [&](Op &copy) {
      auto [original, segment] = copyOf_[copy.id()];
      countCopy(segments_[segment], copy, -1);
      --copiesOf_[original];
    });
    llvm::erase_if(segments_, [](const RecomputeSegment &segment) {
      return segment.numCopies == 0;
    });
  }

  /// Ops with an id below this existed before the step whose first copy is
  /// `copies_[firstCopy]`.
  unsigned copyIdBound(size_t firstCopy) const {
    return firstCopy < copies_.size() ? copies_[firstCopy]->id()
                                      : graph_.opIdBound();
  }

  /// The kept values: forward values (other than leaves, constants and
  /// outputs) that a gradient op or a copy reads from the forward pass.
  absl::StatusOr<RecomputeResult> finish(llvm::ArrayRef<Op *> order) {
    RecomputeResult result;
    llvm::DenseSet<const Value *> outputs(graph_.outputs().begin(),
                                          graph_.outputs().end());
    llvm::BitVector read(graph_.valueIdBound());
    for (const Op &op : graph_.ops()) {
      if (isForward(op))
        continue;
      for (const Value *operand : op.operands()) {
        const Op *producer = operand->producer();
        if (isForward(*producer) && producer->numOperands() != 0 &&
            !outputs.contains(operand))
          read.set(operand->id());
      }
    }
    for (Op *op : order)
      if (isForward(*op))
        for (Value *value : op->results())
          if (read.test(value->id()))
            result.kept.push_back(value);
    result.segments = std::move(segments_);
    result.numCopies = int64_t(copies_.size());
    for (const Op *copy : copies_)
      result.flopsRecompute += opFlops(*copy);
    for (int64_t count : copiesOf_)
      result.maxRecomputations = std::max(result.maxRecomputations, count);
    return result;
  }

  Graph &graph_;
  unsigned forwardOpIdBound_;
  llvm::ArrayRef<RecomputeStep> steps_;
  /// By op id: schedule positions of the ops before the rewrite.
  std::vector<int64_t> position_;
  /// (position of the op it precedes, index into `steps_`), by position.
  std::vector<std::pair<int64_t, size_t>> stepsByPosition_;
  /// By value id: the newest copy of a forward value, or null.
  std::vector<Value *> newest_;
  /// By value id: the forward value a copy's result copies, or null.
  std::vector<const Value *> originalOf_;
  /// By forward op id: how many copies were made of it.
  std::vector<int64_t> copiesOf_;
  std::vector<Op *> copies_;
  std::vector<RecomputeSegment> segments_;
  /// By op id: a copy's original (its id) and segment (its index in
  /// `segments_`).
  std::vector<std::pair<unsigned, size_t>> copyOf_;
  /// A copy reads a forward value made after the op it precedes: the
  /// schedule is sorted again, keeping its order where it can.
  bool readsLaterValue_ = false;
};

} // namespace

absl::StatusOr<RecomputeResult>
realiseSchedule(Graph &graph, unsigned forwardOpIdBound,
                llvm::ArrayRef<RecomputeStep> steps,
                const RecomputeOptions &options) {
  if (options.forceDataDependency)
    return invalidArgument("--force-data-dependency orders kept-value plans; "
                           "an explicit schedule is ordered with control "
                           "dependencies only");
  return ScheduleRewriter(graph, forwardOpIdBound, steps).run();
}

} // namespace remat::recompute

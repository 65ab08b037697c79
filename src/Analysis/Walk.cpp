//===- Walk.cpp - Backward and forward walks over the dataflow graph ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Walk.h"

#include "remat/IR/Graph.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

namespace remat {

OpSet makeOpSet(const Graph &graph, llvm::ArrayRef<Op *> ops) {
  OpSet set(graph.opIdBound());
  for (const Op *op : ops)
    set.set(op->id());
  return set;
}

ValueSet makeValueSet(const Graph &graph, llvm::ArrayRef<Value *> values) {
  ValueSet set(graph.valueIdBound());
  for (const Value *value : values)
    set.set(value->id());
  return set;
}

SchedulePositions::SchedulePositions(const Graph &graph)
    : positionById_(graph.opIdBound(), 0) {
  unsigned position = 0;
  for (const Op &op : graph.ops())
    positionById_[op.id()] = position++;
}

unsigned SchedulePositions::operator[](const Op *op) const {
  assert(op->id() < positionById_.size() && "op created after the positions");
  return positionById_[op->id()];
}

std::vector<Op *> opsInScheduleOrder(const Graph &graph, const OpSet &set) {
  std::vector<Op *> ops;
  ops.reserve(set.count());
  // A const graph still hands out mutable ops, as Graph::inputs() does.
  for (Op &op : const_cast<Graph &>(graph).ops())
    if (op.id() < set.size() && set.test(op.id()))
      ops.push_back(&op);
  return ops;
}

namespace {

enum class WalkDirection { Backward, Forward };

/// Marks every op connected to the seeds in one direction, honouring
/// `within` and `stopAt`, with an explicit worklist.
class Walker {
public:
  Walker(const Graph &graph, const WalkOptions &options)
      : options_(options), reached_(graph.opIdBound()) {}

  WalkResult run(const Graph &graph, llvm::ArrayRef<Op *> seeds,
                 WalkDirection direction) {
    for (Op *seed : seeds)
      reach(seed);
    while (!worklist_.empty()) {
      Op *op = worklist_.pop_back_val();
      if (direction == WalkDirection::Backward)
        stepBackward(*op);
      else
        stepForward(*op);
    }
    if (!options_.inclusive)
      for (const Op *seed : seeds)
        if (seed->id() < reached_.size())
          reached_.reset(seed->id());
    return finish(graph);
  }

private:
  bool isWithin(const Op *op) const {
    return !options_.within || (op->id() < options_.within->size() &&
                                options_.within->test(op->id()));
  }
  bool isStop(const Value *value) const {
    return options_.stopAt && value->id() < options_.stopAt->size() &&
           options_.stopAt->test(value->id());
  }

  void reach(Op *op) {
    // Ops created after the walk's graph snapshot are outside every set.
    if (op->id() >= reached_.size() || reached_.test(op->id()) || !isWithin(op))
      return;
    reached_.set(op->id());
    found_.push_back(op);
    worklist_.push_back(op);
  }

  void stepBackward(const Op &op) {
    for (Value *operand : op.operands())
      if (!isStop(operand))
        reach(operand->producer());
    if (options_.followControl)
      for (Op *dep : op.controlDeps())
        reach(dep);
  }

  void stepForward(const Op &op) {
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      if (isStop(result))
        continue;
      for (const Use &use : result->uses())
        reach(use.user);
    }
    if (options_.followControl)
      for (Op *user : op.controlUsers())
        reach(user);
  }

  WalkResult finish(const Graph &graph) {
    WalkResult result;
    if (!options_.positions) {
      result.ops = opsInScheduleOrder(graph, reached_);
    } else {
      const SchedulePositions &positions = *options_.positions;
      for (Op *op : found_)
        if (reached_.test(op->id()))
          result.ops.push_back(op);
      llvm::sort(result.ops, [&](const Op *a, const Op *b) {
        return positions[a] < positions[b];
      });
    }
    result.set = std::move(reached_);
    return result;
  }

  const WalkOptions &options_;
  OpSet reached_;
  std::vector<Op *> found_;
  llvm::SmallVector<Op *, 64> worklist_;
};

} // namespace

WalkResult backwardWalk(const Graph &graph, llvm::ArrayRef<Op *> seeds,
                        const WalkOptions &options) {
  return Walker(graph, options).run(graph, seeds, WalkDirection::Backward);
}

WalkResult forwardWalk(const Graph &graph, llvm::ArrayRef<Op *> seeds,
                       const WalkOptions &options) {
  return Walker(graph, options).run(graph, seeds, WalkDirection::Forward);
}

} // namespace remat

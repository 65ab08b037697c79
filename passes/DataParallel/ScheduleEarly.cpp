//===- ScheduleEarly.cpp - Reductions as soon as their inputs exist ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Orders the towers' ops as given (each original op's copies side by side,
/// as the devices run them in parallel) and runs every reduction op right
/// after its last input is produced: a bucket of early gradients is reduced
/// while the backward pass still computes the rest. Constants wait for their
/// first reader so that they are not live across the whole step.
///
//===----------------------------------------------------------------------===//

#include "Towers.h"

#include "llvm/ADT/BitVector.h"

#include <cassert>
#include <functional>
#include <queue>

namespace remat::dp {

void scheduleEarly(Graph &graph, llvm::ArrayRef<Op *> towerOrder,
                   llvm::ArrayRef<Op *> late) {
  unsigned bound = graph.opIdBound();
  // Late ops by id: their creation index, or -1.
  std::vector<int64_t> lateIndex(bound, -1);
  for (size_t i = 0; i < late.size(); ++i)
    lateIndex[late[i]->id()] = int64_t(i);
  auto isDeferred = [&](const Op *op) {
    return lateIndex[op->id()] >= 0 && op->numOperands() == 0;
  };
  std::vector<int64_t> pending(bound, 0);
  for (const Op *op : late)
    for (const Value *operand : op->operands())
      if (!isDeferred(operand->producer()))
        ++pending[op->id()];

  std::vector<Op *> order;
  llvm::BitVector emitted(bound);
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> ready;
  auto emit = [&](Op *op) {
    emitted.set(op->id());
    order.push_back(op);
    for (const Value *result : op->results())
      for (const Use &use : result->uses())
        if (lateIndex[use.user->id()] >= 0 && --pending[use.user->id()] == 0)
          ready.push(lateIndex[use.user->id()]);
  };
  auto drain = [&] {
    while (!ready.empty()) {
      Op *op = late[ready.top()];
      ready.pop();
      for (const Value *operand : op->operands())
        if (isDeferred(operand->producer()) &&
            !emitted.test(operand->producer()->id()))
          emit(operand->producer());
      emit(op);
    }
  };
  for (const Op *op : late)
    if (op->numOperands() > 0 && pending[op->id()] == 0)
      ready.push(lateIndex[op->id()]);
  for (Op &op : graph.ops())
    if (op.hasFlag(OpFlagLeaf))
      emit(&op);
  drain();
  for (Op *op : towerOrder) {
    emit(op);
    drain();
  }
  assert(order.size() == graph.numOps() && "an op was left unscheduled");
  graph.setSchedule(order);
}

} // namespace remat::dp

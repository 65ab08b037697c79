//===- FlopsBound.cpp - What a plan recomputes, without rewriting ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The copies of a plan, counted on the graph as it is: a schedule names
/// them, and a kept-value plan copies, at its first level, every forward op
/// that a gradient op reads through a value the level does not keep, and
/// their producers up to kept values. Linear in the ops and edges; a search
/// uses it to drop plans that cannot beat the best one before building them.
///
//===----------------------------------------------------------------------===//

#include "Recompute/Rematerializer.h"

#include "remat/Analysis/Cost.h"

#include "llvm/ADT/BitVector.h"

#include <vector>

namespace remat {

int64_t recomputeFlopsLowerBound(const Graph &training,
                                 unsigned forwardOpIdBound,
                                 const RematPlan &plan,
                                 llvm::ArrayRef<unsigned> scheduleIds) {
  int64_t flops = 0;
  if (plan.plain)
    return 0;
  if (plan.schedule) {
    for (const RecomputeStep &step : *plan.schedule)
      for (const Op *op : step.ops)
        flops += opFlops(*op);
    return flops;
  }
  recompute::RegionTree regions(plan.regions);
  // Nested levels replace copies of the first one: nothing is known cheaply.
  if (regions.numLevels() > 1)
    return 0;
  std::vector<const Op *> byId(training.opIdBound(), nullptr);
  for (const Op &op : training.ops())
    byId[op.id()] = &op;
  std::vector<const Op *> forward, readers;
  for (unsigned id : scheduleIds)
    (id < forwardOpIdBound ? forward : readers).push_back(byId[id]);
  llvm::BitVector reported(training.valueIdBound());
  recompute::Level level =
      recompute::firstLevel(training, forward, plan, regions, reported);

  // Each op counted once, though a region's value read from outside it is
  // copied once more in the reader's segment: a bound, exact without
  // regions.
  llvm::BitVector copied(training.opIdBound());
  std::vector<const Op *> stack;
  auto reach = [&](const Value *value) {
    const Op *producer = value->producer();
    if (!recompute::needsCopy(level, *value) || copied.test(producer->id()))
      return;
    copied.set(producer->id());
    stack.push_back(producer);
  };
  for (const Op *reader : readers) {
    for (const Value *operand : reader->operands())
      reach(operand);
    while (!stack.empty()) {
      const Op *op = stack.back();
      stack.pop_back();
      flops += opFlops(*op);
      for (const Value *operand : op->operands())
        reach(operand);
    }
  }
  return flops;
}

} // namespace remat

//===- FlopsBound.cpp - What a plan recomputes, without rewriting ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The copies of a plan, counted on the graph as it is: a schedule names
/// them (less those nothing reads, which the rewrite erases), and a
/// kept-value plan copies, at its first level, every forward op
/// that a gradient op reads through a value the level does not keep, and
/// their producers up to kept values. Linear in the ops and edges; a search
/// uses it to drop plans that cannot beat the best one before building them.
///
//===----------------------------------------------------------------------===//

#include "Recompute/Rematerializer.h"

#include "remat/Analysis/Cost.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"

#include <vector>

namespace remat {
namespace {

/// The FLOPs of a schedule's copies that the rewrite keeps: it walks the
/// ops in order, each op and copy reading the newest copy of a value, and
/// erases the copies that nothing reads, whole chains of them.
int64_t scheduleFlops(const Graph &training,
                      llvm::ArrayRef<RecomputeStep> steps,
                      llvm::ArrayRef<unsigned> scheduleIds) {
  std::vector<int64_t> position(training.opIdBound(), -1);
  for (size_t i = 0; i < scheduleIds.size(); ++i)
    position[scheduleIds[i]] = int64_t(i);
  std::vector<std::pair<int64_t, size_t>> stepsByPosition;
  for (size_t i = 0; i < steps.size(); ++i)
    stepsByPosition.push_back({position[steps[i].before->id()], i});
  llvm::stable_sort(stepsByPosition, llvm::less_first());

  std::vector<const Op *> byId(training.opIdBound(), nullptr);
  for (const Op &op : training.ops())
    byId[op.id()] = &op;
  // Copies in creation order: their original, the copies they read, and
  // whether an op of the graph reads them.
  std::vector<const Op *> original;
  std::vector<std::vector<int>> reads;
  std::vector<char> read;
  std::vector<int> newest(training.valueIdBound(), -1);
  auto readBy = [&](const Op &op, std::vector<int> *copies) {
    for (const Value *operand : op.operands())
      if (int copy = newest[operand->id()]; copy >= 0) {
        if (copies)
          copies->push_back(copy);
        else
          read[copy] = 1;
      }
  };
  auto nextStep = stepsByPosition.begin();
  for (int64_t at = 0, n = int64_t(scheduleIds.size()); at < n; ++at) {
    for (; nextStep != stepsByPosition.end() && nextStep->first == at;
         ++nextStep) {
      std::vector<const Op *> ops(steps[nextStep->second].ops.begin(),
                                  steps[nextStep->second].ops.end());
      llvm::sort(ops, [&](const Op *a, const Op *b) {
        return position[a->id()] < position[b->id()];
      });
      for (const Op *op : ops) {
        if (!mayRecompute(*op))
          continue;
        reads.emplace_back();
        readBy(*op, &reads.back());
        original.push_back(op);
        read.push_back(0);
        for (const Value *result : op->results())
          newest[result->id()] = int(original.size()) - 1;
      }
    }
    readBy(*byId[scheduleIds[at]], nullptr);
  }
  int64_t flops = 0;
  for (int copy = int(original.size()) - 1; copy >= 0; --copy) {
    if (!read[copy])
      continue;
    flops += opFlops(*original[copy]);
    for (int input : reads[copy])
      read[input] = 1;
  }
  return flops;
}

} // namespace

int64_t recomputeFlopsLowerBound(const Graph &training,
                                 unsigned forwardOpIdBound,
                                 const RematPlan &plan,
                                 llvm::ArrayRef<unsigned> scheduleIds) {
  int64_t flops = 0;
  if (plan.plain)
    return 0;
  if (plan.schedule)
    return scheduleFlops(training, *plan.schedule, scheduleIds);
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

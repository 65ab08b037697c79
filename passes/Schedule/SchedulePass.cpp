//===- SchedulePass.cpp - The memory-aware schedule pass ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `scheduleForMemory` copies the graph into dense arrays and builds
/// candidate orders from them (the other files of this folder): sinking then
/// hoisting the input order, hoisting it alone, a greedy list schedule by ops,
/// itself sunk then hoisted, and one by chains, sunk or not. It simulates the
/// peak of each and writes back the best only if it is strictly better than the
/// input's (docs/schedule.md).
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/Schedule.h"

#include "Schedule/MemoryOrder.h"

#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Pass.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Support/Status.h"

#include <optional>

namespace remat {

absl::StatusOr<MemorySchedule> memorySchedule(const Graph &graph) {
  using namespace schedule;
  ScheduleGraph compact(graph);
  if (const Op *op = compact.firstUnorderedOp())
    return opError(*op, "reads a value or depends on an op that is not "
                        "scheduled before it; the schedule pass needs a "
                        "topological schedule (run toposort first)");
  Order input(compact.numOps());
  MemorySchedule schedule;
  ScheduleResult &result = schedule.result;
  result.peakBytesBefore = simulatePeak(compact, input);
  result.peakBytesAfter = result.peakBytesBefore;
  std::optional<Order> best;
  // Ties keep the order considered first, the input before all.
  auto consider = [&](Order &&order) {
    int64_t peak = simulatePeak(compact, order);
    if (peak < result.peakBytesAfter) {
      result.peakBytesAfter = peak;
      best = std::move(order);
    }
  };
  auto sinkThenHoist = [&](const Order &start) {
    Order sunk = sinkOrder(compact, start);
    Order hoisted = hoistOrder(compact, sunk);
    consider(std::move(sunk));
    consider(std::move(hoisted));
  };
  sinkThenHoist(input);
  consider(hoistOrder(compact, input));
  Order listed = listScheduleOrder(compact, input, ListKey::ByOps);
  sinkThenHoist(listed);
  consider(std::move(listed));
  // Sinking what it runs early is all this one needs of the other phases.
  Order chained = listScheduleOrder(compact, input, ListKey::ByChains);
  consider(sinkOrder(compact, chained));
  consider(std::move(chained));
  const Order &chosen = best ? *best : input;
  schedule.ops.reserve(chosen.size());
  for (Index op : chosen.ops())
    schedule.ops.push_back(compact.ops()[op]);
  if (best)
    result.opsMoved = countMovedOps(*best);
  return schedule;
}

absl::StatusOr<ScheduleResult> scheduleForMemory(Graph &graph) {
  REMAT_ASSIGN_OR_RETURN(MemorySchedule schedule, memorySchedule(graph));
  if (schedule.result.peakBytesAfter < schedule.result.peakBytesBefore)
    graph.setSchedule(schedule.ops);
  return schedule.result;
}

namespace {

/// Reorders the schedule to lower its simulated peak memory: ops that create
/// storage sink to just before their first reader, last readers of big
/// operands with smaller results hoist to just after their operands'
/// producers, and a greedy list schedule competes (docs/schedule.md).
///
/// Requires: a verified graph (a schedule that is not topological is an
/// error naming the first op out of order). Guarantees: the same ops in a
/// topological order whose simulated peak is strictly lower, or the input
/// order untouched. Nothing else changes. Passes that add ops or reorder
/// them (`toposort`) after it may undo its effect: run it last.
class SchedulePass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "schedule";
  static constexpr llvm::StringLiteral kSummary =
      "Reorders the schedule to lower its simulated peak memory";

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    REMAT_ASSIGN_OR_RETURN(ScheduleResult result, scheduleForMemory(graph));
    return result.peakBytesAfter < result.peakBytesBefore;
  }
};

} // namespace

std::unique_ptr<Pass> createSchedulePass() {
  return std::make_unique<SchedulePass>();
}

void registerSchedulePass(PassRegistry &registry) {
  registry.add({.argument = SchedulePass::kArgument.str(),
                .summary = SchedulePass::kSummary.str(),
                .factory = [](const PassOptions &)
                    -> absl::StatusOr<std::unique_ptr<Pass>> {
                  return createSchedulePass();
                }});
}

} // namespace remat

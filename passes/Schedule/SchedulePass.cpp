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
/// input's (docs/schedule.md). The candidates from the list schedule by ops
/// are made on a second thread, over the same read-only arrays.
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/Schedule.h"

#include "Schedule/MemoryOrder.h"

#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Pass.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Support/Status.h"

#include <future>
#include <limits>
#include <optional>
#include <utility>

namespace remat {

namespace {

/// The best of some candidate orders: the lowest peak, ties to the one
/// considered first (the lower `rank`).
struct BestOrder {
  std::optional<schedule::Order> order;
  int64_t peak = std::numeric_limits<int64_t>::max();
  int rank = 0;

  void consider(const schedule::ScheduleGraph &graph,
                schedule::Order &&candidate, int candidateRank) {
    int64_t candidatePeak = schedule::simulatePeak(graph, candidate);
    if (std::make_pair(candidatePeak, candidateRank) <
        std::make_pair(peak, rank))
      *this = {std::move(candidate), candidatePeak, candidateRank};
  }
  void consider(BestOrder &&other) {
    if (other.order &&
        std::make_pair(other.peak, other.rank) < std::make_pair(peak, rank))
      *this = std::move(other);
  }
};

} // namespace

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
  // The candidates, ranked in the order they are considered: the input
  // first, so that another order is taken only when strictly better. The
  // list schedule by ops and what grows from it are built on a second
  // thread; which thread finds an order does not change which is chosen.
  BestOrder best{std::nullopt, result.peakBytesBefore, 0};
  auto fromListByOps = [&compact, &input] {
    BestOrder found;
    Order listed = listScheduleOrder(compact, input, ListKey::ByOps);
    Order sunk = sinkOrder(compact, listed);
    Order hoisted = hoistOrder(compact, sunk);
    found.consider(compact, std::move(sunk), 4);
    found.consider(compact, std::move(hoisted), 5);
    found.consider(compact, std::move(listed), 6);
    return found;
  };
  // Run here, when `get` asks, where no thread can be started.
  std::future<BestOrder> listedByOps =
      std::async(std::launch::async | std::launch::deferred, fromListByOps);
  {
    Order sunk = sinkOrder(compact, input);
    Order hoisted = hoistOrder(compact, sunk);
    best.consider(compact, std::move(sunk), 1);
    best.consider(compact, std::move(hoisted), 2);
  }
  best.consider(compact, hoistOrder(compact, input), 3);
  // Sinking what it runs early is all this one needs of the other phases.
  Order chained = listScheduleOrder(compact, input, ListKey::ByChains);
  best.consider(compact, sinkOrder(compact, chained), 7);
  best.consider(compact, std::move(chained), 8);
  best.consider(listedByOps.get());
  result.peakBytesAfter = best.peak;
  const Order &chosen = best.order ? *best.order : input;
  schedule.ops.reserve(chosen.size());
  for (Index op : chosen.ops())
    schedule.ops.push_back(compact.ops()[op]);
  if (best.order)
    result.opsMoved = countMovedOps(*best.order);
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

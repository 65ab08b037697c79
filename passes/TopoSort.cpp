//===- TopoSort.cpp - Reorder the schedule topologically --------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/TopoSort.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

namespace remat {
namespace {

/// Replaces the schedule by `topologicalOrder` (Analysis/TopoSort.h): among
/// ready ops the one earlier in the current schedule goes first, so an already
/// topological schedule is kept and the pass reports no change. It repairs a
/// schedule that is not topological (e.g. after a rewrite appended ops out of
/// place) and fails, naming an op, on a cycle.
///
/// Requires: a graph whose only problem may be its op order. Guarantees: a
/// topological schedule. It does not optimise memory: a memory-aware
/// schedule pass run before it has its order kept only where that order is
/// already topological, so run this before, not after, memory scheduling.
class TopoSortPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "toposort";
  static constexpr llvm::StringLiteral kSummary =
      "Reorders the schedule into a deterministic topological order";

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    REMAT_ASSIGN_OR_RETURN(std::vector<Op *> order, topologicalOrder(graph));
    auto current = llvm::map_range(graph.ops(), [](Op &op) { return &op; });
    if (std::equal(order.begin(), order.end(), current.begin(), current.end()))
      return false;
    graph.setSchedule(order);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createTopoSortPass() {
  return std::make_unique<TopoSortPass>();
}

void registerTopoSortPass(PassRegistry &registry) {
  registry.add({.argument = TopoSortPass::kArgument.str(),
                .summary = TopoSortPass::kSummary.str(),
                .factory = [](const PassOptions &)
                    -> absl::StatusOr<std::unique_ptr<Pass>> {
                  return createTopoSortPass();
                }});
}

} // namespace remat

//===- Planners.h - What the planners share ---------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the rule-based planners (the strategies of docs/strategies.md) share:
/// the candidate values every one of them chooses from, the adapter that
/// makes a kept-value rule a `Planner`, one entry point per larger rule, and
/// what Planners.def declares: the planner files' registration functions
/// and `auto`'s ranks.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_PLANNERS_H
#define REMAT_PASSES_PLANNING_PLANNERS_H

#include "remat/Analysis/Walk.h"
#include "remat/Pass/Planner.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace remat::planners {

/// The forward values a strategy may keep: float results of ops with operands
/// on some path from an input or param to the loss, other than the loss.
struct Candidates {
  /// In schedule order (by producer, then result index).
  std::vector<Value *> values;
  /// The same values, indexed by `Value::id()`.
  ValueSet set;
  /// Ops on some path from a leaf to the loss, the loss's producer included.
  OpSet onPathOps;
};

/// The candidates of `graph`'s forward pass (loss = output 0); empty when it
/// has no outputs. Gradient ops, which only read the loss and forward values,
/// lie on no path to it. O(ops + edges).
Candidates findCandidates(const Graph &graph);

/// The values of `candidates` that are in `chosen`, in schedule order.
std::vector<Value *> keepChosen(const Candidates &candidates,
                                const ValueSet &chosen);

/// A rule: the kept values (or regions) of a graph from its candidates.
using KeepRule = std::function<absl::StatusOr<RematPlan>(
    const PlanningProblem &, const Candidates &)>;

/// A planner that applies `rule` to the candidates of the problem's graph.
class RulePlanner : public Planner {
public:
  explicit RulePlanner(KeepRule rule) : rule_(std::move(rule)) {}
  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override;

private:
  KeepRule rule_;
};

/// `memory`: about sqrt(N) of the bottlenecks, evenly spaced.
absl::StatusOr<RematPlan> selectMemory(const Graph &graph,
                                       const Candidates &candidates);

/// `sqrtn`: `segments` memory-balanced segments of the schedule (about
/// sqrt(N) when 0), the candidate closing each one kept.
RematPlan selectSqrtN(const Candidates &candidates, int64_t segments = 0);

/// `regions` (every tagged forward region when `paths` is empty) or
/// `regions=paths`.
absl::StatusOr<RematPlan> selectRegions(const PlanningProblem &problem,
                                        const Candidates &candidates,
                                        llvm::ArrayRef<std::string> paths);

/// The ranks `auto` tries spellings at (`AutoCandidate::rank`), side by side
/// in Planners.def: `autorank::Chain` is 10.
namespace autorank {
enum : int {
#define REMAT_AUTO_RANK(NAME, RANK, SPELLING) NAME = RANK,
#include "Planning/Planners.def"
};
} // namespace autorank

// The registration function of each planner file (Planners.def).
#define REMAT_PLANNER(REGISTER) void REGISTER(PlannerRegistry &registry);
#include "Planning/Planners.def"

} // namespace remat::planners

#endif // REMAT_PASSES_PLANNING_PLANNERS_H

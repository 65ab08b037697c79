//===- ScheduleCheck.cpp - Validity, cost and peak of R/S schedules -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The memory accounting of docs/planning-ilp.md, in exact integers: the
/// reference that the MILP's rows model and that tests hold solutions to.
///
//===----------------------------------------------------------------------===//

#include "Planning/Problem/RematProblem.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/MathExtras.h"

namespace remat::problem {

/// An error about stage `t`, in the common wording.
template <typename... Args>
static absl::Status stageError(int t, fmt::format_string<Args...> format,
                               Args &&...args) {
  return invalidArgument("ilp schedule: stage {}: {}", t,
                         fmt::format(format, std::forward<Args>(args)...));
}

/// The rules of stage `t` that do not depend on the order of computation.
static absl::Status checkStageBits(const RematProblem &problem,
                                   const RematSchedule &schedule, int t) {
  int n = int(problem.nodes.size());
  const llvm::BitVector &compute = schedule.compute[t];
  const llvm::BitVector &resident = schedule.resident[t];
  if (!compute.test(t))
    return stageError(t, "does not compute its own node");
  int last = compute.find_last();
  if (last > t)
    return stageError(t, "computes node {}, which is later", last);
  last = resident.find_last();
  if (last >= t)
    return stageError(t, "holds node {}, which is not earlier", last);
  for (int i : compute.set_bits()) {
    if (i < t && problem.nodes[i].backward)
      return stageError(t, "recomputes backward node {}", i);
    if (resident.test(i))
      return stageError(t, "recomputes node {}, which it holds", i);
  }
  if (t + 1 < n)
    for (int i : schedule.resident[t + 1].set_bits())
      if (!compute.test(i) && !resident.test(i))
        return stageError(t, "keeps node {}, which it does not hold", i);
  return absl::OkStatus();
}

/// Walks stage `t` of `schedule` after checking its rules, calling
/// `onStep(k, bytes)` per computed node k in order with the bytes live while
/// k is computed: its output, its inputs and `constantBytes` included.
static absl::Status walkStage(const RematProblem &problem, const RematDag &dag,
                              const RematSchedule &schedule, int t,
                              llvm::function_ref<void(int, int64_t)> onStep) {
  REMAT_RETURN_IF_ERROR(checkStageBits(problem, schedule, t));
  int n = int(problem.nodes.size());
  const llvm::BitVector &compute = schedule.compute[t];
  llvm::BitVector present = schedule.resident[t];
  llvm::BitVector kept =
      t + 1 < n ? schedule.resident[t + 1] : llvm::BitVector(n);

  // The last computation of the stage that reads each node (or the node's own,
  // when nothing later reads it); -1 for resident nodes that nothing reads.
  std::vector<int> lastUse(n, -1);
  for (int k : compute.set_bits()) {
    lastUse[k] = k;
    for (int dep : dag.deps[k])
      lastUse[dep] = k;
  }

  // validateProblem bounds the sum of all bytes, so no sum below overflows.
  int64_t live = problem.constantBytes;
  for (int i : present.set_bits())
    live += problem.nodes[i].bytes;
  for (int k : compute.set_bits()) {
    for (int dep : dag.deps[k])
      if (!present.test(dep))
        return stageError(t, "node {} reads node {}, which is not in memory", k,
                          dep);
    live += problem.nodes[k].bytes;
    present.set(k);
    onStep(k, live);
    auto freeIfDone = [&](int i) {
      if (lastUse[i] == k && !kept.test(i)) {
        live -= problem.nodes[i].bytes;
        present.reset(i);
      }
    };
    for (int dep : dag.deps[k])
      freeIfDone(dep);
    freeIfDone(k);
  }
  return absl::OkStatus();
}

absl::StatusOr<ScheduleCost> evaluateSchedule(const RematProblem &problem,
                                              const RematSchedule &schedule) {
  REMAT_RETURN_IF_ERROR(validateProblem(problem));
  size_t n = problem.nodes.size();
  auto wrongSize = [n](const std::vector<llvm::BitVector> &rows) {
    return rows.size() != n ||
           llvm::any_of(rows, [n](const llvm::BitVector &row) {
             return row.size() != n;
           });
  };
  if (wrongSize(schedule.compute) || wrongSize(schedule.resident))
    return invalidArgument("ilp schedule: expected {} stages of {} bits", n, n);

  RematDag dag = buildDag(problem);
  ScheduleCost result;
  result.peakBytes = -1;
  bool overflow = false;
  int64_t baseCost = 0;
  for (const RematNode &node : problem.nodes)
    overflow |= llvm::AddOverflow(baseCost, node.cost, baseCost);
  for (int t = 0; t < int(n); ++t) {
    REMAT_RETURN_IF_ERROR(
        walkStage(problem, dag, schedule, t, [&](int node, int64_t liveBytes) {
          overflow |= llvm::AddOverflow(result.cost, problem.nodes[node].cost,
                                        result.cost);
          if (liveBytes > result.peakBytes) {
            result.peakBytes = liveBytes;
            result.peakStage = t;
            result.peakNode = node;
          }
        }));
  }
  if (overflow)
    return invalidArgument("ilp schedule: total cost overflows int64");
  result.peakBytes = std::max<int64_t>(result.peakBytes, problem.constantBytes);
  result.recomputeCost = result.cost - baseCost;
  return result;
}

absl::StatusOr<ScheduleCost> checkSchedule(const RematProblem &problem,
                                           const RematSchedule &schedule) {
  REMAT_ASSIGN_OR_RETURN(ScheduleCost cost,
                         evaluateSchedule(problem, schedule));
  if (cost.peakBytes > problem.budgetBytes)
    return invalidArgument(
        "ilp schedule: stage {}: {} bytes live while computing node {}, over "
        "the budget of {}",
        cost.peakStage, cost.peakBytes, cost.peakNode, problem.budgetBytes);
  return cost;
}

} // namespace remat::problem

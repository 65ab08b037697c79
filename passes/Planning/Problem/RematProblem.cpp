//===- RematProblem.cpp - Training DAGs and their plain schedule ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Planning/Problem/RematProblem.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

namespace remat::problem {

absl::Status validateProblem(const RematProblem &problem) {
  int n = int(problem.nodes.size());
  if (problem.constantBytes < 0 || problem.budgetBytes < 0)
    return invalidArgument("ilp problem: negative constant bytes or budget");
  int64_t totalBytes = problem.constantBytes;
  bool seenBackward = false;
  for (int i = 0; i < n; ++i) {
    const RematNode &node = problem.nodes[i];
    if (node.cost < 0 || node.bytes < 0)
      return invalidArgument("ilp problem: node {} has a negative cost or size",
                             i);
    if (seenBackward && !node.backward)
      return invalidArgument(
          "ilp problem: forward node {} comes after a backward node", i);
    seenBackward |= node.backward;
    for (int dep : node.deps)
      if (dep < 0 || dep >= i)
        return invalidArgument(
            "ilp problem: node {} reads node {}, which is not earlier", i, dep);
    if (llvm::AddOverflow(totalBytes, node.bytes, totalBytes))
      return invalidArgument("ilp problem: total bytes overflow int64");
  }
  return absl::OkStatus();
}

int numForward(const RematProblem &problem) {
  auto it = llvm::find_if(problem.nodes,
                          [](const RematNode &node) { return node.backward; });
  return int(it - problem.nodes.begin());
}

bool RematDag::readLaterThan(int i, int t, const RematProblem &problem) const {
  // Forward readers come first: a forward reader may be recomputed at any
  // stage, a backward one only at its own.
  const std::vector<int> &users = readers[i];
  return !users.empty() &&
         (users.back() >= t || !problem.nodes[users.front()].backward);
}

RematDag buildDag(const RematProblem &problem) {
  int n = int(problem.nodes.size());
  RematDag dag;
  dag.deps.resize(n);
  dag.readers.resize(n);
  for (int i = 0; i < n; ++i) {
    std::vector<int> &deps = dag.deps[i];
    deps.assign(problem.nodes[i].deps.begin(), problem.nodes[i].deps.end());
    llvm::sort(deps);
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    // Readers are visited in index order, so each list comes out sorted.
    for (int dep : deps)
      dag.readers[dep].push_back(i);
  }
  return dag;
}

RematSchedule RematSchedule::empty(int numNodes) {
  RematSchedule schedule;
  schedule.compute.assign(numNodes, llvm::BitVector(numNodes));
  schedule.resident.assign(numNodes, llvm::BitVector(numNodes));
  return schedule;
}

RematSchedule keepAllSchedule(const RematProblem &problem) {
  int n = int(problem.nodes.size());
  RematDag dag = buildDag(problem);
  RematSchedule schedule = RematSchedule::empty(n);
  for (int i = 0; i < n; ++i) {
    schedule.compute[i].set(i);
    int lastReader = dag.readers[i].empty() ? i : dag.readers[i].back();
    for (int t = i + 1; t <= lastReader; ++t)
      schedule.resident[t].set(i);
  }
  return schedule;
}

void keepUntilRead(const RematProblem &problem, RematSchedule &schedule) {
  int n = int(problem.nodes.size());
  // By node: the stage of its latest computation, and the last stage it is
  // kept resident (-1: none yet).
  std::vector<int> computedAt(n, -1), keptUntil(n, -1);
  for (int t = 0; t < n; ++t) {
    schedule.resident[t].reset();
    for (int reader : schedule.compute[t].set_bits())
      for (int dep : problem.nodes[reader].deps) {
        if (schedule.compute[t].test(dep) || computedAt[dep] < 0)
          continue;
        for (int s = std::max(computedAt[dep], keptUntil[dep]) + 1; s <= t; ++s)
          schedule.resident[s].set(dep);
        keptUntil[dep] = t;
      }
    for (int node : schedule.compute[t].set_bits())
      computedAt[node] = t;
  }
}

} // namespace remat::problem

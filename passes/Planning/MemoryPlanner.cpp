//===- MemoryPlanner.cpp - The memory planner -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--strategy=memory`: the seed's bottleneck heuristic. Bottlenecks are the
/// candidates that every path from the entry ops to the loss crosses
/// (remat/Analysis/Bottlenecks.h), leaving out small tensors and the kinds the
/// seed left out; about sqrt(N) of them are kept, evenly spaced.
///
//===----------------------------------------------------------------------===//

#include "Planners.h"

#include "remat/Analysis/Bottlenecks.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include <cmath>

namespace remat::planners {
namespace {

/// Tensors of at most this many elements are never bottleneck checkpoints:
/// keeping them saves nothing worth a segment boundary (the seed's minimum).
constexpr int64_t kMinCheckpointElements = 1024;

/// The kinds whose results the seed never picked as bottlenecks, in our IR's
/// terms: losses, batch norm, dropout and casts.
bool isExcludedKind(llvm::StringRef kind) {
  return kind == "batch_norm" || kind == "dropout" || kind == "cast" ||
         kind.endswith("_loss") || kind.contains("cross_entropy");
}

} // namespace

absl::StatusOr<RematPlan> selectMemory(const Graph &graph,
                                            const Candidates &candidates) {
  ValueSet eligible(graph.valueIdBound());
  size_t numEligible = 0;
  for (const Value *value : candidates.values) {
    if (value->type().numElements() <= kMinCheckpointElements ||
        isExcludedKind(value->producer()->kind()))
      continue;
    eligible.set(value->id());
    ++numEligible;
  }

  // Entry ops, not leaf values, start the paths: every layer's weights join
  // the graph late, so with leaf sources nothing before the last layer of an
  // MLP, and nothing at all in a transformer with tied embeddings, would cut
  // every path (docs/strategies.md).
  BottleneckOptions options;
  options.sources = BottleneckSourceKind::EntryOps;
  options.exclude = [&](const Value &value) {
    return !eligible.test(value.id());
  };
  std::vector<Value *> bottlenecks = findBottlenecks(graph, options);
  if (bottlenecks.empty())
    return invalidArgument(
        "planner 'memory' found no bottleneck tensor; name checkpoints with "
        "--strategy=names=..., or use --strategy=speed or --strategy=sqrtn");

  // Bottlenecks are eligible, so numEligible >= bottlenecks.size() >= 1, and
  // when more than ceil(sqrt(N)) are found, step <= ceil(sqrt(N)) < their
  // count: at least one is kept.
  double rootN = std::sqrt(double(numEligible));
  size_t wanted = size_t(std::ceil(rootN));
  RematPlan plan;
  if (bottlenecks.size() <= wanted) {
    plan.kept = std::move(bottlenecks);
    return plan;
  }
  size_t step = size_t(std::ceil(double(bottlenecks.size()) / rootN));
  for (size_t i = step - 1; i < bottlenecks.size(); i += step)
    plan.kept.push_back(bottlenecks[i]);
  return plan;
}

void registerMemoryPlanner(PlannerRegistry &registry) {
  PlannerInfo info{.name = "memory",
                .summary =
                    "About sqrt(N) of the bottleneck tensors, evenly spaced",
                .factory = [](std::optional<llvm::StringRef>)
                    -> absl::StatusOr<std::unique_ptr<Planner>> {
                  return std::make_unique<RulePlanner>(
                      [](const PlanningProblem &problem,
                         const Candidates &candidates)
                          -> absl::StatusOr<RematPlan> {
                        absl::StatusOr<RematPlan> plan =
                            selectMemory(*problem.graph, candidates);
                        if (plan.ok() || !problem.budgetBytes)
                          return plan;
                        // With a budget a planner never fails on a valid
                        // graph: plain autodiff, and the reason.
                        RematPlan plain{candidates.values, {}};
                        plain.plain = true;
                        plain.warnings.push_back(
                            std::string(plan.status().message()) +
                            "; planning plain autodiff instead");
                        return plain;
                      });
                }};
  info.search.autoCandidates = autoTriesOnce("memory", autorank::Memory);
  registry.add(std::move(info));
}

} // namespace remat::planners

//===- SqrtN.cpp - Memory-balanced sqrt(N) segments -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--strategy=sqrtn`: Chen et al. 2016 on the linearised graph. The schedule
/// is cut into about k = ceil(sqrt(N)) segments (`sqrtn=K`: K segments)
/// holding equal bytes of candidates; the candidate that closes a segment is
/// kept.
///
//===----------------------------------------------------------------------===//

#include "Planners.h"

#include "remat/IR/Graph.h"
#include "remat/Analysis/Memory.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace remat::planners {

RematPlan selectSqrtN(const Candidates &candidates, int64_t count) {
  RematPlan plan;
  if (candidates.values.empty())
    return plan;
  // Sums in 128 bits: bytes * k may exceed int64 on huge graphs.
  using Wide = __int128;
  Wide total = 0;
  for (const Value *value : candidates.values)
    total += ownedBytes(*value);
  if (total == 0)
    return plan;
  Wide segments =
      count > 0 ? Wide(count)
                : Wide(std::ceil(std::sqrt(double(candidates.values.size()))));

  // Keep when running / total >= 1 / segments, in integers.
  Wide running = 0;
  for (Value *value : candidates.values) {
    running += ownedBytes(*value);
    if (running * segments >= total) {
      plan.kept.push_back(value);
      running = 0;
    }
  }
  return plan;
}

void registerSqrtNPlanner(PlannerRegistry &registry) {
  PlannerInfo info{
       .name = "sqrtn",
       .summary =
           "Chen et al.'s memory-balanced segments, about sqrt(N) or SEGMENTS",
       .argument = "SEGMENTS",
       .factory = [](std::optional<llvm::StringRef> argument)
           -> absl::StatusOr<std::unique_ptr<Planner>> {
         int64_t segments = 0;
         if (argument && (argument->getAsInteger(10, segments) || segments < 1))
           return invalidArgument("planner 'sqrtn' takes one segment count "
                                  "of at least 1, got 'sqrtn={}'",
                                  argument->str());
         return std::make_unique<RulePlanner>(
             [segments](const PlanningProblem &, const Candidates &candidates)
                 -> absl::StatusOr<RematPlan> {
               return selectSqrtN(candidates, segments);
             });
       }};
  // Its own choice, then K = 1, 2, 3, 4, 6, 9, 13, ... (ratio 3/2) segments
  // up to the op count.
  info.search.autoCandidates = [](const Graph &graph) {
    std::vector<AutoCandidate> candidates{{"sqrtn", autorank::SqrtN}};
    int64_t limit = int64_t(graph.numOps());
    for (int64_t k = 1; k <= limit; k = std::max(k + 1, k + k / 2))
      candidates.push_back(
          {fmt::format("sqrtn={}", k), autorank::SqrtNSegments});
    return candidates;
  };
  registry.add(std::move(info));
}

} // namespace remat::planners

//===- RulePlanners.cpp - The rule-based planners that fit in a few lines -===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The candidate filter every rule-based planner shares, the adapter that
/// makes a rule a `Planner`, and the rules that fit in a few lines: `none`,
/// `all`, `collection`, `names=` and `speed`. `memory`, `sqrtn` and
/// `regions` live in their own files of this folder.
///
//===----------------------------------------------------------------------===//

#include "Planning/Planners.h"

#include "remat/Analysis/Cost.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace remat {

namespace planners {

Candidates findCandidates(const Graph &graph) {
  Candidates candidates{
      {}, ValueSet(graph.valueIdBound()), OpSet(graph.opIdBound())};
  if (graph.outputs().empty())
    return candidates;
  const Value *loss = graph.outputs()[0];

  // Data edges only: a control dependency carries no value to keep.
  WalkOptions towardsLoss;
  towardsLoss.followControl = false;
  WalkResult feedsLoss = backwardWalk(graph, {loss->producer()}, towardsLoss);
  std::vector<Op *> leaves;
  for (const Op &op : graph.ops())
    if (op.hasFlag(OpFlagLeaf))
      leaves.push_back(const_cast<Op *>(&op));
  WalkOptions fromLeaves;
  fromLeaves.followControl = false;
  fromLeaves.within = &feedsLoss.set;
  WalkResult onPath = forwardWalk(graph, leaves, fromLeaves);

  // A value lies on a path when an on-path op reads it; producers of
  // operands of on-path ops are in `feedsLoss`, but only those reached from a
  // leaf are on a path from one.
  ValueSet readOnPath(graph.valueIdBound());
  for (const Op *op : onPath.ops)
    for (const Value *operand : op->operands())
      if (onPath.set.test(operand->producer()->id()))
        readOnPath.set(operand->id());
  for (const Op *op : onPath.ops) {
    if (op->numOperands() == 0)
      continue;
    for (unsigned i = 0, e = op->numResults(); i < e; ++i) {
      Value *value = op->result(i);
      if (value != loss && value->type().isFloat() &&
          readOnPath.test(value->id())) {
        candidates.values.push_back(value);
        candidates.set.set(value->id());
      }
    }
  }
  candidates.onPathOps = std::move(onPath.set);
  return candidates;
}

std::vector<Value *> keepChosen(const Candidates &candidates,
                                const ValueSet &chosen) {
  std::vector<Value *> kept;
  for (Value *value : candidates.values)
    if (chosen.test(value->id()))
      kept.push_back(value);
  return kept;
}

} // namespace planners

namespace {

using planners::Candidates;
using planners::RulePlanner;

RematPlan selectCollection(const Graph &graph, const Candidates &candidates) {
  ValueSet chosen(graph.valueIdBound());
  for (const Value *member : graph.collection("checkpoints"))
    chosen.set(member->id());
  for (const Value *value : candidates.values)
    if (value->producer()->kind() == "checkpoint")
      chosen.set(value->id());
  return {planners::keepChosen(candidates, chosen), {}};
}

absl::StatusOr<RematPlan> selectNames(const PlanningProblem &problem,
                                      const Candidates &candidates,
                                      llvm::ArrayRef<std::string> names) {
  llvm::BitVector matchesSome(names.size());
  for (const Op &op : problem.graph->ops()) {
    if (!problem.isForward(op))
      continue;
    for (unsigned r = 0, e = op.numResults(); r < e; ++r)
      for (size_t i = 0; i < names.size(); ++i)
        if (op.result(r)->name().contains(names[i]))
          matchesSome.set(i);
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (!matchesSome.test(i))
      return invalidArgument("planner 'names': '{}' matches no value",
                             names[i]);

  RematPlan plan;
  for (Value *value : candidates.values)
    if (llvm::any_of(names, [&](const std::string &name) {
          return value->name().contains(name);
        }))
      plan.kept.push_back(value);
  return plan;
}

RematPlan selectSpeed(const Candidates &candidates) {
  RematPlan plan;
  for (Value *value : candidates.values)
    if (isExpensive(*value->producer()))
      plan.kept.push_back(value);
  return plan;
}

/// A planner without an argument that applies `rule`; `auto` tries it at
/// `autoRank` when given.
template <typename Rule>
PlannerInfo simpleRule(llvm::StringRef name, llvm::StringRef summary,
                       Rule rule, std::optional<int> autoRank = std::nullopt) {
  PlannerInfo info{.name = name.str(),
                   .summary = summary.str(),
                   .factory = [rule](std::optional<llvm::StringRef>)
                       -> absl::StatusOr<std::unique_ptr<Planner>> {
                     return std::make_unique<RulePlanner>(rule);
                   }};
  if (autoRank)
    info.search.autoCandidates = autoTriesOnce(name.str(), *autoRank);
  return info;
}

} // namespace

namespace planners {

absl::StatusOr<RematPlan> RulePlanner::plan(const PlanningProblem &problem) {
  return rule_(problem, findCandidates(*problem.graph));
}

void registerRulePlanners(PlannerRegistry &registry) {
  registry.add(simpleRule(
      "none", "Plain autodiff: keeps every value the backward pass reads",
      [](const PlanningProblem &, const Candidates &candidates)
          -> absl::StatusOr<RematPlan> {
        RematPlan plan{candidates.values, {}};
        plan.plain = true;
        return plan;
      },
      autorank::None));
  registry.add(simpleRule(
      "all", "Keeps only the leaves: recomputes every forward value",
      [](const PlanningProblem &, const Candidates &)
          -> absl::StatusOr<RematPlan> { return RematPlan{}; },
      autorank::All));
  registry.add(simpleRule(
      "collection",
      "Keeps the `checkpoints` collection and results of `checkpoint` ops",
      [](const PlanningProblem &problem, const Candidates &candidates)
          -> absl::StatusOr<RematPlan> {
        return selectCollection(*problem.graph, candidates);
      }));
  registry.add(
      {.name = "names",
       .summary = "Keeps the values whose names contain one of the substrings",
       .argument = "SUBSTR,...",
       .needsArgument = true,
       .factory = [](std::optional<llvm::StringRef> argument)
           -> absl::StatusOr<std::unique_ptr<Planner>> {
         REMAT_ASSIGN_OR_RETURN(std::vector<std::string> names,
                                splitPlannerList("names", *argument));
         return std::make_unique<RulePlanner>(
             [names](const PlanningProblem &problem,
                     const Candidates &candidates) {
               return selectNames(problem, candidates, names);
             });
       }});
  registry.add(simpleRule(
      "speed", "Keeps the results of matmul and convolution ops",
      [](const PlanningProblem &, const Candidates &candidates)
          -> absl::StatusOr<RematPlan> { return selectSpeed(candidates); },
      autorank::Speed));
}

} // namespace planners

} // namespace remat

//===- Strategies.cpp - Which forward values to keep ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Strategy parsing and printing, the candidate filter every strategy shares,
/// and the strategies that fit in a few lines. `memory`, `sqrtn` and `regions`
/// live in their own files of this folder.
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/Checkpoints.h"

#include "Planning/Strategies.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

namespace remat {
namespace {

/// One spelling of `--strategy=`.
struct StrategySpelling {
  llvm::StringLiteral name;
  StrategyKind kind;
  /// Whether `name=a,b` is accepted, and the placeholder for the list.
  llvm::StringLiteral listPlaceholder;
  /// Whether the list is required.
  bool needsList;
};

constexpr StrategySpelling kSpellings[] = {
    {"none", StrategyKind::None, "", false},
    {"all", StrategyKind::All, "", false},
    {"collection", StrategyKind::Collection, "", false},
    {"names", StrategyKind::Names, "SUBSTR,...", true},
    {"speed", StrategyKind::Speed, "", false},
    {"memory", StrategyKind::Memory, "", false},
    {"sqrtn", StrategyKind::SqrtN, "", false},
    {"regions", StrategyKind::Regions, "PATH,...", false},
};

const StrategySpelling &spellingOf(StrategyKind kind) {
  for (const StrategySpelling &spelling : kSpellings)
    if (spelling.kind == kind)
      return spelling;
  llvm_unreachable("every strategy kind has a spelling");
}

absl::Status unknownStrategy(llvm::StringRef text) {
  return invalidArgument("unknown strategy '{}' (known: {})", text.str(),
                         fmt::join(strategySpellings(), ", "));
}

} // namespace

absl::StatusOr<Strategy> Strategy::parse(llvm::StringRef text) {
  auto [name, list] = text.split('=');
  bool hasList = name.size() != text.size();
  const StrategySpelling *spelling = nullptr;
  for (const StrategySpelling &candidate : kSpellings)
    if (candidate.name == name)
      spelling = &candidate;
  if (!spelling)
    return unknownStrategy(text);

  Strategy strategy;
  strategy.kind = spelling->kind;
  if (spelling->listPlaceholder.empty()) {
    if (hasList)
      return invalidArgument("strategy '{}' takes no list, got '{}'",
                             name.str(), text.str());
    return strategy;
  }
  if (!hasList) {
    if (spelling->needsList)
      return invalidArgument("strategy '{}' needs a list: {}={}", name.str(),
                             name.str(), spelling->listPlaceholder.str());
    return strategy;
  }
  llvm::SmallVector<llvm::StringRef, 4> items;
  list.split(items, ',');
  for (llvm::StringRef item : items) {
    if (item.empty())
      return invalidArgument("strategy '{}' has an empty item in '{}'",
                             name.str(), text.str());
    strategy.names.push_back(item.str());
  }
  return strategy;
}

std::string Strategy::str() const {
  std::string text = spellingOf(kind).name.str();
  if (!names.empty())
    text += "=" + llvm::join(names, ",");
  return text;
}

std::vector<std::string> strategySpellings() {
  std::vector<std::string> spellings;
  for (const StrategySpelling &spelling : kSpellings) {
    if (!spelling.needsList)
      spellings.push_back(spelling.name.str());
    if (!spelling.listPlaceholder.empty())
      spellings.push_back(fmt::format("{}={}", spelling.name.str(),
                                      spelling.listPlaceholder.str()));
  }
  return spellings;
}

namespace strategies {

Candidates findCandidates(const Graph &forward) {
  Candidates candidates{
      {}, ValueSet(forward.valueIdBound()), OpSet(forward.opIdBound())};
  if (forward.outputs().empty())
    return candidates;
  const Value *loss = forward.outputs()[0];

  // Data edges only: a control dependency carries no value to keep.
  WalkOptions towardsLoss;
  towardsLoss.followControl = false;
  WalkResult feedsLoss = backwardWalk(forward, {loss->producer()}, towardsLoss);
  std::vector<Op *> leaves;
  for (const Op &op : forward.ops())
    if (op.hasFlag(OpFlagLeaf))
      leaves.push_back(const_cast<Op *>(&op));
  WalkOptions fromLeaves;
  fromLeaves.followControl = false;
  fromLeaves.within = &feedsLoss.set;
  WalkResult onPath = forwardWalk(forward, leaves, fromLeaves);

  // A value lies on a path when an on-path op reads it; producers of
  // operands of on-path ops are in `feedsLoss`, but only those reached from a
  // leaf are on a path from one.
  ValueSet readOnPath(forward.valueIdBound());
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

} // namespace strategies

namespace {

using strategies::Candidates;

CheckpointPlan selectCollection(const Graph &forward,
                                const Candidates &candidates) {
  ValueSet chosen(forward.valueIdBound());
  for (const Value *member : forward.collection("checkpoints"))
    chosen.set(member->id());
  for (const Value *value : candidates.values)
    if (value->producer()->kind() == "checkpoint")
      chosen.set(value->id());
  return {strategies::keepChosen(candidates, chosen), {}};
}

absl::StatusOr<CheckpointPlan> selectNames(const Graph &forward,
                                           const Candidates &candidates,
                                           llvm::ArrayRef<std::string> names) {
  llvm::BitVector matchesSome(names.size());
  for (const Op &op : forward.ops())
    for (unsigned r = 0, e = op.numResults(); r < e; ++r)
      for (size_t i = 0; i < names.size(); ++i)
        if (op.result(r)->name().contains(names[i]))
          matchesSome.set(i);
  for (size_t i = 0; i < names.size(); ++i)
    if (!matchesSome.test(i))
      return invalidArgument("strategy 'names': '{}' matches no value",
                             names[i]);

  CheckpointPlan plan;
  for (Value *value : candidates.values)
    if (llvm::any_of(names, [&](const std::string &name) {
          return value->name().contains(name);
        }))
      plan.kept.push_back(value);
  return plan;
}

CheckpointPlan selectSpeed(const Candidates &candidates) {
  CheckpointPlan plan;
  for (Value *value : candidates.values)
    if (value->producer()->hasFlag(OpFlagExpensive))
      plan.kept.push_back(value);
  return plan;
}

} // namespace

absl::StatusOr<CheckpointPlan> selectCheckpoints(const Graph &forward,
                                                 const Strategy &strategy) {
  Candidates candidates = strategies::findCandidates(forward);
  switch (strategy.kind) {
  case StrategyKind::None:
    return CheckpointPlan{candidates.values, {}};
  case StrategyKind::All:
    return CheckpointPlan{};
  case StrategyKind::Collection:
    return selectCollection(forward, candidates);
  case StrategyKind::Names:
    return selectNames(forward, candidates, strategy.names);
  case StrategyKind::Speed:
    return selectSpeed(candidates);
  case StrategyKind::Memory:
    return strategies::selectMemory(forward, candidates);
  case StrategyKind::SqrtN:
    return strategies::selectSqrtN(candidates);
  case StrategyKind::Regions:
    return strategies::selectRegions(forward, candidates, strategy.names);
  }
  llvm_unreachable("every strategy kind is handled");
}

} // namespace remat

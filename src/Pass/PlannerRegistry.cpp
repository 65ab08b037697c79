//===- PlannerRegistry.cpp - Planners by name -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Pass/Planner.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <fmt/format.h>

#include <cassert>

namespace remat {

bool PlanningProblem::isForward(const Op &op) const {
  return op.id() < forwardOpIdBound;
}

const PlannerRegistry &PlanningProblem::plannerRegistry() const {
  return registry ? *registry : PlannerRegistry::global();
}

Planner::~Planner() = default;

absl::StatusOr<std::optional<std::string>>
Planner::repeats(const PlanningProblem &) {
  return std::nullopt;
}

std::function<std::vector<AutoCandidate>(const Graph &)>
autoTriesOnce(std::string spelling, int rank) {
  return [spelling = std::move(spelling), rank](const Graph &) {
    return std::vector<AutoCandidate>{{spelling, rank}};
  };
}

PlannerRegistry &PlannerRegistry::global() {
  static PlannerRegistry *registry = [] {
    auto *r = new PlannerRegistry();
    registerAllPlanners(*r);
    return r;
  }();
  return *registry;
}

void PlannerRegistry::add(PlannerInfo info) {
  assert(!byName_.count(info.name) && "planner registered twice");
  planners_.push_back(std::make_unique<PlannerInfo>(std::move(info)));
  byName_[planners_.back()->name] = planners_.back().get();
}

const PlannerInfo *PlannerRegistry::lookup(llvm::StringRef name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

std::vector<const PlannerInfo *> PlannerRegistry::all() const {
  std::vector<const PlannerInfo *> result;
  for (const auto &info : planners_)
    result.push_back(info.get());
  return result;
}

std::vector<std::string> PlannerRegistry::spellings() const {
  std::vector<std::string> spellings;
  for (const auto &info : planners_) {
    if (!info->needsArgument)
      spellings.push_back(info->name);
    if (!info->argument.empty())
      spellings.push_back(fmt::format("{}={}", info->name, info->argument));
  }
  return spellings;
}

const PlannerInfo *PlannerRegistry::lookupSpelling(llvm::StringRef text) const {
  return lookup(text.split('=').first);
}

std::vector<std::string> PlannerRegistry::ilpWarmStarts() const {
  std::vector<std::string> starts;
  for (const auto &info : planners_)
    llvm::append_range(starts, info->search.ilpWarmStarts);
  return starts;
}

absl::StatusOr<std::unique_ptr<Planner>>
PlannerRegistry::create(llvm::StringRef text) const {
  auto [name, argument] = text.split('=');
  bool hasArgument = name.size() != text.size();
  const PlannerInfo *info = lookup(name);
  if (!info)
    return invalidArgument("unknown planner '{}' (known: {})", text.str(),
                           fmt::join(spellings(), ", "));
  if (info->argument.empty() && hasArgument)
    return invalidArgument("planner '{}' takes no list, got '{}'", name.str(),
                           text.str());
  if (info->needsArgument && !hasArgument)
    return invalidArgument("planner '{}' needs a list: {}={}", name.str(),
                           name.str(), info->argument);
  return info->factory(hasArgument ? std::optional(argument) : std::nullopt);
}

absl::StatusOr<RematPlan> planRematerialization(const PlanningProblem &problem,
                                                llvm::StringRef text) {
  REMAT_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner,
                         problem.plannerRegistry().create(text));
  return planner->plan(problem);
}

absl::StatusOr<RematPlan> planRematerialization(const Graph &forward,
                                                llvm::StringRef text) {
  PlanningProblem problem;
  problem.graph = &forward;
  problem.forwardOpIdBound = forward.opIdBound();
  return planRematerialization(problem, text);
}

absl::StatusOr<std::vector<std::string>>
splitPlannerList(llvm::StringRef planner, llvm::StringRef argument) {
  llvm::SmallVector<llvm::StringRef, 4> items;
  argument.split(items, ',');
  std::vector<std::string> result;
  for (llvm::StringRef item : items) {
    if (item.empty())
      return invalidArgument("planner '{}' has an empty item in '{}={}'",
                             planner.str(), planner.str(), argument.str());
    result.push_back(item.str());
  }
  return result;
}

} // namespace remat

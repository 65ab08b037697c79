//===- Planner.h - Rematerialization planners --------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A planner decides which forward values the backward pass reads from the
/// forward pass and which it recomputes. It is given a planning problem (the
/// training graph as autodiff and the memory-aware schedule left it, the
/// budget, a time limit) and returns a `RematPlan`, which the recompute
/// rewrite (remat/Pass/Recompute.h) realises. Planners are registered by
/// name; `--planner=NAME[=ARG]` and `--strategy=NAME[=ARG]` create them alike.
/// Adding one is a file with a `Planner` subclass and a line in
/// passes/Planning/Planners.def. See docs/strategies.md and
/// docs/planners.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_PLANNER_H
#define REMAT_PASS_PLANNER_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat {

class Graph;
class Op;
class PlannerRegistry;
class Value;

/// A region selected for recomputation.
struct RegionSpan {
  /// The region path, such as "block3/attn".
  std::string path;
  /// How many '/'-separated components enclose it among the selected regions
  /// (0 for an outermost one).
  unsigned depth = 0;
};

/// Copies of forward ops that run just before one op of the training graph.
/// From there on, every op (gradient ops, later forward ops and later copies)
/// reads the newest copy of each value instead of the original.
struct RecomputeStep {
  /// The op of the training graph the copies precede.
  Op *before = nullptr;
  /// The forward ops to recompute, each after every op of this list that it
  /// reads (the rewrite runs them in forward schedule order).
  std::vector<Op *> ops;
};

/// What a planner chose: either the forward values to keep (the rewrite
/// recomputes every other one the backward pass reads, one segment at a
/// time), or an explicit schedule of recomputations, in which a value may be
/// recomputed several times (Checkmate's R matrix, Revolve's nested sweeps).
struct RematPlan {
  /// The kept forward values, in schedule order, without leaves, constants
  /// and the loss. Unused with a schedule.
  std::vector<Value *> kept;
  /// For `regions`: the selected regions, outermost first, then by path.
  std::vector<RegionSpan> regions;
  /// An explicit schedule, steps in the order of their `before` ops. Forward
  /// values read where no step recomputed them are read from the forward
  /// pass, and so stay live until then.
  std::optional<std::vector<RecomputeStep>> schedule;
  /// Plain autodiff: the backward pass reads every forward value it needs
  /// from the forward pass and there is nothing to rewrite (`none`).
  bool plain = false;

  /// What the planner knows of its plan, for the report.
  /// The proven relative gap to the optimal recompute cost (0: optimal).
  std::optional<double> optimalityGap;
  /// The peak the planner's own model gives the plan, where it has one (the
  /// chain DP's, XLA's walk's, the min-cut's estimate); above the budget it
  /// was told when nothing fitted there.
  std::optional<int64_t> modelledPeakBytes;
  /// One-line remarks for the user (a plan that saves nothing, a time limit
  /// reached).
  std::vector<std::string> warnings;
  /// One-line remarks that the plan misses the budget by its planner's own
  /// model (`ap-greedy: no segment schedule fits ...`). The built graph is
  /// what counts: they reach the user only when it misses the budget too.
  std::vector<std::string> budgetNotes;
};

/// What a planner is asked to plan.
struct PlanningProblem {
  /// The training graph: ops with an id below `forwardOpIdBound` are the
  /// forward pass (loss = output 0) in its own order, the rest its gradient
  /// ops as `differentiate` appended them (not yet scheduled for memory).
  const Graph *graph = nullptr;
  unsigned forwardOpIdBound = 0;
  /// The most bytes the final graph may hold; none when not given.
  std::optional<int64_t> budgetBytes;
  /// How long a planner that searches may take (a soft limit).
  double timeLimitSeconds = 60;
  /// Progress lines for stderr; may be empty.
  std::function<void(llvm::StringRef)> onProgress;
  /// Where a planner that runs others (the ILP's warm starts) finds them
  /// (`plannerRegistry()`); null: `PlannerRegistry::global()`.
  const PlannerRegistry *registry = nullptr;

  bool isForward(const Op &op) const;
  const PlannerRegistry &plannerRegistry() const;
};

/// A planner may be asked to plan one graph, unchanged, at several budgets
/// (the budget search's calibration does): it may keep between calls what
/// does not depend on the budget, as `chain` keeps its block chain. A
/// changed graph gets a new planner.
class Planner {
public:
  virtual ~Planner();
  virtual absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) = 0;
  /// The spelling of another planner whose plans of `problem`'s graph this
  /// one repeats at every budget, where it knows one (`chain=40` repeats
  /// `chain` on a chain of at most 32 blocks): `auto` then tries only that
  /// one. None by default.
  virtual absl::StatusOr<std::optional<std::string>>
  repeats(const PlanningProblem &problem);
};

/// One spelling `auto` tries (`sqrtn=4`), and when.
struct AutoCandidate {
  std::string spelling;
  /// `auto` tries candidates by ascending rank, in registration order among
  /// equal ranks. An earlier candidate wins a tie, so the ranks are part of
  /// the output: the built-in planners' stand side by side in
  /// passes/Planning/Planners.def.
  int rank = 0;
  /// Whether `auto` tries it on a joint graph partitioned for PyTorch
  /// (`buildJointTrainingGraph`), which AOT Autograd and Inductor run in
  /// their own order.
  bool onJointGraphs = true;
};

/// What the budget search (`auto`, remat/Training/Training.h) needs to know
/// of a planner: the facts it declares instead of lists kept elsewhere.
struct PlannerSearchInfo {
  /// Plans for the budget it is told (`chain`, `ilp`): a sweep, which tells
  /// no budget, leaves it out; a search at the lowest peak asks it again.
  bool takesBudget = false;
  /// With `takesBudget`: whether a sweep asks it at each of its budgets
  /// (not the ILP, whose solves take seconds each).
  bool sweptAtBudgets = true;
  /// Plans against its own model of memory (`chain`): a budget the user
  /// gives it is shifted until the built graph's simulated peak meets it.
  bool modelsMemory = false;
  /// `auto` calibrates the budget it tells the planner, as a modelled
  /// planner's: heuristics that estimate their own peak (XLA's walk, the
  /// min-cut's knapsack) land elsewhere and are not monotone in it.
  bool calibratedInSearch = false;
  /// Its spellings among `auto`'s candidates for the forward graph `graph`;
  /// unset: `auto` never tries it.
  std::function<std::vector<AutoCandidate>(const Graph &graph)>
      autoCandidates;
  /// Spellings whose schedules may warm-start the ILP (planners that plan
  /// recompute steps, not kept values).
  std::vector<std::string> ilpWarmStarts;
};

/// The `PlannerSearchInfo::autoCandidates` of a planner that `auto` tries
/// once on every graph, spelled `spelling`, at `rank`.
std::function<std::vector<AutoCandidate>(const Graph &)>
autoTriesOnce(std::string spelling, int rank);

/// How a planner is spelled and made.
struct PlannerInfo {
  std::string name;
  std::string summary;
  /// The placeholder of `name=ARG` (`SEGMENTS`, `SUBSTR,...`); empty when the
  /// planner takes no argument.
  std::string argument;
  /// Whether `name` alone is rejected.
  bool needsArgument = false;
  /// Makes the planner from the text after `=`, if any.
  std::function<absl::StatusOr<std::unique_ptr<Planner>>(
      std::optional<llvm::StringRef>)>
      factory;
  PlannerSearchInfo search;
};

class PlannerRegistry {
public:
  /// The process-wide registry holding every built-in planner.
  static PlannerRegistry &global();

  /// Adds a planner; the name must be new (asserted: a programming error).
  void add(PlannerInfo info);
  /// The planner named `name`, or null.
  const PlannerInfo *lookup(llvm::StringRef name) const;
  /// Every planner, in registration order.
  std::vector<const PlannerInfo *> all() const;
  /// `name` and `name=ARG` of every planner, for help and errors.
  std::vector<std::string> spellings() const;
  /// The planner `text` spells (`sqrtn=4`: `sqrtn`), or null.
  const PlannerInfo *lookupSpelling(llvm::StringRef text) const;
  /// Every planner's `PlannerSearchInfo::ilpWarmStarts`, in registration
  /// order.
  std::vector<std::string> ilpWarmStarts() const;

  /// Creates the planner `text` spells (`sqrtn`, `sqrtn=4`, `names=a,b`).
  /// Errors name an unknown planner and list the known ones, or reject a
  /// missing or unexpected argument.
  absl::StatusOr<std::unique_ptr<Planner>> create(llvm::StringRef text) const;

private:
  std::vector<std::unique_ptr<PlannerInfo>> planners_;
  llvm::StringMap<const PlannerInfo *> byName_;
};

/// Adds every planner of passes/Planning/Planners.def, in its order.
void registerAllPlanners(PlannerRegistry &registry);

/// Creates the planner `text` spells from the problem's registry and runs it.
absl::StatusOr<RematPlan> planRematerialization(const PlanningProblem &problem,
                                                llvm::StringRef text);

/// Plans on a forward graph alone, before autodiff (loss = output 0), for
/// `recomputeGradients` (remat/Pass/Recompute.h): the kept-value planners
/// choose the same values there as after autodiff.
absl::StatusOr<RematPlan> planRematerialization(const Graph &forward,
                                                llvm::StringRef text);

/// Splits a planner's `a,b,c` argument, rejecting empty items; `planner`
/// names it in errors.
absl::StatusOr<std::vector<std::string>>
splitPlannerList(llvm::StringRef planner, llvm::StringRef argument);

} // namespace remat

#endif // REMAT_PASS_PLANNER_H

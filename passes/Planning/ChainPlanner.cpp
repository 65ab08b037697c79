//===- ChainPlanner.cpp - The `chain` planner -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--planner=chain[=STAGES][,late]` (`chain=late` too) with a budget: the
/// forward pass cut at its bottlenecks into at most STAGES blocks
/// (Chain/BlockChain.h), the cheapest schedule of that chain within the
/// budget by dynamic programming (Chain/ChainDp.h), a stage's forward runs
/// whole or lean (its backward rebuilding part of what it saves,
/// Chain/LeanRuns.h), realised as recompute steps. Planning time depends on
/// the stage count, not the op count: O(STAGES^3 * slots) for the DP (times
/// the few runs a stage offers) on top of one linear walk. The chain model
/// counts a block's temporaries in plain autodiff's order, and the final
/// graph is scheduled again, so `auto` shifts the budget it gives this
/// planner until the built graph fits (docs/planning-chain.md#on-a-graph).
///
//===----------------------------------------------------------------------===//

#include "Planning/ApBaselines.h"
#include "Planning/Chain/BlockChain.h"
#include "Planning/Planners.h"

#include "remat/Analysis/Memory.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <fmt/format.h>

#include <algorithm>

namespace remat::planners {
namespace {

/// Stages and memory slots of the DP by default: its time does not grow
/// with the graph's size (docs/planners.md#chain has it).
constexpr int kDefaultStages = 32;
constexpr int64_t kDefaultSlots = 512;

/// The storage owners of the gradient outputs, each once, in output order.
std::vector<const Value *> gradientOutputs(const PlanningProblem &problem) {
  llvm::SmallPtrSet<const Value *, 16> seen;
  std::vector<const Value *> owners;
  for (const Value *output : problem.graph->outputs()) {
    const Value *owner = storageOwner(output);
    if (!problem.isForward(*owner->producer()) && seen.insert(owner).second)
      owners.push_back(owner);
  }
  return owners;
}

/// `problem` with every parameter gradient held throughout, as a constant.
chain::ChainProblem holdParamGradients(chain::ChainProblem problem) {
  for (chain::ChainStage &stage : problem.stages) {
    problem.constantBytes += stage.paramGradientBytes;
    stage.paramGradientBytes = 0;
  }
  return problem;
}

/// The schedule of least modelled peak, from a table wide enough to keep
/// everything (`validateChain` has checked that this total fits int64),
/// without lean runs or temporaries and with the parameter gradients held
/// throughout: the budget search lands here when a plan's final peak came
/// out over the model (full runs are modelled closest; gradients counted
/// early leave room for what the chain misses). Temporaries add to a
/// stage's steps wherever it runs: with them the steps of a few stages set
/// the peak and the schedules below it look alike to the DP; without, it
/// lowers what every step holds (docs/planning-chain.md#late-runs).
absl::StatusOr<chain::ChainResult>
solveForLowestPeak(const chain::ChainProblem &problem,
                   const chain::DpOptions &options) {
  chain::ChainProblem wide = holdParamGradients(problem);
  wide.budgetBytes = wide.constantBytes;
  for (chain::ChainStage &stage : wide.stages) {
    stage.leanRuns.clear();
    stage.forwardTempBytes = 0;
    stage.backwardTempBytes = 0;
    if (stage.late)
      stage.late->forwardBytes = 0;
    wide.budgetBytes +=
        stage.savedBytes + stage.outputBytes + stage.gradientBytes;
  }
  chain::DpOptions oldSlots = options;
  oldSlots.fitSlots = false;
  return chain::solveChainDpLowestPeak(wide, oldSlots);
}

/// ", N lean runs" when the schedule has any (docs/planning-chain.md).
std::string leanRunsNote(const chain::ChainSchedule &schedule) {
  int64_t lean = llvm::count_if(schedule.ops, [](const chain::ChainOp &op) {
    return op.run > 0;
  });
  return lean > 0 ? fmt::format(", {} lean runs", lean) : std::string();
}

/// What `chain=...` says: the stage count and whether parameter gradients
/// count from their backward from the start (`late`).
struct ChainPlannerOptions {
  int maxStages = kDefaultStages;
  bool lateGradients = false;
};

class ChainPlanner : public Planner {
public:
  explicit ChainPlanner(ChainPlannerOptions options) : options_(options) {}

  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    if (!problem.budgetBytes)
      return invalidArgument("planner 'chain' needs a budget (--budget=SIZE)");
    REMAT_RETURN_IF_ERROR(prepare(problem));
    const problem::GraphProblem &graph = nodes_.get(problem);
    RematPlan plan;
    if (!prepared_->blocks) {
      plan.plain = true;
      plan.warnings.push_back("chain: the graph has no forward op to "
                              "recompute; keeping every value");
      return plan;
    }
    chain::BlockChain blocks = *prepared_->blocks;
    blocks.problem.budgetBytes = *problem.budgetBytes;
    chain::DpOptions options;
    options.maxSlots = kDefaultSlots;
    // Parameter gradients held throughout leave room for what the chain
    // misses early in the backward pass (docs/planning-chain.md): unless
    // told `late`, counted from their backward only where holding them
    // admits no schedule.
    chain::ChainProblem held = holdParamGradients(blocks.problem);
    bool late = options_.lateGradients;
    REMAT_ASSIGN_OR_RETURN(
        chain::ChainResult result,
        chain::solveChainDp(late ? blocks.problem : held, options));
    if (!late && result.status == chain::ChainStatusKind::Infeasible &&
        held.constantBytes != blocks.problem.constantBytes) {
      late = true;
      REMAT_ASSIGN_OR_RETURN(result,
                             chain::solveChainDp(blocks.problem, options));
    }
    late &= held.constantBytes != blocks.problem.constantBytes;
    const chain::ChainProblem &solved = late ? blocks.problem : held;
    if (problem.onProgress)
      problem.onProgress(fmt::format(
          "chain: {} bottleneck blocks in {} stages, {} slots of {}; {}{}{}",
          blocks.numBlocks, blocks.problem.stages.size(),
          std::max<int64_t>(
              0, (solved.budgetBytes - solved.constantBytes) /
                     result.slotBytes),
          formatBytes(result.slotBytes),
          result.status == chain::ChainStatusKind::Optimal
              ? fmt::format("modelled peak {}, recompute {} FLOPs",
                            formatBytes(result.cost.peakBytes),
                            result.cost.recomputeCost)
              : std::string("no schedule fits"),
          leanRunsNote(result.schedule),
          late && result.status == chain::ChainStatusKind::Optimal
              ? ", parameter gradients counted from their backward"
              : ""));

    plan.modelledPeakBytes = result.cost.peakBytes;
    if (result.status == chain::ChainStatusKind::Infeasible) {
      // It does not depend on the budget: solved once per graph.
      if (!prepared_->lowestPeak) {
        REMAT_ASSIGN_OR_RETURN(prepared_->lowestPeak,
                               solveForLowestPeak(blocks.problem, options));
      }
      result = *prepared_->lowestPeak;
      if (result.status == chain::ChainStatusKind::Infeasible) {
        plan.plain = true;
        plan.budgetNotes.push_back("chain: no schedule fits by its model; "
                                "keeping every value");
        return plan;
      }
      plan.budgetNotes.push_back(fmt::format(
          "chain: no schedule of the {}-stage chain fits in {} by its model "
          "(constants {}); planned for its lowest modelled peak, {}",
          blocks.problem.stages.size(), formatBytes(*problem.budgetBytes),
          formatBytes(held.constantBytes),
          formatBytes(result.cost.peakBytes)));
      // The fallback's peak by the model the planner plans with, which
      // counts temporaries.
      REMAT_ASSIGN_OR_RETURN(
          chain::ChainCost modelled,
          chain::evaluateChainSchedule(solved, result.schedule));
      plan.modelledPeakBytes = modelled.peakBytes;
    }
    std::vector<RecomputeStep> steps =
        chain::stepsOfChain(graph, blocks, result.schedule);
    if (steps.empty())
      plan.plain = true;
    else
      plan.schedule = std::move(steps);
    return plan;
  }

  /// `chain=STAGES` repeats `chain` where neither merges blocks.
  absl::StatusOr<std::optional<std::string>>
  repeats(const PlanningProblem &problem) override {
    if (options_.maxStages == kDefaultStages)
      return std::nullopt;
    REMAT_RETURN_IF_ERROR(prepare(problem));
    if (!prepared_->blocks ||
        prepared_->blocks->numBlocks >
            std::min(options_.maxStages, kDefaultStages))
      return std::nullopt;
    return std::string(options_.lateGradients ? "chain=late" : "chain");
  }

private:
  /// What planning a graph costs whatever the budget, beyond its nodes,
  /// kept for the next plan of the same graph: its chain of blocks, when it
  /// has forward nodes.
  struct Prepared {
    std::optional<chain::BlockChain> blocks;
    /// `solveForLowestPeak` of `blocks`, once a budget needed it.
    std::optional<chain::ChainResult> lowestPeak;
  };

  absl::Status prepare(const PlanningProblem &problem) {
    bool fresh = false;
    const problem::GraphProblem &nodes = nodes_.get(problem, &fresh);
    if (prepared_ && !fresh)
      return absl::OkStatus();
    prepared_.reset();
    Prepared prepared;
    if (problem::numForward(nodes.problem) > 0) {
      REMAT_ASSIGN_OR_RETURN(prepared.blocks,
                             chain::buildBlockChain(nodes,
                                                    gradientOutputs(problem),
                                                    options_.maxStages));
    }
    prepared_ = std::move(prepared);
    return absl::OkStatus();
  }

  ChainPlannerOptions options_;
  problem::GraphProblemCache nodes_;
  std::optional<Prepared> prepared_;
};

/// Parses the text after `chain=`: a stage count from 1 to 1000 and
/// `late`, each at most once, comma-separated.
absl::StatusOr<ChainPlannerOptions>
parseChainOptions(llvm::StringRef argument) {
  REMAT_ASSIGN_OR_RETURN(std::vector<std::string> items,
                         splitPlannerList("chain", argument));
  ChainPlannerOptions options;
  bool sawStages = false;
  for (llvm::StringRef item : items) {
    bool &seen = item == "late" ? options.lateGradients : sawStages;
    if (seen)
      return invalidArgument("planner 'chain' takes one stage count and "
                             "'late' at most once, got 'chain={}'",
                             argument.str());
    seen = true;
    if (item == "late")
      continue;
    if (item.getAsInteger(10, options.maxStages) || options.maxStages < 1 ||
        options.maxStages > 1000)
      return invalidArgument("planner 'chain' takes a stage count from "
                             "1 to 1000, got 'chain={}'",
                             argument.str());
  }
  return options;
}

} // namespace

/// A second grouping of the block chain for `auto`, finer than the default
/// 32 stages: boundaries elsewhere, and within a few slots of a budget more
/// of them fit (docs/benchmarks.md, `mlp --layers=1000` at 50%). The DP's
/// time grows as stages cubed: (40/32)^3, about twice the default's.
constexpr int kFinerStages = 40;

void registerChainPlanner(PlannerRegistry &registry) {
  PlannerInfo info{
       .name = "chain",
       .summary =
           "Optimal schedule of the chain of blocks between bottlenecks "
           "within the budget (dynamic programming over at most STAGES "
           "stages, each forward run keeping all it saves or, lean, part of "
           "it; 'late' counts parameter gradients from the backward that "
           "makes them)",
       .argument = "STAGES",
       .factory = [](std::optional<llvm::StringRef> argument)
           -> absl::StatusOr<std::unique_ptr<Planner>> {
         ChainPlannerOptions options;
         if (argument) {
           REMAT_ASSIGN_OR_RETURN(options, parseChainOptions(*argument));
         }
         return std::make_unique<ChainPlanner>(options);
       }};
  info.search.takesBudget = true;
  info.search.modelsMemory = true;
  info.search.calibratedInSearch = true;
  info.search.autoCandidates = [](const Graph &) {
    return std::vector<AutoCandidate>{
        {"chain", autorank::Chain},
        {"chain=late", autorank::ChainLate},
        {fmt::format("chain={}", kFinerStages), autorank::ChainFiner}};
  };
  info.search.ilpWarmStarts = {"chain", "chain=late"};
  registry.add(std::move(info));
}

} // namespace remat::planners

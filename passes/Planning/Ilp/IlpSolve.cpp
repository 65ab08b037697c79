//===- IlpSolve.cpp - Solving the Checkmate MILP on CBC -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The relaxation of LowerBound.cpp first, settling the problem where its
/// rounded schedule meets its bound; then CBC's standard driver
/// (preprocessing, cuts, heuristics) on the model of IlpModel.cpp: time
/// limit, gap, seeds, warm start, progress events, and the outcome checked
/// against the exact memory accounting.
///
//===----------------------------------------------------------------------===//

#include "CheckmateIlp.h"
#include "IlpInternal.h"

#include "remat/Support/Status.h"

#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <cmath>
#include <cstdio>
#include <string>

namespace remat::ilp {

/// Names every column and returns `schedule` as a MIP start by those names:
/// CBC's driver fixes its integers and completes U and FREE by an LP.
static std::vector<std::pair<std::string, double>>
mipStart(const RematProblem &problem, const RematDag &dag,
         const IlpModel &model, const RematSchedule &schedule) {
  auto name = [](int column) { return fmt::format("x{}", column); };
  model.solver->setIntParam(OsiNameDiscipline, 1);
  for (int column = 0; column < model.columns->numColumns(); ++column)
    model.solver->setColName(column, name(column));
  std::vector<std::pair<std::string, double>> start;
  for (auto [column, value] :
       scheduleColumns(problem, dag, *model.columns, schedule))
    start.emplace_back(name(column), value);
  return start;
}

double gapOf(double cost, double bound) {
  return cost > 0 ? (cost - bound) / cost : 0.0;
}

double integerBound(double bound) {
  return std::max(0.0, std::ceil(bound - 1e-6));
}

double linearBound(double optimum) {
  return integerBound(optimum - 1e-9 * std::abs(optimum));
}

/// The outcome of a run, its schedule checked exactly.
static absl::StatusOr<IlpResult> readResult(const RematProblem &problem,
                                            const IlpColumns &columns,
                                            const CbcOutcome &cbc) {
  IlpResult result;
  result.nodes = cbc.nodes;
  result.solverFailure = cbc.failure;
  if (cbc.values.empty()) {
    result.status = cbc.provenInfeasible ? IlpStatusKind::Infeasible
                                         : IlpStatusKind::NoSolution;
    return result;
  }
  result.schedule = columnsSchedule(problem, columns, cbc.values.data());
  absl::StatusOr<ScheduleCost> cost = checkSchedule(problem, result.schedule);
  if (!cost.ok())
    return absl::InternalError(
        fmt::format("ilp: cbc's solution fails the exact check: {}",
                    std::string(cost.status().message())));
  result.cost = *cost;
  result.status =
      cbc.provenOptimal ? IlpStatusKind::Optimal : IlpStatusKind::Feasible;
  double recompute = double(result.cost.recomputeCost);
  result.bestBound = std::min(integerBound(cbc.bound), recompute);
  result.gap = gapOf(recompute, result.bestBound);
  return result;
}

/// `result`, or the warm start where CBC ended with nothing better: a start
/// that passes the exact check is a schedule within the budget, whatever
/// CBC's status (stopped in preprocessing, which it may report as
/// infeasible, or having dropped the start).
static void keepWarmStartIfBetter(IlpResult &result,
                                  const RematSchedule &start,
                                  const ScheduleCost &startCost) {
  bool found = result.status == IlpStatusKind::Optimal ||
               result.status == IlpStatusKind::Feasible;
  if (found && result.cost.recomputeCost <= startCost.recomputeCost)
    return;
  double cost = double(startCost.recomputeCost);
  double bound = found ? std::min(result.bestBound, cost) : 0.0;
  result.status = IlpStatusKind::Feasible;
  result.schedule = start;
  result.cost = startCost;
  result.bestBound = bound;
  result.gap = gapOf(cost, bound);
}

/// Raises `result`'s bound to the relaxation's; a schedule that meets it is
/// optimal.
static void tightenBound(IlpResult &result, double bound) {
  bool found = result.status == IlpStatusKind::Optimal ||
               result.status == IlpStatusKind::Feasible;
  if (!found)
    return;
  double cost = double(result.cost.recomputeCost);
  result.bestBound = std::min(std::max(result.bestBound, bound), cost);
  result.gap = gapOf(cost, result.bestBound);
  if (result.gap == 0)
    result.status = IlpStatusKind::Optimal;
}

/// How many times the relaxation is solved again at a lower budget when its
/// solution, rounded, does not fit.
constexpr int kMaxTightenings = 3;

absl::StatusOr<IlpResult> solveCheckmateIlp(const RematProblem &problem,
                                            const IlpOptions &options) {
  REMAT_RETURN_IF_ERROR(validateProblem(problem));
  std::optional<RematSchedule> start = options.warmStart;
  std::optional<ScheduleCost> startCost;
  if (start) {
    absl::StatusOr<ScheduleCost> cost = checkSchedule(problem, *start);
    if (!cost.ok())
      return invalidArgument("ilp warm start: {}",
                             std::string(cost.status().message()));
    startCost = *cost;
  }
  if (problem.nodes.empty()) {
    IlpResult result;
    result.status = problem.constantBytes > problem.budgetBytes
                        ? IlpStatusKind::Infeasible
                        : IlpStatusKind::Optimal;
    result.cost.peakBytes = problem.constantBytes;
    return result;
  }

  RematDag dag = buildDag(problem);
  REMAT_ASSIGN_OR_RETURN(RecomputeBound lower,
                         recomputeLowerBound(problem, options));
  // The relaxation's solution, each node recomputed once, often fits.
  // Where it does not, the relaxation at a budget lowered by the overshoot
  // chooses more to recompute, a few times; only the first one's bound holds.
  std::string failure = lower.solverFailure;
  RematProblem tightened = problem;
  llvm::BitVector chosen = lower.recomputed;
  for (int attempt = 0; chosen.any(); ++attempt) {
    auto rounded = fitRecomputeOnce(problem, dag, chosen);
    if (rounded) {
      if (!startCost ||
          rounded->second.recomputeCost < startCost->recomputeCost) {
        start = std::move(rounded->first);
        startCost = rounded->second;
      }
      break;
    }
    absl::StatusOr<ScheduleCost> once =
        evaluateSchedule(problem, recomputeOnceSchedule(problem, dag, chosen));
    if (attempt == kMaxTightenings || !once.ok() ||
        once->peakBytes <= problem.budgetBytes ||
        once->peakBytes - problem.budgetBytes >
            tightened.budgetBytes - problem.constantBytes)
      break;
    tightened.budgetBytes -= once->peakBytes - problem.budgetBytes;
    REMAT_ASSIGN_OR_RETURN(RecomputeBound next,
                           recomputeLowerBound(tightened, options));
    chosen = next.recomputed;
    if (failure.empty())
      failure = next.solverFailure;
  }
  if (options.onProgress) {
    IlpProgress progress;
    progress.bound = lower.bound;
    if (startCost) {
      progress.incumbent = double(startCost->recomputeCost);
      progress.gap = gapOf(*progress.incumbent, lower.bound);
    }
    options.onProgress(progress);
  }
  if (lower.infeasible) {
    IlpResult result;
    result.status = IlpStatusKind::Infeasible;
    result.settledByBound = true;
    result.solverFailure = failure;
    return result;
  }
  // A start that costs the relaxation's bound is optimal: no MILP.
  if (startCost && double(startCost->recomputeCost) <= lower.bound) {
    IlpResult result;
    result.status = IlpStatusKind::Optimal;
    result.schedule = *start;
    result.cost = *startCost;
    result.bestBound = double(startCost->recomputeCost);
    result.settledByBound = true;
    result.solverFailure = failure;
    return result;
  }
  int64_t columns =
      options.searchMilp ? IlpColumns(problem, dag).totalColumns() : 0;
  std::string skipped =
      columns > kMaxMilpColumns
          ? fmt::format("the MILP of {} nodes would have {} columns, more "
                        "than the {} it is built with",
                        problem.nodes.size(), columns, kMaxMilpColumns)
          : std::string();
  if (options.searchMilp && start &&
      (options.neighborhoods || !skipped.empty())) {
    IlpOptions searchOptions = options;
    searchOptions.timeLimitSeconds =
        std::max(options.timeLimitSeconds - lower.seconds,
                 options.timeLimitSeconds / 4);
    IlpResult result = searchNeighborhoods(problem, dag, *start, *startCost,
                                           lower.bound, searchOptions);
    if (result.solverFailure.empty())
      result.solverFailure = failure;
    result.milpSkipped = skipped;
    return result;
  }
  // Windows without a start to search from: the relaxation's outcome, as
  // without the MILP.
  if (!options.searchMilp || !skipped.empty() || options.neighborhoods) {
    IlpResult result;
    if (start)
      keepWarmStartIfBetter(result, *start, *startCost);
    tightenBound(result, lower.bound);
    result.solverFailure = failure;
    result.milpSkipped = skipped;
    return result;
  }
  REMAT_ASSIGN_OR_RETURN(IlpModel model, buildIlpModel(problem, dag));
  model.solver->messageHandler()->setLogLevel(options.logLevel);
  model.solver->messageHandler()->setFilePointer(stderr);
  std::vector<std::pair<std::string, double>> mipStartValues;
  if (start)
    mipStartValues = mipStart(problem, dag, model, *start);

  CbcModel cbc(*model.solver);
  cbc.messageHandler()->setFilePointer(stderr);
  CbcMain0(cbc);
  cbc.setLogLevel(options.logLevel);
  if (!mipStartValues.empty())
    cbc.setMIPStart(mipStartValues);
  IlpOptions milpOptions = options;
  milpOptions.timeLimitSeconds = std::max(
      options.timeLimitSeconds - lower.seconds, options.timeLimitSeconds / 4);
  REMAT_ASSIGN_OR_RETURN(
      IlpResult result,
      readResult(problem, *model.columns, runCbc(cbc, milpOptions)));
  if (result.solverFailure.empty())
    result.solverFailure = failure;
  if (start)
    keepWarmStartIfBetter(result, *start, *startCost);
  tightenBound(result, lower.bound);
  return result;
}

} // namespace remat::ilp

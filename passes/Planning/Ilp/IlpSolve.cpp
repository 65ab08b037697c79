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

#include <coin/CbcEventHandler.hpp>
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <unistd.h>

namespace remat::ilp {
namespace {

/// Forwards CBC's search state to `IlpOptions::onProgress`: on every new
/// incumbent, otherwise at most once a second.
class ProgressHandler : public CbcEventHandler {
public:
  explicit ProgressHandler(const std::function<void(const IlpProgress &)> &sink)
      : sink_(sink) {}

  CbcEventHandler *clone() const override { return new ProgressHandler(*this); }

  CbcAction event(CbcEvent which) override {
    bool found = which == solution || which == heuristicSolution;
    if (!found && which != node && which != endSearch)
      return noAction;
    // Heuristics (RINS, proximity search) run sub-searches whose objective
    // is not the problem's.
    if (model_->parentModel())
      return noAction;
    double seconds = model_->getCurrentSeconds();
    if (!found && which == node && seconds < lastReport_ + 1.0)
      return noAction;
    lastReport_ = seconds;
    IlpProgress progress;
    progress.seconds = seconds;
    progress.bound = integerBound(model_->getBestPossibleObjValue());
    progress.nodes = model_->getNodeCount();
    if (model_->bestSolution()) {
      double incumbent = model_->getObjValue();
      progress.incumbent = incumbent;
      progress.gap = gapOf(incumbent, progress.bound);
    }
    sink_(progress);
    return noAction;
  }

private:
  std::function<void(const IlpProgress &)> sink_;
  double lastReport_ = -1.0;
};

/// CBC's driver prints parts of its log (the banner, preprocessing, the
/// search of the preprocessed model) on stdout, where remat writes its IR;
/// while the driver runs, file descriptor 1 points at stderr.
class StdoutToStderr {
public:
  StdoutToStderr() {
    std::cout.flush();
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    if (saved_ >= 0)
      dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~StdoutToStderr() {
    std::cout.flush();
    std::fflush(stdout);
    if (saved_ >= 0) {
      dup2(saved_, STDOUT_FILENO);
      close(saved_);
    }
  }

private:
  int saved_ = -1;
};

/// CBC's command line for `options`.
std::vector<std::string> driverArguments(const IlpOptions &options) {
  std::vector<std::string> arguments = {
      "remat-ilp", "-log", std::to_string(options.logLevel), "-timeMode",
      "elapsed", "-seconds", fmt::format("{}", options.timeLimitSeconds),
      "-ratioGap", fmt::format("{}", options.relativeGap), "-allowableGap", "0",
      "-threads", "0", "-randomSeed", std::to_string(options.seed),
      "-randomCbcSeed", std::to_string(options.seed),
      // Cuts at the root only: on MLPs Gomory and two-step MIR cuts lift
      // the root bound 2 to 5 times (the LP keeps fractions of every
      // activation); on uniform chains the bound is tight already, and
      // cuts in the tree slow the search down (docs/planning-ilp.md).
      "-cuts", "root", "-rins", "on", "-dins", "on", "-proximity", "on"};
  if (options.maxNodes)
    llvm::append_range(
        arguments, std::vector<std::string>{"-maxNodes",
                                            std::to_string(*options.maxNodes)});
  llvm::append_range(arguments, std::vector<std::string>{"-solve", "-quit"});
  return arguments;
}

} // namespace

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

bool runCbcDriver(CbcModel &cbc, const IlpOptions &options) {
  std::vector<std::string> arguments = driverArguments(options);
  std::vector<const char *> argv;
  for (const std::string &argument : arguments)
    argv.push_back(argument.c_str());
  auto start = std::chrono::steady_clock::now();
  {
    StdoutToStderr redirect;
    CbcMain1(int(argv.size()), argv.data(), cbc);
  }
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  return cbc.isSecondsLimitReached() || cbc.isNodeLimitReached() ||
         seconds.count() >= options.timeLimitSeconds;
}

/// The outcome of a finished run, its schedule checked exactly. A run that
/// reached a limit (time or nodes) proves nothing infeasible: stopped in its
/// root (preprocessing, cuts), CBC's driver may report infeasibility with no
/// search done (a cold 99-op MLP at 50% did, in 86 s against a 60 s limit,
/// while a warm-started run planned it).
static absl::StatusOr<IlpResult> readResult(const RematProblem &problem,
                                            const IlpColumns &columns,
                                            const CbcModel &cbc,
                                            bool reachedLimit) {
  IlpResult result;
  result.nodes = cbc.getNodeCount();
  const double *values = cbc.bestSolution();
  if (!values) {
    bool infeasible = cbc.isProvenInfeasible() || cbc.status() == 0;
    result.status = infeasible && !reachedLimit ? IlpStatusKind::Infeasible
                                                : IlpStatusKind::NoSolution;
    return result;
  }
  result.schedule = columnsSchedule(problem, columns, values);
  absl::StatusOr<ScheduleCost> cost = checkSchedule(problem, result.schedule);
  if (!cost.ok())
    return absl::InternalError(
        fmt::format("ilp: cbc's solution fails the exact check: {}",
                    std::string(cost.status().message())));
  result.cost = *cost;
  result.status =
      cbc.isProvenOptimal() ? IlpStatusKind::Optimal : IlpStatusKind::Feasible;
  double recompute = double(result.cost.recomputeCost);
  result.bestBound =
      std::min(integerBound(cbc.getBestPossibleObjValue()), recompute);
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
    return result;
  }
  if (!options.searchMilp) {
    IlpResult result;
    if (start)
      keepWarmStartIfBetter(result, *start, *startCost);
    tightenBound(result, lower.bound);
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
  if (options.onProgress) {
    ProgressHandler handler(options.onProgress);
    cbc.passInEventHandler(&handler);
  }
  if (!mipStartValues.empty())
    cbc.setMIPStart(mipStartValues);
  IlpOptions milpOptions = options;
  milpOptions.timeLimitSeconds = std::max(
      options.timeLimitSeconds - lower.seconds, options.timeLimitSeconds / 4);
  bool reachedLimit = runCbcDriver(cbc, milpOptions);
  REMAT_ASSIGN_OR_RETURN(
      IlpResult result, readResult(problem, *model.columns, cbc, reachedLimit));
  if (start)
    keepWarmStartIfBetter(result, *start, *startCost);
  tightenBound(result, lower.bound);
  return result;
}

} // namespace remat::ilp

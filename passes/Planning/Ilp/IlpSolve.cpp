//===- IlpSolve.cpp - Solving the Checkmate MILP on CBC -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs CBC's standard driver (preprocessing, cuts, heuristics) on the model
/// of IlpModel.cpp: time limit, gap, seeds, warm start, progress events, and
/// the outcome checked against the exact memory accounting.
///
//===----------------------------------------------------------------------===//

#include "CheckmateIlp.h"
#include "IlpInternal.h"

#include "remat/Support/Status.h"

#include <coin/CbcEventHandler.hpp>
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <cmath>
#include <string>

namespace remat::ilp {
namespace {

/// Forwards CBC's search state to `IlpOptions::onProgress`: on every new
/// incumbent, otherwise at most once a second.
class ProgressHandler : public CbcEventHandler {
public:
  explicit ProgressHandler(const std::function<void(const IlpProgress &)> &sink)
      : sink_(sink) {}

  CbcEventHandler *clone() const override {
    return new ProgressHandler(*this);
  }

  CbcAction event(CbcEvent which) override {
    bool found = which == solution || which == heuristicSolution;
    if (!found && which != node && which != endSearch)
      return noAction;
    double seconds = model_->getCurrentSeconds();
    if (!found && which == node && seconds < lastReport_ + 1.0)
      return noAction;
    lastReport_ = seconds;
    IlpProgress progress;
    progress.seconds = seconds;
    progress.bound = std::max(0.0, model_->getBestPossibleObjValue());
    progress.nodes = model_->getNodeCount();
    if (model_->bestSolution()) {
      double incumbent = model_->getObjValue();
      progress.incumbent = incumbent;
      progress.gap = incumbent > 0 ? (incumbent - progress.bound) / incumbent
                                   : 0.0;
    }
    sink_(progress);
    return noAction;
  }

private:
  std::function<void(const IlpProgress &)> sink_;
  double lastReport_ = -1.0;
};

/// CBC's command line for `options`.
std::vector<std::string> driverArguments(const IlpOptions &options) {
  return {"remat-ilp",
          "-log",
          std::to_string(options.logLevel),
          "-seconds",
          fmt::format("{}", options.timeLimitSeconds),
          "-ratioGap",
          fmt::format("{}", options.relativeGap),
          "-allowableGap",
          "0",
          "-threads",
          "0",
          "-randomSeed",
          std::to_string(options.seed),
          "-randomCbcSeed",
          std::to_string(options.seed),
          // On training chains the LP bound, rounded up, is already tight and
          // the root cuts never moved it; the time goes to finding schedules
          // (docs/planning-ilp.md has the figures).
          "-cuts",
          "off",
          "-rins",
          "on",
          "-dins",
          "on",
          "-proximity",
          "on",
          "-solve",
          "-quit"};
}

} // namespace

absl::StatusOr<IlpResult> solveCheckmateIlp(const RematProblem &problem,
                                            const IlpOptions &options) {
  REMAT_RETURN_IF_ERROR(validateProblem(problem));
  if (options.warmStart) {
    absl::StatusOr<ScheduleCost> start =
        checkSchedule(problem, *options.warmStart);
    if (!start.ok())
      return invalidArgument("ilp warm start: {}", std::string(start.status().message()));
  }
  IlpResult result;
  int n = int(problem.nodes.size());
  if (n == 0) {
    if (problem.constantBytes > problem.budgetBytes) {
      result.status = IlpStatusKind::Infeasible;
      return result;
    }
    result.status = IlpStatusKind::Optimal;
    result.cost.peakBytes = problem.constantBytes;
    return result;
  }

  RematDag dag = buildDag(problem);
  REMAT_ASSIGN_OR_RETURN(IlpModel model, buildIlpModel(problem, dag));
  OsiClpSolverInterface &solver = *model.solver;
  solver.messageHandler()->setLogLevel(options.logLevel);
  solver.messageHandler()->setFilePointer(stderr);
  std::vector<std::pair<std::string, double>> start;
  if (options.warmStart) {
    // CBC's driver takes a start by column name, fixes its integers and
    // completes the continuous columns (U, FREE) by an LP.
    solver.setIntParam(OsiNameDiscipline, 1);
    for (int column = 0; column < model.columns->numColumns(); ++column)
      solver.setColName(column, fmt::format("x{}", column));
    for (auto [column, value] : scheduleColumns(problem, dag, *model.columns,
                                                *options.warmStart))
      start.emplace_back(fmt::format("x{}", column), value);
  }

  CbcModel cbc(solver);
  cbc.messageHandler()->setFilePointer(stderr);
  CbcMain0(cbc);
  cbc.setLogLevel(options.logLevel);
  if (options.onProgress) {
    ProgressHandler handler(options.onProgress);
    cbc.passInEventHandler(&handler);
  }
  if (!start.empty())
    cbc.setMIPStart(start);
  std::vector<std::string> arguments = driverArguments(options);
  std::vector<const char *> argv;
  for (const std::string &argument : arguments)
    argv.push_back(argument.c_str());
  CbcMain1(int(argv.size()), argv.data(), cbc);

  result.nodes = cbc.getNodeCount();
  const double *values = cbc.bestSolution();
  if (!values) {
    result.status = cbc.isProvenInfeasible() || cbc.status() == 0
                        ? IlpStatusKind::Infeasible
                        : IlpStatusKind::NoSolution;
    return result;
  }
  result.schedule = columnsSchedule(problem, *model.columns, values);
  absl::StatusOr<ScheduleCost> cost = checkSchedule(problem, result.schedule);
  if (!cost.ok())
    return absl::InternalError(fmt::format(
        "ilp: cbc's solution fails the exact check: {}",
        std::string(cost.status().message())));
  result.cost = *cost;
  result.status = cbc.isProvenOptimal() ? IlpStatusKind::Optimal
                                        : IlpStatusKind::Feasible;
  double recompute = double(result.cost.recomputeCost);
  result.bestBound =
      std::clamp(cbc.getBestPossibleObjValue(), 0.0, recompute);
  // CBC's bound is a float; an integral objective rounds it up.
  result.bestBound = std::min(std::ceil(result.bestBound - 1e-6), recompute);
  result.gap = recompute > 0 ? (recompute - result.bestBound) / recompute : 0.0;
  return result;
}

} // namespace remat::ilp

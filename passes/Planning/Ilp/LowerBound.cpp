//===- LowerBound.cpp - A relaxation bounding the MILP from below ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A small MILP whose optimum is at most the Checkmate MILP's: it only asks
/// which forward nodes are recomputed at least once in the backward pass (x)
/// or in the forward pass (w), and which are resident when the backward pass
/// starts (y), and bounds the bytes every schedule must hold at each node's
/// own step. Its 3F columns against the MILP's O(N^2) let CBC prove it in
/// seconds where the MILP's root LP alone takes minutes, and on plans that
/// recompute each value once it is tight. docs/planning-ilp.md derives it.
///
//===----------------------------------------------------------------------===//

#include "CheckmateIlp.h"
#include "IlpInternal.h"

#include "remat/Support/Status.h"
#include "remat/Support/Stopwatch.h"


#include <fmt/format.h>

namespace remat::ilp {
namespace {

/// The most nodes the bound is built for when the planner rounds it: its
/// rows hold O(N^2) terms.
constexpr int kMaxBoundNodes = 4000;

/// The most nodes `boundRecomputeCost` builds it for.
constexpr int kMaxBoundOnlyNodes = 20000;

/// The most nodes of a private chain followed.
constexpr int kMaxChain = 16;

/// Forward nodes that exist only to feed node `i`: a_1 is the largest input
/// of `i` that only `i` reads, a_2 the largest input of a_1 that only a_1
/// reads, and so on (inputs of no bytes do not count). While the backward
/// pass waits to recompute `i` from a_k, `i` or a node of the chain up to
/// a_k is live.
std::vector<int> privateChain(const RematProblem &problem, const RematDag &dag,
                              int i) {
  std::vector<int> chain;
  for (int a = i; int(chain.size()) < kMaxChain;) {
    int largest = -1;
    for (int dep : dag.deps[a])
      if (dag.readers[dep].size() == 1 && problem.nodes[dep].bytes > 0 &&
          (largest < 0 ||
           problem.nodes[dep].bytes > problem.nodes[largest].bytes))
        largest = dep;
    if (largest < 0)
      break;
    chain.push_back(largest);
    a = largest;
  }
  return chain;
}

/// Column layout: x, w and y of forward node i, then q(i, k) for k = 1..L_i
/// along i's private chain: i and a_1..a_{k-1} computed again, a_k not.
struct BoundColumns {
  int numForward = 0;
  std::vector<std::vector<int>> chains;
  std::vector<int> chainStart;

  BoundColumns(const RematProblem &problem, const RematDag &dag)
      : numForward(problem::numForward(problem)) {
    int next = 3 * numForward;
    for (int i = 0; i < numForward; ++i) {
      chains.push_back(privateChain(problem, dag, i));
      chainStart.push_back(next);
      next += int(chains.back().size());
    }
    numColumns = next;
  }
  int x(int i) const { return i; }
  int w(int i) const { return numForward + i; }
  int y(int i) const { return 2 * numForward + i; }
  int q(int i, int k) const { return chainStart[i] + k - 1; }
  int numColumns = 0;
};

/// The relaxation's rows, or nullopt when a step's fixed bytes alone exceed
/// the budget (no schedule fits).
std::optional<RowBuilder> boundRows(const RematProblem &problem,
                                    const RematDag &dag,
                                    const BoundColumns &col, int64_t unit) {
  int n = int(problem.nodes.size());
  int numForward = col.numForward;
  auto bytes = [&](int i) { return problem.nodes[i].bytes / unit; };
  int64_t budget = problem.budgetBytes / unit;
  int64_t constant = problem.constantBytes / unit;
  std::vector<int> lastReader(n, -1), lastForwardReader(n, -1);
  for (int i = 0; i < n; ++i)
    for (int reader : dag.readers[i]) {
      lastReader[i] = reader;
      if (!problem.nodes[reader].backward)
        lastForwardReader[i] = reader;
    }

  RowBuilder rows;
  std::vector<std::pair<int, double>> terms;
  for (int i = 0; i < numForward; ++i) {
    // A value the backward pass reads is kept from the forward pass or
    // computed again there.
    if (lastReader[i] >= numForward)
      rows.add({{col.x(i), 1.0}, {col.y(i), 1.0}}, 1.0, COIN_DBL_MAX);
    // Computing it again there reads each input kept or computed again.
    if (lastReader[i] >= 0)
      for (int dep : dag.deps[i])
        rows.add({{col.x(i), 1.0}, {col.x(dep), -1.0}, {col.y(dep), -1.0}},
                 -COIN_DBL_MAX, 0.0);
  }
  // q(i, k) is at least the AND of x(i), x(a_1)..x(a_{k-1}) and not x(a_k).
  for (int i = 0; i < numForward; ++i) {
    const std::vector<int> &chain = col.chains[i];
    for (int k = 1; k <= int(chain.size()); ++k) {
      terms = {
          {col.q(i, k), 1.0}, {col.x(i), -1.0}, {col.x(chain[k - 1]), 1.0}};
      for (int j = 0; j + 1 < k; ++j)
        terms.push_back({col.x(chain[j]), -1.0});
      rows.add(terms, double(1 - k), COIN_DBL_MAX);
    }
  }
  // The backward pass starts with the resident values in memory.
  terms.clear();
  for (int i = 0; i < numForward; ++i)
    terms.push_back({col.y(i), double(bytes(i))});
  rows.add(terms, -COIN_DBL_MAX, double(budget - constant));

  // Node t's own step holds its inputs and output, every gradient read later
  // and every forward value read later that is not computed again.
  std::vector<bool> isDep(n, false);
  for (int t = 0; t < n; ++t) {
    for (int dep : dag.deps[t])
      isDep[dep] = true;
    int64_t fixed = constant + bytes(t);
    int64_t atStake = 0;
    terms.clear();
    for (int i = 0; i < t; ++i) {
      if (isDep[i]) {
        fixed += bytes(i);
        continue;
      }
      if (lastReader[i] <= t || bytes(i) == 0)
        continue;
      if (i >= numForward) {
        fixed += bytes(i);
        continue;
      }
      atStake += bytes(i);
      double m = double(bytes(i));
      if (t >= numForward) {
        terms.push_back({col.x(i), m});
        // Recomputed later, i is live or one of its private chain is.
        int64_t least = bytes(i);
        for (int k = 1; k <= int(col.chains[i].size()); ++k) {
          least = std::min(least, bytes(col.chains[i][k - 1]));
          terms.push_back({col.q(i, k), -double(least)});
        }
      } else if (lastForwardReader[i] > t) {
        terms.push_back({col.w(i), m});
      } else {
        terms.push_back({col.x(i), m});
        terms.push_back({col.w(i), m});
      }
    }
    for (int dep : dag.deps[t])
      isDep[dep] = false;
    if (fixed > budget)
      return std::nullopt;
    if (fixed + atStake > budget)
      rows.add(terms, double(fixed + atStake - budget), COIN_DBL_MAX);
  }
  return rows;
}

/// The relaxation's columns, from 0 to `upper`, costing `objective`.
ModelColumns relaxationColumns(const std::vector<double> &upper,
                               const std::vector<double> &objective,
                               bool integer) {
  ModelColumns columns;
  for (int column = 0, e = int(upper.size()); column < e; ++column)
    columns.add(0.0, upper[column], objective[column], integer);
  return columns;
}

/// One CBC solve of the relaxation's rows, every column an integer, under
/// `objective`, from `start` (every column's value) where given.
CbcOutcome solveRelaxation(const RowBuilder &rows,
                           const std::vector<double> &upper,
                           const std::vector<double> &objective,
                           const IlpOptions &options,
                           llvm::ArrayRef<double> start = {}) {
  ModelColumns columns = relaxationColumns(upper, objective, /*integer=*/true);
  std::vector<std::pair<int, double>> startValues;
  for (int column = 0, e = int(start.size()); column < e; ++column)
    startValues.emplace_back(column, start[column]);
  return solveRows(rows, columns, options, startValues);
}

/// The relaxation of a problem, ready to solve.
struct Relaxation {
  RematDag dag;
  BoundColumns col;
  RowBuilder rows;
  /// Per column: its upper bound and cost.
  std::vector<double> upper, cost;
};

/// What `buildRelaxation` found.
struct RelaxationOrVerdict {
  /// Unset when the problem settles without a solve (`bound` says how).
  std::optional<Relaxation> relaxation;
  RecomputeBound bound;
};

/// The relaxation of `problem` (valid), or the verdict without one: no
/// schedule fits (a step's fixed bytes, or the constants, exceed the
/// budget), nothing to recompute, or more than `maxNodes` nodes (bound 0).
RelaxationOrVerdict buildRelaxation(const RematProblem &problem,
                                    int maxNodes) {
  RelaxationOrVerdict result;
  int n = int(problem.nodes.size());
  if (problem.constantBytes > problem.budgetBytes) {
    result.bound.infeasible = true;
    return result;
  }
  if (n > maxNodes)
    return result;
  RematDag dag = buildDag(problem);
  BoundColumns col(problem, dag);
  std::optional<RowBuilder> rows =
      boundRows(problem, dag, col, byteUnit(problem));
  if (!rows) {
    result.bound.infeasible = true;
    return result;
  }
  if (col.numForward == 0)
    return result;
  std::vector<double> upper(col.numColumns, 1.0), cost(col.numColumns, 0.0);
  for (int i = 0; i < col.numForward; ++i)
    for (int column : {col.x(i), col.w(i)}) {
      cost[column] = double(problem.nodes[i].cost);
      if (dag.readers[i].empty())
        upper[column] = 0.0;
    }
  result.relaxation = Relaxation{std::move(dag), std::move(col),
                                 std::move(*rows), std::move(upper),
                                 std::move(cost)};
  return result;
}

/// The options of the relaxation's solves, within `seconds` each.
IlpOptions relaxationOptions(const IlpOptions &options, double seconds) {
  IlpOptions solveOptions;
  solveOptions.timeLimitSeconds = seconds;
  solveOptions.maxNodes = options.maxNodes;
  solveOptions.logLevel = options.logLevel;
  solveOptions.seed = options.seed;
  solveOptions.inSolverProcess = options.inSolverProcess;
  return solveOptions;
}

} // namespace

absl::StatusOr<RecomputeBound> recomputeLowerBound(const RematProblem &problem,
                                                   const IlpOptions &options) {
  Stopwatch stopwatch;
  REMAT_RETURN_IF_ERROR(validateProblem(problem));
  RelaxationOrVerdict built = buildRelaxation(problem, kMaxBoundNodes);
  if (!built.relaxation)
    return built.bound;
  RecomputeBound result;
  int n = int(problem.nodes.size());
  auto &[dag, col, rows, upper, cost] = *built.relaxation;
  // Two solves: a quarter of the limit, the rest left to the MILP; all of it
  // when there is no MILP.
  IlpOptions solveOptions = relaxationOptions(
      options, options.timeLimitSeconds / (options.searchMilp ? 8 : 2));
  CbcOutcome first = solveRelaxation(rows, upper, cost, solveOptions);
  result.solverFailure = first.failure;
  auto finish = [&] {
    result.seconds = stopwatch.seconds();
    return result;
  };
  if (first.values.empty()) {
    result.infeasible = first.provenInfeasible;
    return finish();
  }
  result.bound = integerBound(first.bound);
  std::vector<double> chosen = first.values;
  // Among the solutions of least cost, one whose recomputed nodes read
  // kept inputs (d_e = 1 where both ends of an edge j -> i are recomputed
  // and j has other readers), then one that recomputes the earliest forward
  // nodes: the rounding (recomputeOnceSchedule) recomputes a node where its
  // first backward reader runs, so a recomputed node reading a recomputed
  // input makes both live at once, and the backward pass reaches early
  // nodes last, when the fewest values are live. A second solve, with the
  // cost held at the optimum.
  if (!first.reachedLimit) {
    RowBuilder tieBreak = rows;
    std::vector<std::pair<int, double>> terms;
    for (int column = 0; column < col.numColumns; ++column)
      if (cost[column] != 0.0)
        terms.push_back({column, cost[column]});
    tieBreak.add(terms, -COIN_DBL_MAX, result.bound);
    std::vector<double> preference(col.numColumns, 0.0);
    double adjacency = double(col.numForward + 1) * col.numForward;
    for (int i = 0; i < col.numForward; ++i) {
      preference[col.x(i)] = double(i + 1);
      for (int dep : dag.deps[i]) {
        if (dag.readers[dep].size() < 2)
          continue;
        int both = int(preference.size());
        preference.push_back(adjacency);
        upper.push_back(1.0);
        tieBreak.add({{both, 1.0}, {col.x(i), -1.0}, {col.x(dep), -1.0}}, -1.0,
                     COIN_DBL_MAX);
      }
    }
    CbcOutcome second =
        solveRelaxation(tieBreak, upper, preference, solveOptions);
    if (result.solverFailure.empty())
      result.solverFailure = second.failure;
    if (!second.values.empty())
      chosen = std::move(second.values);
  }
  result.recomputed.resize(n);
  for (int i = 0; i < col.numForward; ++i)
    if (chosen[col.x(i)] > 0.5)
      result.recomputed.set(i);
  return finish();
}

absl::StatusOr<RecomputeBound> boundRecomputeCost(const RematProblem &problem,
                                                  const IlpOptions &options) {
  Stopwatch stopwatch;
  REMAT_RETURN_IF_ERROR(validateProblem(problem));
  RelaxationOrVerdict built = buildRelaxation(problem, kMaxBoundOnlyNodes);
  RecomputeBound result = std::move(built.bound);
  auto finish = [&] {
    result.seconds = stopwatch.seconds();
    return result;
  };
  if (!built.relaxation) {
    // Settled without a solve, unless too large to build.
    result.proven = result.infeasible ||
                    int(problem.nodes.size()) <= kMaxBoundOnlyNodes;
    if (!result.proven)
      result.solverFailure = fmt::format(
          "the relaxation is built for at most {} nodes, not {}",
          kMaxBoundOnlyNodes, problem.nodes.size());
    return finish();
  }
  auto &[dag, col, rows, upper, cost] = *built.relaxation;
  // Its linear relaxation first, within a quarter of the limit: a CBC solve
  // killed before its root ends gives no bound at all (the 1000-layer MLP
  // at 30%), and the LP's optimum is one.
  CbcOutcome lp = solveLinearRelaxation(
      rows, relaxationColumns(upper, cost, /*integer=*/false),
      relaxationOptions(options, options.timeLimitSeconds / 4));
  if (lp.provenInfeasible) {
    result.infeasible = result.proven = true;
    return finish();
  }
  double lpBound = lp.provenOptimal ? linearBound(lp.bound) : 0.0;
  // Every forward node computed again in the backward and the forward pass
  // (x = w = 1, y = q = 0) satisfies every row once no step's fixed bytes
  // exceed the budget: a start, so that CBC always has a solution to return
  // its bound with.
  std::vector<double> everything(col.numColumns, 0.0);
  for (int i = 0; i < col.numForward; ++i) {
    everything[col.x(i)] = upper[col.x(i)];
    everything[col.w(i)] = upper[col.w(i)];
  }
  CbcOutcome outcome = solveRelaxation(
      rows, upper, cost,
      relaxationOptions(options, std::max(options.timeLimitSeconds -
                                              stopwatch.seconds(),
                                          options.timeLimitSeconds / 4)),
      everything);
  if (outcome.values.empty())
    result.infeasible = outcome.provenInfeasible;
  else
    result.bound = integerBound(outcome.bound);
  result.proven = result.infeasible || outcome.provenOptimal;
  result.solverFailure = outcome.failure;
  // A CBC solve that failed or stopped below the LP leaves the LP's bound.
  if (!result.infeasible && lpBound > result.bound) {
    result.bound = lpBound;
    result.solverFailure.clear();
  }
  return finish();
}

} // namespace remat::ilp

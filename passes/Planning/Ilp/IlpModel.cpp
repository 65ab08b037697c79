//===- IlpModel.cpp - Checkmate's MILP as CLP rows ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Columns, rows and bounds of the MILP of docs/planning-ilp.md, and the
/// translation between schedules and column values.
///
//===----------------------------------------------------------------------===//

#include "CheckmateIlp.h"
#include "IlpInternal.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <climits>
#include <numeric>

namespace remat::ilp {

IlpColumns::IlpColumns(const RematProblem &problem, const RematDag &dag) {
  int n = int(problem.nodes.size());
  freeSources_.resize(n);
  freeOffset_.assign(n + 1, 0);
  for (int k = 0; k < n; ++k) {
    freeSources_[k] = dag.deps[k];
    freeSources_[k].push_back(k);
    freeOffset_[k + 1] = freeOffset_[k] + int64_t(freeSources_[k].size());
  }
  freeStart_.assign(n + 1, 0);
  for (int t = 0; t < n; ++t)
    freeStart_[t + 1] = freeStart_[t] + freeOffset_[t + 1];
  // R and U have t + 1 columns at stage t, S has t.
  sBase_ = triangle(n);
  uBase_ = sBase_ + triangle(n - 1);
  freeBase_ = uBase_ + triangle(n);
  total_ = freeBase_ + freeStart_[n];
}

void RowBuilder::add(llvm::ArrayRef<std::pair<int, double>> terms, double lower,
                     double upper) {
  starts_.push_back(CoinBigIndex(indices_.size()));
  lengths_.push_back(int(terms.size()));
  for (auto [column, coefficient] : terms) {
    indices_.push_back(column);
    elements_.push_back(coefficient);
  }
  lower_.push_back(lower);
  upper_.push_back(upper);
}

CoinPackedMatrix RowBuilder::matrix(int numColumns) const {
  return CoinPackedMatrix(false, numColumns, int(starts_.size()),
                          CoinBigIndex(indices_.size()), elements_.data(),
                          indices_.data(), starts_.data(), lengths_.data());
}

int64_t byteUnit(const RematProblem &problem) {
  int64_t unit = problem.constantBytes;
  for (const RematNode &node : problem.nodes)
    unit = std::gcd(unit, node.bytes);
  return std::max<int64_t>(unit, 1);
}

absl::StatusOr<IlpModel> buildIlpModel(const RematProblem &problem,
                                       const RematDag &dag) {
  int n = int(problem.nodes.size());
  IlpModel model;
  model.columns = std::make_unique<IlpColumns>(problem, dag);
  const IlpColumns &col = *model.columns;
  int numColumns = col.numColumns();
  if (numColumns < 0)
    return invalidArgument("ilp: {} nodes need more than {} columns", n,
                           INT_MAX);
  model.byteScale = double(byteUnit(problem));
  auto bytes = [&](int i) {
    return double(problem.nodes[i].bytes) / model.byteScale;
  };

  std::vector<double> lower(numColumns, 0.0), upper(numColumns, 1.0),
      objective(numColumns, 0.0);
  std::vector<int> integers;
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i <= t; ++i) {
      int r = col.r(t, i);
      integers.push_back(r);
      if (i == t)
        lower[r] = 1.0;
      else if (problem.nodes[i].backward || dag.readers[i].empty())
        upper[r] = 0.0;
      else
        objective[r] = double(problem.nodes[i].cost);
    }
    for (int i = 0; i < t; ++i) {
      int s = col.s(t, i);
      integers.push_back(s);
      if (!dag.readLaterThan(i, t, problem))
        upper[s] = 0.0;
    }
    double budget = double(problem.budgetBytes / int64_t(model.byteScale));
    for (int k = 0; k <= t; ++k)
      upper[col.u(t, k)] = budget;
  }

  RowBuilder rows;
  for (int t = 0; t < n; ++t) {
    for (int k = 0; k <= t; ++k) {
      llvm::ArrayRef<int> sources = col.freeSources(k);
      if (upper[col.r(t, k)] == 0.0) {
        for (int j = 0, e = int(sources.size()); j < e; ++j)
          upper[col.free(t, k, j)] = 0.0;
        continue;
      }
      // A computation reads each dependency computed or resident: (1).
      for (int dep : dag.deps[k])
        rows.add(
            {{col.r(t, k), 1.0}, {col.r(t, dep), -1.0}, {col.s(t, dep), -1.0}},
            -COIN_DBL_MAX, 0.0);
      // FREE[t][k][i] is at most the product that frees i after k: (4).
      for (int j = 0, e = int(sources.size()); j < e; ++j) {
        int freeColumn = col.free(t, k, j);
        int i = sources[j];
        if (k < t)
          rows.add({{freeColumn, 1.0}, {col.r(t, k), -1.0}}, -COIN_DBL_MAX,
                   0.0);
        if (t + 1 < n)
          rows.add({{freeColumn, 1.0}, {col.s(t + 1, i), 1.0}}, -COIN_DBL_MAX,
                   1.0);
        for (int reader : dag.readers[i]) {
          if (reader <= k || reader > t)
            continue;
          if (reader == t)
            upper[freeColumn] = 0.0;
          else
            rows.add({{freeColumn, 1.0}, {col.r(t, reader), 1.0}},
                     -COIN_DBL_MAX, 1.0);
        }
      }
    }
    // A node is resident only if the previous stage held it: (2).
    if (t > 0)
      for (int i = 0; i < t; ++i) {
        llvm::SmallVector<std::pair<int, double>, 3> terms = {
            {col.s(t, i), 1.0}, {col.r(t - 1, i), -1.0}};
        if (i < t - 1)
          terms.push_back({col.s(t - 1, i), -1.0});
        rows.add(terms, -COIN_DBL_MAX, 0.0);
      }
    // Memory after each computation: (3).
    std::vector<std::pair<int, double>> terms = {{col.u(t, 0), 1.0},
                                                 {col.r(t, 0), -bytes(0)}};
    for (int i = 0; i < t; ++i)
      terms.push_back({col.s(t, i), -bytes(i)});
    double constant = double(problem.constantBytes) / model.byteScale;
    rows.add(terms, constant, constant);
    for (int k = 1; k <= t; ++k) {
      terms = {{col.u(t, k), 1.0},
               {col.u(t, k - 1), -1.0},
               {col.r(t, k), -bytes(k)}};
      llvm::ArrayRef<int> sources = col.freeSources(k - 1);
      for (int j = 0, e = int(sources.size()); j < e; ++j)
        terms.push_back({col.free(t, k - 1, j), bytes(sources[j])});
      rows.add(terms, 0.0, 0.0);
    }
  }

  model.solver = std::make_unique<OsiClpSolverInterface>();
  model.solver->loadProblem(rows.matrix(numColumns), lower.data(), upper.data(),
                            objective.data(), rows.lower(), rows.upper());
  model.solver->setInteger(integers.data(), int(integers.size()));
  model.solver->setObjSense(1.0);
  return model;
}

std::vector<std::pair<int, double>>
scheduleColumns(const RematProblem &problem, const RematDag &dag,
                const IlpColumns &columns, const RematSchedule &schedule) {
  int n = int(problem.nodes.size());
  std::vector<std::pair<int, double>> values;
  // Bits that the model fixes at 0 only waste memory or time; they read 0.
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i <= t; ++i) {
      bool useful = i == t || !dag.readers[i].empty();
      values.emplace_back(columns.r(t, i),
                          useful && schedule.compute[t].test(i) ? 1.0 : 0.0);
    }
    for (int i = 0; i < t; ++i) {
      bool useful = dag.readLaterThan(i, t, problem);
      values.emplace_back(columns.s(t, i),
                          useful && schedule.resident[t].test(i) ? 1.0 : 0.0);
    }
  }
  return values;
}

RematSchedule columnsSchedule(const RematProblem &problem,
                              const IlpColumns &columns, const double *values) {
  int n = int(problem.nodes.size());
  RematSchedule schedule = RematSchedule::empty(n);
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < t; ++i)
      if (values[columns.s(t, i)] > 0.5)
        schedule.resident[t].set(i);
    for (int i = 0; i <= t; ++i)
      if (values[columns.r(t, i)] > 0.5 && !schedule.resident[t].test(i))
        schedule.compute[t].set(i);
  }
  return schedule;
}

} // namespace remat::ilp

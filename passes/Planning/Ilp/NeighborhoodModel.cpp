//===- NeighborhoodModel.cpp - The MILP around a few nodes ----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Checkmate's MILP restricted to a neighbourhood of a schedule: the bits of
/// the free nodes are columns, every other bit keeps its value and enters
/// the rows as a constant. Its size follows the free nodes, not N^2:
///
/// - a free node is computed again only at stages where one of its readers
///   may be computed (or where the schedule computes it), a column each;
/// - between two such stages its residency cannot change usefully, so one
///   column holds it over the whole gap;
/// - a stage gets memory rows only where everything that could be live in
///   it exceeds the budget.
///
/// Every solution is a schedule of the full problem, checked exactly by the
/// caller.
///
//===----------------------------------------------------------------------===//

#include "CheckmateIlp.h"
#include "IlpInternal.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace remat::ilp {

namespace {

/// A bit of the schedule in a row: a column, or a constant 0 or 1.
struct Bit {
  int column = -1;
  bool value = false;

  bool isColumn() const { return column >= 0; }
  /// Whether the bit can be 1.
  bool maybe() const { return isColumn() || value; }
};

using FreeNode = NeighborhoodModel::FreeNode;

/// Sorted and without duplicates.
void sortUnique(std::vector<int> &values) {
  llvm::sort(values);
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

class Builder {
public:
  Builder(const RematProblem &problem, const RematDag &dag,
          const RematSchedule &schedule, llvm::ArrayRef<int> freeNodes)
      : problem_(problem), dag_(dag), schedule_(schedule),
        n_(int(problem.nodes.size())), unit_(double(byteUnit(problem))) {
    slot_.assign(n_, -1);
    for (int i : freeNodes) {
      slot_[i] = int(model_.freeNodes.size());
      model_.freeNodes.emplace_back().node = i;
      order_.push_back(i);
    }
  }

  NeighborhoodModel build();

private:
  bool isFree(int i) const { return slot_[i] >= 0; }
  const FreeNode &node(int i) const { return model_.freeNodes[slot_[i]]; }
  double bytes(int i) const { return double(problem_.nodes[i].bytes) / unit_; }

  /// Stages that compute `i` in the schedule, after its own.
  std::vector<int> scheduledRecomputes(int i) const;
  /// Stages at which reader `r` may be computed.
  std::vector<int> readerStages(int r) const;
  void placeFreeNodes();

  Bit compute(int i, int t) const;
  /// Whether `i` is in memory as stage `t` starts (0 at t = N).
  Bit resident(int i, int t) const;

  void addDependencyRows();
  void addKeepRows();
  void addMemoryRows();
  /// The memory rows of stage `t`.
  void addStageRows(int t);
  /// The highest memory any choice of the free bits could give stage `t`:
  /// all it starts with and all it may compute.
  double stageCeiling(int t) const;

  const RematProblem &problem_;
  const RematDag &dag_;
  const RematSchedule &schedule_;
  int n_;
  double unit_;
  /// Index into `model_.freeNodes` of each free node, -1 for the others.
  std::vector<int> slot_;
  /// The free nodes, ascending.
  std::vector<int> order_;
  NeighborhoodModel model_;
};

std::vector<int> Builder::scheduledRecomputes(int i) const {
  std::vector<int> stages;
  for (int t = i + 1; t < n_; ++t)
    if (schedule_.compute[t].test(i))
      stages.push_back(t);
  return stages;
}

std::vector<int> Builder::readerStages(int r) const {
  if (!isFree(r)) {
    std::vector<int> stages = scheduledRecomputes(r);
    if (schedule_.compute[r].test(r))
      stages.insert(stages.begin(), r);
    return stages;
  }
  std::vector<int> stages = node(r).recomputeStages;
  stages.insert(stages.begin(), r);
  return stages;
}

void Builder::placeFreeNodes() {
  // Readers come later in the order: place the free nodes from the last.
  for (int i : llvm::reverse(order_)) {
    FreeNode &free = model_.freeNodes[slot_[i]];
    std::vector<int> reads;
    for (int reader : dag_.readers[i])
      llvm::append_range(reads, readerStages(reader));
    sortUnique(reads);
    std::vector<int> scheduled = scheduledRecomputes(i);
    // A reader's stage computes `i` only where its other inputs that stay
    // fixed are in memory; the schedule's own stages always qualify.
    for (int t : reads) {
      bool ready = llvm::all_of(dag_.deps[i], [&](int dep) {
        return isFree(dep) || schedule_.compute[t].test(dep) ||
               schedule_.resident[t].test(dep);
      });
      if (ready)
        free.recomputeStages.push_back(t);
    }
    llvm::append_range(free.recomputeStages, scheduled);
    sortUnique(free.recomputeStages);
    for (size_t j = 0, e = free.recomputeStages.size(); j < e; ++j)
      free.recomputeColumns.push_back(model_.columns.add(
          0.0, 1.0, double(problem_.nodes[i].cost), /*integer=*/true));
    free.events = {i};
    llvm::append_range(free.events, reads);
    llvm::append_range(free.events, free.recomputeStages);
    sortUnique(free.events);
    for (size_t k = 0; k + 1 < free.events.size(); ++k)
      free.keepColumns.push_back(
          model_.columns.add(0.0, 1.0, 0.0, /*integer=*/true));
  }
}

Bit Builder::compute(int i, int t) const {
  if (!isFree(i))
    return {-1, schedule_.compute[t].test(i)};
  if (t == i)
    return {-1, true};
  const FreeNode &free = node(i);
  auto it = llvm::lower_bound(free.recomputeStages, t);
  if (it == free.recomputeStages.end() || *it != t)
    return {};
  return {free.recomputeColumns[it - free.recomputeStages.begin()], false};
}

Bit Builder::resident(int i, int t) const {
  if (t >= n_ || t <= i)
    return {};
  if (!isFree(i))
    return {-1, schedule_.resident[t].test(i)};
  const FreeNode &free = node(i);
  if (t > free.events.back())
    return {};
  // The gap (events[k], events[k + 1]] that holds t.
  size_t k = size_t(llvm::lower_bound(free.events, t) - free.events.begin());
  return {free.keepColumns[k - 1], false};
}

void Builder::addDependencyRows() {
  // Each computation of a reader of a free node finds it computed earlier in
  // the stage or resident; the other inputs, fixed, are in memory wherever
  // the reader may be computed (placeFreeNodes).
  for (int i : order_)
    for (int reader : dag_.readers[i])
      for (int t : readerStages(reader)) {
        Bit readerBit = compute(reader, t), own = compute(i, t),
            kept = resident(i, t);
        if (own.value || kept.value)
          continue;
        llvm::SmallVector<std::pair<int, double>, 3> terms;
        double upper = 0.0;
        if (readerBit.isColumn())
          terms.push_back({readerBit.column, 1.0});
        else
          upper = -1.0;
        for (Bit source : {own, kept})
          if (source.isColumn())
            terms.push_back({source.column, -1.0});
        model_.rows.add(terms, -COIN_DBL_MAX, upper);
      }
}

void Builder::addKeepRows() {
  // Kept into a gap only if computed at, or kept into, the event before it.
  for (int i : order_) {
    const FreeNode &free = node(i);
    for (size_t k = 1; k < free.keepColumns.size(); ++k) {
      llvm::SmallVector<std::pair<int, double>, 3> terms = {
          {free.keepColumns[k], 1.0}, {free.keepColumns[k - 1], -1.0}};
      Bit computed = compute(i, free.events[k]);
      if (computed.isColumn())
        terms.push_back({computed.column, -1.0});
      model_.rows.add(terms, -COIN_DBL_MAX, 0.0);
    }
  }
}

double Builder::stageCeiling(int t) const {
  double live = double(problem_.constantBytes) / unit_;
  for (const llvm::BitVector *bits : {&schedule_.compute[t], &schedule_.resident[t]})
    for (int i : bits->set_bits())
      if (!isFree(i))
        live += bytes(i);
  for (int i : order_)
    if (i <= t && (compute(i, t).maybe() || resident(i, t).maybe()))
      live += bytes(i);
  return live;
}

void Builder::addStageRows(int t) {
  // The stage's computations in index order: the fixed ones it runs and
  // the free ones it may run.
  std::vector<int> steps;
  for (int k : schedule_.compute[t].set_bits())
    if (!isFree(k))
      steps.push_back(k);
  for (int i : order_)
    if (i <= t && compute(i, t).maybe())
      steps.push_back(i);
  sortUnique(steps);
  double budget = double(problem_.budgetBytes / int64_t(unit_));

  // The live bytes as the stage starts, then after each computation.
  std::vector<std::pair<int, double>> terms;
  double constant = double(problem_.constantBytes) / unit_;
  for (int i : schedule_.resident[t].set_bits())
    if (!isFree(i))
      constant += bytes(i);
  for (int i : order_)
    if (Bit kept = resident(i, t); kept.isColumn())
      terms.push_back({kept.column, -bytes(i)});
  int previous = -1;
  for (int k : steps) {
    int live = model_.columns.add(0.0, budget, 0.0, /*integer=*/false);
    terms.push_back({live, 1.0});
    if (previous >= 0)
      terms.push_back({previous, -1.0});
    Bit computed = compute(k, t);
    if (computed.isColumn())
      terms.push_back({computed.column, -bytes(k)});
    else
      constant += bytes(k);
    model_.rows.add(terms, constant, constant);
    terms.clear();
    constant = 0.0;
    previous = live;
    // What computing `k` frees: each input and `k` itself whose last reader
    // in the stage is `k` and that is not kept into the next stage.
    llvm::SmallVector<int, 4> sources(dag_.deps[k].begin(),
                                      dag_.deps[k].end());
    sources.push_back(k);
    for (int i : sources) {
      llvm::SmallVector<std::pair<int, double>, 4> factors;
      bool freed = true;
      if (computed.isColumn())
        factors.push_back({computed.column, 1.0});
      auto notSet = [&](Bit bit) {
        if (bit.isColumn())
          factors.push_back({bit.column, -1.0});
        else if (bit.value)
          freed = false;
      };
      notSet(resident(i, t + 1));
      const std::vector<int> &readers = dag_.readers[i];
      for (auto it = llvm::upper_bound(readers, k);
           freed && it != readers.end() && *it <= t; ++it)
        notSet(compute(*it, t));
      if (!freed)
        continue;
      if (factors.empty()) {
        constant -= bytes(i);
        continue;
      }
      // FREE <= R for a computation that may not run, FREE <= 1 - X for a
      // bit X that would keep `i`; only its upper bound matters.
      int column = model_.columns.add(0.0, 1.0, 0.0, /*integer=*/false);
      for (auto [factor, sign] : factors)
        model_.rows.add({{column, 1.0}, {factor, -sign}}, -COIN_DBL_MAX,
                        sign > 0 ? 0.0 : 1.0);
      terms.push_back({column, bytes(i)});
    }
  }
}

void Builder::addMemoryRows() {
  double budget = double(problem_.budgetBytes / int64_t(unit_));
  for (int t = order_.front(); t < n_; ++t)
    if (stageCeiling(t) > budget)
      addStageRows(t);
}

NeighborhoodModel Builder::build() {
  if (order_.empty())
    return std::move(model_);
  placeFreeNodes();
  addDependencyRows();
  addKeepRows();
  addMemoryRows();
  for (int i : order_) {
    const FreeNode &free = node(i);
    for (size_t j = 0; j < free.recomputeStages.size(); ++j)
      model_.start.emplace_back(
          free.recomputeColumns[j],
          schedule_.compute[free.recomputeStages[j]].test(i) ? 1.0 : 0.0);
    for (size_t k = 0; k < free.keepColumns.size(); ++k)
      model_.start.emplace_back(
          free.keepColumns[k],
          schedule_.resident[free.events[k + 1]].test(i) ? 1.0 : 0.0);
  }
  return std::move(model_);
}

} // namespace

NeighborhoodModel buildNeighborhoodModel(const RematProblem &problem,
                                         const RematDag &dag,
                                         const RematSchedule &schedule,
                                         llvm::ArrayRef<int> freeNodes) {
  return Builder(problem, dag, schedule, freeNodes).build();
}

RematSchedule neighborhoodSchedule(const NeighborhoodModel &model,
                                   RematSchedule schedule,
                                   llvm::ArrayRef<double> values) {
  int n = int(schedule.compute.size());
  for (const FreeNode &free : model.freeNodes) {
    int i = free.node;
    for (int t = i + 1; t < n; ++t) {
      schedule.compute[t].reset(i);
      schedule.resident[t].reset(i);
    }
    for (size_t k = 0; k < free.keepColumns.size(); ++k)
      if (values[free.keepColumns[k]] > 0.5)
        for (int t = free.events[k] + 1; t <= free.events[k + 1]; ++t)
          schedule.resident[t].set(i);
    for (size_t j = 0; j < free.recomputeStages.size(); ++j) {
      int t = free.recomputeStages[j];
      if (values[free.recomputeColumns[j]] > 0.5 &&
          !schedule.resident[t].test(i))
        schedule.compute[t].set(i);
    }
  }
  return schedule;
}

} // namespace remat::ilp

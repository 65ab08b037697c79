//===- Budget.cpp - The plan chosen for a memory budget -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `buildTrainingGraph` with a budget: a `BudgetSearch` (BudgetSearch.h)
/// chooses the plan, which is swapped in, and the report says whether it
/// fits and, where it does not, by how much and why.
///
//===----------------------------------------------------------------------===//

#include "Training/BudgetSearch.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include "llvm/Support/BuryPointer.h"

#include <fmt/format.h>

namespace remat {
namespace {

/// The warning of a plan over `budget`: the lowest peak found, the floor no
/// plan goes below, then the plan's own notes.
std::string budgetWarning(const TrainingReport &report, int64_t budget,
                          const BudgetSearch &search) {
  std::string warning = fmt::format(
      "no plan reaches the budget of {} ({} bytes); the lowest peak found "
      "is {} ({} bytes, planner {})",
      formatBytes(budget), budget, formatBytes(report.planPeakBytes()),
      report.planPeakBytes(), report.planner);
  const std::optional<PeakFloor> &floor = search.floor();
  if (floor && budget < floor->bytes)
    warning += fmt::format("; no plan can fit: every plan peaks at {} ({} "
                           "bytes) or more, at {}",
                           formatBytes(floor->bytes), floor->bytes,
                           search.floorText());
  else if (floor)
    warning += fmt::format("; no plan can peak below {} ({} bytes), at {}",
                           formatBytes(floor->bytes), floor->bytes,
                           search.floorText());
  // One line says it all: the plan's own notes (its planner's, one that
  // recomputes for nothing) follow the verdict.
  for (const std::string &note : report.budgetNotes)
    warning += "; " + note;
  for (const std::string &note : report.warnings)
    warning += "; " + note;
  return warning;
}

/// The bound's figures in `report`, or a warning saying why there are none.
void reportRecomputeBound(const RecomputeCostBound &bound,
                          TrainingReport &report) {
  if (bound.infeasible) {
    report.warnings.push_back(fmt::format(
        "--bound: no plan that runs the ops in plain autodiff's scheduled "
        "order fits the budget ({} nodes)",
        bound.nodes));
    return;
  }
  if (!bound.failure.empty()) {
    report.warnings.push_back(
        fmt::format("--bound: no bound: {}", bound.failure));
    return;
  }
  report.recomputeLowerBound = bound.bound;
  // The bound is on plans within the budget.
  if (!*report.budgetMet)
    return;
  double recompute = double(report.flopsRecompute);
  if (bound.bound > 0)
    report.gapToBound = recompute / bound.bound - 1;
  else if (recompute == 0)
    report.gapToBound = 0.0;
}

} // namespace

absl::StatusOr<TrainingReport>
buildTrainingGraphInBudget(Graph &graph, const TrainingOptions &options,
                           std::optional<unsigned> jointForwardOps) {
  // Every candidate starts from a copy of the graph differentiated once;
  // the one chosen is swapped in, not built again.
  bool searching = options.planner == kAutoPlanner;
  BudgetSearch search(options, {.trySummed = searching,
                                .keepPlainGraph = searching,
                                .jointForwardOps = jointForwardOps});
  REMAT_ASSIGN_OR_RETURN(Trial best, search.run(graph));
  graph.swap(*best.build.graph);
  int64_t budget = search.budgetBytes();
  TrainingReport report = std::move(best.build.report);
  report.searchTimings = search.takeTimings();
  // Plain autodiff is the options' own, whatever the plan's aggregation (a
  // graph on devices is searched on that graph only).
  report.peakBytesBefore = search.plainSchedule().peakBytesAfter;
  report.budgetBytes = budget;
  report.budgetMet = report.planPeakBytes() <= budget;
  report.plansTried = search.plansTried();
  if (search.floor()) {
    report.peakFloorBytes = search.floor()->bytes;
    report.peakFloorOp = search.floorOp();
    if (search.floor()->bytes > 0)
      report.peakOverFloor =
          double(report.planPeakBytes()) / double(search.floor()->bytes) - 1;
  }
  if (!*report.budgetMet)
    report.warnings = {budgetWarning(report, budget, search)};
  if (const std::optional<RecomputeCostBound> &bound = search.recomputeBound())
    reportRecomputeBound(*bound, report);
  // The built graph fits: what the planner's model said of the budget does
  // not matter.
  report.budgetNotes.clear();
  // The differentiated graph, swapped out above, and the bases' own.
  if (!options.freeScratchGraphs) {
    llvm::BuryPointer(std::move(best.build.graph));
    search.buryScratchGraphs();
  }
  return report;
}

} // namespace remat

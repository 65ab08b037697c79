//===- Pictures.cpp - The SVG outputs of stats and opt ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Pictures.h"

#include "CommandIO.h"

#include "remat/Analysis/Memory.h"
#include "remat/IO/Timeline.h"
#include "remat/IR/Graph.h"
#include "remat/Training/Training.h"
#include "remat/Support/Status.h"

namespace remat::driver {

absl::StatusOr<std::vector<int64_t>>
plainTrainingTimeline(const Graph &forward, const TrainingOptions &options) {
  std::unique_ptr<Graph> plain = forward.clone();
  TrainingOptions plainOptions = options;
  plainOptions.planner = "none";
  plainOptions.budget.reset();
  REMAT_RETURN_IF_ERROR(buildTrainingGraph(*plain, plainOptions).status());
  return simulateMemory(*plain).timeline;
}

absl::Status writeTimeline(const std::string &path, const Graph &graph,
                           const TimelineExtras &extras,
                           llvm::raw_ostream &stdoutStream) {
  TimelineChart chart;
  chart.title = extras.title;
  chart.steps = profileMemoryByKind(graph);
  chart.reference = extras.plain;
  chart.referenceLabel = "plain autodiff";
  chart.budgetBytes = extras.budgetBytes;
  return writeOutput(path, stdoutStream, [&](llvm::raw_ostream &os) {
    printTimelineSvg(chart, os);
  });
}

} // namespace remat::driver

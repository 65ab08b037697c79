//===- Training.cpp - Forward graph to training graph -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Pass/Training.h"

#include "remat/Analysis/Cost.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/PassManager.h"
#include "remat/Pass/Passes.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/StringExtras.h"

namespace remat {

std::vector<ReportPassTime> reportPassTimes(const PipelineResult &result) {
  std::vector<ReportPassTime> times;
  for (const PassTiming &timing : result.timings)
    times.push_back({timing.argument, timing.seconds, timing.changed});
  return times;
}

std::vector<std::string> knownStrategies() { return {"none"}; }

absl::Status checkStrategyName(llvm::StringRef name) {
  std::vector<std::string> known = knownStrategies();
  if (!llvm::is_contained(known, name))
    return invalidArgument("unknown strategy '{}' (known: {})", name.str(),
                           llvm::join(known, ", "));
  return absl::OkStatus();
}

/// Ops other than input and param declarations, as `remat stats` counts them.
static int64_t countComputeOps(const Graph &graph) {
  return int64_t(graph.numOps()) - graph.inputs().size() -
         graph.params().size();
}

absl::StatusOr<TrainingReport>
buildTrainingGraph(Graph &graph, const TrainingOptions &options) {
  REMAT_RETURN_IF_ERROR(checkStrategyName(options.strategy));

  TrainingReport report;
  report.graph = graph.name().str();
  report.strategy = options.strategy;
  report.budgetBytes = options.budgetBytes;
  report.opsBefore = countComputeOps(graph);
  unsigned firstGradientOpId = graph.opIdBound();

  PassManager pm;
  pm.enableVerifier(options.verifyEach);
  pm.addPass(createAutodiffPass(options.autodiff));
  pm.addPass(createVerifyPass());
  REMAT_ASSIGN_OR_RETURN(PipelineResult pipeline, pm.run(graph));
  report.timings = reportPassTimes(pipeline);
  for (const ReportPassTime &timing : report.timings)
    report.passSeconds += timing.seconds;

  report.opsAfter = countComputeOps(graph);
  for (const Op &op : graph.ops()) {
    int64_t flops = opFlops(op);
    if (op.id() < firstGradientOpId)
      report.flopsForward += flops;
    else
      report.flopsBackward += flops;
  }
  MemoryProfile memory = simulateMemory(graph);
  report.peakBytesAfter = memory.peakBytes;
  report.peakBreakdownAfter = memory.peakBreakdown;
  report.peakBytesBefore = memory.peakBytes;
  int64_t trainingFlops = report.flopsForward + report.flopsBackward;
  report.overhead =
      trainingFlops ? double(report.flopsRecompute) / trainingFlops : 0.0;
  return report;
}

} // namespace remat

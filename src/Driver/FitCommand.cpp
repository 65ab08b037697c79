//===- FitCommand.cpp - remat fit -----------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The largest batch whose planned training graph fits a memory size
/// (`fitBatch`, remat/Training/Fit.h), for a zoo model through its `--batch`
/// option or for a graph file by scaling its inputs' leading dim. Prints the
/// batch, its plan and every batch tried, as text or JSON (docs/fit.md).
///
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"
#include "GraphInput.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Verifier.h"
#include "remat/Training/Fit.h"
#include "remat/Pass/Planner.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"
#include "remat/Zoo/Zoo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"

#include <fmt/format.h>

#include <cmath>

namespace remat::driver {
namespace {

const CommandSpec &fitSpec() {
  static const CommandSpec spec{
      .name = "fit",
      .synopsis = "MODEL|FILE --memory=SIZE [--max-overhead=X] "
                  "[--planner=P] [--max-batch=N] "
                  "[--report=FILE|-] [--key=value ...]",
      .description =
          "Finds the largest batch whose training graph, planned within "
          "--memory, fits it with\nrecompute overhead at most --max-overhead. "
          "MODEL is a zoo model (its options as\n`--key=value`; the batch is "
          "its `--batch`); FILE a forward graph (`-` for stdin)\nwhose inputs "
          "all lead with the batch dim, which is scaled. Fitting is assumed\n"
          "monotone in the batch: batches 1, 2, 4, ... are built until one "
          "fails, then the\nsearch bisects; the batch printed was built and "
          "fits, the next one was built and\ndoes not (docs/fit.md).",
      .options = withOnnxImportOptions({{.name = "memory",
            .valueName = "SIZE",
            .help = "The memory a training step must fit (`16GiB`, `512MB`)."},
           {.name = "max-overhead",
            .valueName = "X",
            .help = "The most recompute a plan may cost, as a share of "
                    "forward + backward FLOPs (default no limit)."},
           {.name = "planner",
            .valueName = "P",
            .help = "Plans each batch with P (default auto: the least "
                    "recompute within the memory)."},
           {.name = "strategy",
            .valueName = "P",
            .help = "The same as --planner (its older name)."},
           {.name = "max-batch",
            .valueName = "N",
            .help = "The largest batch tried (default and at most 65536, "
                    "the zoo's limit, for a model; default 16777216 for a "
                    "file)."},
           {.name = "report",
            .valueName = "FILE",
            .help = "Writes the result as JSON to FILE (`-` for stdout, "
                    "instead of the text)."}}),
      .acceptsExtraOptions = true};
  return spec;
}

/// A file's batch is any leading dim; unless told otherwise, the search
/// stops at this one (2^24), 8 doublings past the zoo's limit.
constexpr int64_t kFileMaxBatch = int64_t(1) << 24;

std::vector<std::string> zooModelNames() {
  std::vector<std::string> models;
  for (const ZooModelInfo &model : listZooModels())
    models.push_back(model.name);
  return models;
}

/// The options of `remat fit` on `source`, a zoo model when `zooModel`.
absl::StatusOr<FitOptions> fitOptionsFromArgs(const ParsedArgs &args,
                                              bool zooModel) {
  FitOptions options;
  std::optional<std::string> memory = args.get("memory");
  if (!memory)
    return invalidArgument("'remat fit' needs --memory=SIZE");
  if (llvm::StringRef(*memory).trim().endswith("%"))
    return invalidArgument("--memory takes a size, not a share of a peak "
                           "that changes with the batch: '{}'",
                           *memory);
  REMAT_ASSIGN_OR_RETURN(options.memoryBytes, parseByteSize(*memory));
  if (std::optional<std::string> text = args.get("max-overhead")) {
    double limit = 0;
    if (llvm::StringRef(*text).getAsDouble(limit) || !std::isfinite(limit) ||
        limit < 0)
      return invalidArgument("--max-overhead must be a number of at least 0, "
                             "not '{}'",
                             *text);
    options.maxOverhead = limit;
  }
  REMAT_ASSIGN_OR_RETURN(std::optional<std::string> strategy,
                         plannerOption(args));
  if (strategy) {
    if (*strategy != kAutoPlanner)
      REMAT_RETURN_IF_ERROR(
          PlannerRegistry::global().create(*strategy).status());
    options.training.planner = *strategy;
  }
  options.maxBatch = zooModel ? kZooMaxBatch : kFileMaxBatch;
  REMAT_ASSIGN_OR_RETURN(std::optional<int64_t> maxBatch,
                         integerOption(args, "max-batch", 1));
  if (maxBatch) {
    if (zooModel && *maxBatch > kZooMaxBatch)
      return invalidArgument("--max-batch must be at most {} for a zoo model "
                             "(its largest --batch), not {}",
                             kZooMaxBatch, *maxBatch);
    options.maxBatch = *maxBatch;
  }
  return options;
}

/// A zoo model when `name` is one, else the graph file `name`.
absl::StatusOr<BatchedGraphFn> batchedSource(const std::string &name,
                                             const ParsedArgs &args) {
  std::vector<std::string> models = zooModelNames();
  if (llvm::is_contained(models, name)) {
    ZooOptions options(args.extras.begin(), args.extras.end());
    if (options.count("batch"))
      return invalidArgument("'remat fit' chooses the batch: drop --batch");
    return BatchedGraphFn(
        [name,
         options](int64_t batch) -> absl::StatusOr<std::unique_ptr<Graph>> {
          ZooOptions withBatch = options;
          withBatch["batch"] = std::to_string(batch);
          REMAT_ASSIGN_OR_RETURN(auto graph, buildZooModel(name, withBatch));
          REMAT_RETURN_IF_ERROR(verify(*graph));
          return graph;
        });
  }
  if (name != "-" && !llvm::sys::fs::exists(name))
    return invalidArgument("'{}' is neither a zoo model ({}) nor a file", name,
                           fmt::join(models, ", "));
  if (!args.extras.empty())
    return invalidArgument("--{} is a zoo model option, but '{}' is a file",
                           args.extras.front().first, name);
  REMAT_ASSIGN_OR_RETURN(auto graph, readGraphInput(name, args));
  return rebatchingBuilder(*graph);
}

std::string overheadLimit(const FitReport &report) {
  return report.maxOverhead ? fmt::format("{}", *report.maxOverhead)
                            : "no limit";
}

void printFitText(const FitReport &report, llvm::raw_ostream &os) {
  const TrainingReport &plan = report.plan;
  os << fmt::format("graph @{}: largest batch {}{}\n", report.graph,
                    report.batch,
                    report.atMaxBatch ? " (the largest tried)" : "");
  os << fmt::format("  memory        {} ({} bytes)\n",
                    formatBytes(report.memoryBytes), report.memoryBytes);
  os << fmt::format("  max overhead  {}\n", overheadLimit(report));
  os << fmt::format("  plan          {}, {} kept tensors\n", plan.planner,
                    plan.checkpoints.size());
  os << fmt::format("  peak          {} ({} bytes)\n",
                    formatBytes(plan.planPeakBytes()), plan.planPeakBytes());
  os << fmt::format("  overhead      {:.4f}\n", plan.overhead);
  os << fmt::format("batches tried ({}):\n", report.trials.size());
  os << fmt::format("  {:>8}  {:>12}  {:>8}  {:<4}  {}\n", "batch", "peak",
                    "overhead", "fits", "planner");
  for (const FitTrial &trial : report.trials)
    os << fmt::format("  {:>8}  {:>12}  {:>8.4f}  {:<4}  {}\n", trial.batch,
                      formatBytes(trial.peakBytes), trial.overhead,
                      trial.fits ? "yes" : "no", trial.planner);
}

void printFitJson(const FitReport &report, llvm::raw_ostream &os) {
  const TrainingReport &plan = report.plan;
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("graph", report.graph);
    json.attribute("memory_bytes", report.memoryBytes);
    writeOptionalJson(json, "max_overhead", report.maxOverhead);
    json.attribute("batch", report.batch);
    json.attribute("at_max_batch", report.atMaxBatch);
    json.attributeObject("plan", [&] {
      json.attribute("strategy", plan.planner);
      json.attribute("peak_bytes", plan.planPeakBytes());
      json.attribute("flops_forward", plan.flopsForward);
      json.attribute("flops_backward", plan.flopsBackward);
      json.attribute("flops_recompute", plan.flopsRecompute);
      json.attribute("overhead", plan.overhead);
      writeCheckpointsJson(json, plan.checkpoints);
    });
    json.attributeArray("trials", [&] {
      for (const FitTrial &trial : report.trials)
        json.object([&] {
          json.attribute("batch", trial.batch);
          json.attribute("peak_bytes", trial.peakBytes);
          json.attribute("overhead", trial.overhead);
          json.attribute("strategy", trial.planner);
          json.attribute("fits", trial.fits);
        });
    });
  });
  os << "\n";
}

absl::Status runFitCommand(const ParsedArgs &args, CommandContext &ctx) {
  const CommandSpec &spec = fitSpec();
  REMAT_ASSIGN_OR_RETURN(std::string name,
                         singlePositional(spec, args, "MODEL|FILE"));
  REMAT_ASSIGN_OR_RETURN(
      FitOptions options,
      fitOptionsFromArgs(args, llvm::is_contained(zooModelNames(), name)));
  REMAT_ASSIGN_OR_RETURN(BatchedGraphFn build, batchedSource(name, args));
  REMAT_ASSIGN_OR_RETURN(FitReport report, fitBatch(build, options));
  std::optional<std::string> path = args.get("report");
  if (!path || *path != "-")
    printFitText(report, ctx.out);
  if (path)
    return writeOutput(path, ctx.out, [&](llvm::raw_ostream &os) {
      printFitJson(report, os);
    });
  return absl::OkStatus();
}

} // namespace

const Command kFitCommand{fitSpec, runFitCommand};

} // namespace remat::driver

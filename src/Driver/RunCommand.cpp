//===- RunCommand.cpp - remat run -------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs a graph on the reference executor and prints its measured peak memory,
/// time and outputs; optionally checks its gradients against finite
/// differences or compares its outputs with another graph's on the same data
/// (the fields are documented in docs/cli.md).
///
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"
#include "GraphInput.h"
#include "DataExchange.h"
#include "DistributedSummary.h"

#include "remat/Analysis/Memory.h"
#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/Runtime/Distributed.h"
#include "remat/Runtime/Executor.h"
#include "remat/Runtime/GradientCheck.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include "llvm/Support/JSON.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace remat::driver {
namespace {

const CommandSpec &runSpec() {
  static const CommandSpec spec{
      .name = "run",
      .synopsis = "FILE [--seed=N] [--feeds=F.npz] [--params=F.npz] "
                  "[--dump=DIR|F.npz] [--check-grad [--samples=N]] "
                  "[--compare=OTHER] [--tol=X] [--distributed] [--json] "
                  "[-o OUT]",
      .description =
          "Runs the graph in FILE (`-` for stdin) on the reference CPU "
          "executor, its inputs and\nparams filled from the seed, and prints "
          "the measured peak memory, the time and the\nname, shape and L2 "
          "norm of every output. With --check-grad, differentiates the\ngraph "
          "and checks every param's gradient against finite differences; "
          "with\n--compare, runs OTHER on the same data and compares the "
          "outputs they share.\nExits 1 when a check fails.",
      .options = withOnnxImportOptions({{.name = "seed",
                   .valueName = "N",
                   .help = "Seeds the inputs and params (default 0)."},
                  {.name = "feeds",
                   .valueName = "FILE",
                   .help = "Reads inputs by name from FILE (.npz or .npy); "
                           "the others keep their seeded data."},
                  {.name = "params",
                   .valueName = "FILE",
                   .help = "Reads params by name from FILE (.npz or .npy); "
                           "the others keep their seeded data. An ONNX model "
                           "(.onnx) feeds the inputs and params named like "
                           "its initializers (docs/import.md)."},
                  {.name = "dump",
                   .valueName = "DIR",
                   .help = "Writes every output to DIR/NAME.npy, or to one "
                           "archive when DIR ends in .npz."},
                  {.name = "dump-feeds",
                   .valueName = "DIR",
                   .help = "Writes every input and param as the run feeds "
                           "it (given or seeded), likewise: the values "
                           "another runtime needs to run the same step."},
                  {.name = "check-grad",
                   .help = "Checks the gradients of the loss (output 0) "
                           "against finite differences."},
                  {.name = "samples",
                   .valueName = "N",
                   .help = "Entries checked per param with --check-grad "
                           "(default 4)."},
                  {.name = "compare",
                   .valueName = "OTHER",
                   .help = "Also runs the graph in OTHER and compares the "
                           "outputs of the same name."},
                  {.name = "tol",
                   .valueName = "X",
                   .help = "Largest relative error allowed (default 1e-3 "
                           "with --check-grad, 0 with --compare)."},
                  {.name = "distributed",
                   .help = "Runs one device per MPI rank (under mpirun) "
                           "and reports each rank's figures."},
                  {.name = "json", .help = "Prints JSON instead of text."},
                  {.name = "output",
                   .shortName = 'o',
                   .valueName = "OUT",
                   .help = "Writes to OUT instead of stdout."}})};
  return spec;
}

/// What the options ask for, validated.
struct RunRequest {
  std::string path;
  uint64_t seed = 0;
  std::optional<std::string> feedsPath;
  std::optional<std::string> paramsPath;
  std::optional<std::string> dumpPath;
  std::optional<std::string> dumpFeedsPath;
  bool checkGrad = false;
  int64_t samples = 4;
  std::optional<std::string> comparePath;
  double tolerance = 0;
  bool json = false;
  bool distributed = false;
  /// The options an ONNX model given as FILE or OTHER is imported with.
  ParsedArgs args;
};

absl::StatusOr<RunRequest> readRequest(const CommandSpec &spec,
                                       const ParsedArgs &args) {
  RunRequest request;
  REMAT_ASSIGN_OR_RETURN(request.path, singlePositional(spec, args, "FILE"));
  request.args = args;
  // At most INT64_MAX, so that JSON prints it exactly.
  REMAT_ASSIGN_OR_RETURN(std::optional<int64_t> seed,
                         integerOption(args, "seed", 0));
  request.seed = uint64_t(seed.value_or(0));
  request.feedsPath = args.get("feeds");
  request.paramsPath = args.get("params");
  // An ONNX model runs on its own weights unless told otherwise.
  if (!request.paramsPath && isOnnxModelFile(request.path))
    request.paramsPath = request.path;
  request.dumpPath = args.get("dump");
  request.dumpFeedsPath = args.get("dump-feeds");
  request.checkGrad = args.has("check-grad");
  request.comparePath = args.get("compare");
  request.json = args.has("json");
  request.distributed = args.has("distributed");
  if (request.distributed && request.checkGrad)
    return invalidArgument(
        "options '--distributed' and '--check-grad' cannot be combined");
  if (request.checkGrad && request.comparePath)
    return invalidArgument(
        "options '--check-grad' and '--compare' cannot be combined");
  if (args.has("samples") && !request.checkGrad)
    return invalidArgument("option '--samples' needs '--check-grad'");
  REMAT_ASSIGN_OR_RETURN(std::optional<int64_t> samples,
                         integerOption(args, "samples", 1));
  request.samples = samples.value_or(request.samples);
  request.tolerance = request.checkGrad ? 1e-3 : 0;
  if (std::optional<std::string> tol = args.get("tol")) {
    if (!request.checkGrad && !request.comparePath)
      return invalidArgument(
          "option '--tol' needs '--check-grad' or '--compare'");
    if (llvm::StringRef(*tol).getAsDouble(request.tolerance) ||
        !std::isfinite(request.tolerance) || request.tolerance < 0)
      return invalidArgument(
          "option '--tol' must be a non-negative number, got '{}'", *tol);
  }
  return request;
}

/// One output as printed.
struct OutputSummary {
  std::string name;
  std::string type;
  std::vector<int64_t> shape;
  double l2 = 0;
};

std::vector<OutputSummary> summarize(const RunResult &run) {
  std::vector<OutputSummary> summaries;
  for (const auto &[name, tensor] : run.outputs) {
    OutputSummary &summary = summaries.emplace_back();
    summary.name = name;
    summary.type = tensor.type().str();
    summary.shape.assign(tensor.type().shape().begin(),
                         tensor.type().shape().end());
    double sum = 0;
    for (int64_t i = 0, e = tensor.numel(); i < e; ++i)
      sum += tensor.at(i) * tensor.at(i);
    summary.l2 = std::sqrt(sum);
  }
  return summaries;
}

/// Everything `remat run` reports.
struct RunReport {
  std::string graph;
  uint64_t seed = 0;
  RunResult run;
  int64_t simulatedPeakBytes = 0;
  std::vector<OutputSummary> outputs;
  double tolerance = 0;
  std::optional<GradientCheckReport> gradients;
  std::optional<std::string> comparePath;
  int64_t otherPeakBytes = 0;
  std::vector<OutputDiff> diffs;
  std::optional<DistributedSummary> distributed;
  /// A rank other than 0 of a distributed run: rank 0 reports.
  bool silent = false;
};

/// JSON has no infinity or NaN: those become null.
llvm::json::Value jsonNumber(double value) {
  if (std::isfinite(value))
    return value;
  return nullptr;
}

void printJson(const RunReport &report, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("graph", report.graph);
    json.attribute("seed", int64_t(report.seed));
    json.attribute("peak_bytes", report.run.peakBytes);
    json.attribute("simulated_peak_bytes", report.simulatedPeakBytes);
    json.attribute("seconds", report.run.seconds);
    json.attributeArray("outputs", [&] {
      for (const OutputSummary &output : report.outputs)
        json.object([&] {
          json.attribute("name", output.name);
          json.attribute("type", output.type);
          json.attributeArray("shape", [&] {
            for (int64_t dim : output.shape)
              json.value(dim);
          });
          json.attribute("l2", jsonNumber(output.l2));
        });
    });
    if (const auto &check = report.gradients) {
      json.attributeObject("check_grad", [&] {
        json.attribute("passed", check->passed);
        json.attribute("tolerance", report.tolerance);
        json.attribute("samples", int64_t(check->samples.size()));
        json.attribute("worst_error", jsonNumber(check->worstError));
        if (check->worstSample >= 0) {
          const GradientSample &worst = check->samples[check->worstSample];
          json.attributeObject("worst", [&] {
            json.attribute("param", worst.param);
            json.attribute("index", worst.index);
            json.attribute("analytic", jsonNumber(worst.analytic));
            json.attribute("numeric", jsonNumber(worst.numeric));
          });
        }
      });
    }
    if (report.distributed)
      printDistributedJson(*report.distributed, json);
    if (report.comparePath) {
      json.attributeObject("compare", [&] {
        json.attribute("other", *report.comparePath);
        json.attribute("other_peak_bytes", report.otherPeakBytes);
        json.attribute("tolerance", report.tolerance);
        json.attributeArray("outputs", [&] {
          for (const OutputDiff &diff : report.diffs)
            json.object([&] {
              json.attribute("name", diff.name);
              json.attribute("max_abs_diff", jsonNumber(diff.maxAbsDiff));
              json.attribute("max_rel_diff", jsonNumber(diff.maxRelDiff));
              json.attribute("type_mismatch", diff.typeMismatch);
            });
        });
      });
    }
  });
  os << '\n';
}

std::string bytesText(int64_t bytes) {
  return bytes < 1024 ? formatBytes(bytes)
                      : fmt::format("{} ({} bytes)", formatBytes(bytes), bytes);
}

void printText(const RunReport &report, llvm::raw_ostream &os) {
  os << fmt::format("graph        @{}\n", report.graph);
  os << fmt::format("peak memory  {}\n", bytesText(report.run.peakBytes));
  os << fmt::format("time         {:.6f} s\n", report.run.seconds);
  os << "outputs\n";
  for (const OutputSummary &output : report.outputs)
    os << fmt::format("  %{}  {}  l2 {:.6g}\n", output.name, output.type,
                      output.l2);
  if (const auto &check = report.gradients) {
    os << fmt::format("gradient check  {} entries, tolerance {:g}: {}\n",
                      check->samples.size(), report.tolerance,
                      check->passed ? "passed" : "FAILED");
    if (check->worstSample >= 0) {
      const GradientSample &worst = check->samples[check->worstSample];
      os << fmt::format("  worst relative error {:.3g} at %{}[{}]: analytic "
                        "{:.9g}, numeric {:.9g}\n",
                        worst.error, worst.param, worst.index, worst.analytic,
                        worst.numeric);
    }
  }
  if (report.distributed)
    printDistributedText(*report.distributed, os);
  if (report.comparePath) {
    os << fmt::format("compare with {} (peak memory {})\n", *report.comparePath,
                      bytesText(report.otherPeakBytes));
    for (const OutputDiff &diff : report.diffs) {
      if (diff.typeMismatch)
        os << fmt::format("  %{}  types differ\n", diff.name);
      else
        os << fmt::format("  %{}  max abs diff {:.3g}  max rel diff {:.3g}\n",
                          diff.name, diff.maxAbsDiff, diff.maxRelDiff);
    }
    double maxAbs = 0, maxRel = 0;
    for (const OutputDiff &diff : report.diffs) {
      maxAbs = std::max(maxAbs, diff.maxAbsDiff);
      maxRel = std::max(maxRel, diff.maxRelDiff);
    }
    os << fmt::format("  all {} shared outputs  max abs diff {:.3g}  max rel "
                      "diff {:.3g}\n",
                      report.diffs.size(), maxAbs, maxRel);
  }
}

/// The verdict of the checks, once the report is printed.
absl::Status verdict(const RunReport &report) {
  if (report.distributed && !report.distributed->replicasDiffering.empty())
    return invalidArgument("output %{} differs from the other devices' copies",
                           report.distributed->replicasDiffering.front());
  if (const auto &check = report.gradients; check && !check->passed) {
    const GradientSample &worst = check->samples[check->worstSample];
    return invalidArgument("gradient check failed: relative error {:.3g} at "
                           "%{}[{}] exceeds the tolerance {:g}",
                           worst.error, worst.param, worst.index,
                           report.tolerance);
  }
  for (const OutputDiff &diff : report.diffs)
    if (!(diff.maxRelDiff <= report.tolerance))
      return invalidArgument(
          "output %{} differs from {}: {} exceeds the tolerance {:g}",
          diff.name, *report.comparePath,
          diff.typeMismatch
              ? std::string("its type")
              : fmt::format("relative difference {:.3g}", diff.maxRelDiff),
          report.tolerance);
  return absl::OkStatus();
}

absl::StatusOr<RunReport> execute(const RunRequest &request,
                                  const CommandContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(auto graph,
                         readGraphInput(request.path, request.args));
  RunReport report;
  report.graph = graph->name().str();
  report.seed = request.seed;
  report.tolerance = request.tolerance;
  TensorMap feeds;
  if (request.feedsPath)
    REMAT_RETURN_IF_ERROR(
        loadLeafValues(*graph, *request.feedsPath, LeafKind::Input, feeds));
  if (request.paramsPath && isOnnxModelFile(*request.paramsPath)) {
    REMAT_ASSIGN_OR_RETURN(
        TensorMap weights,
        loadOnnxParams(*graph, *request.paramsPath, "are seeded", ctx.err));
    for (auto &[name, tensor] : weights)
      feeds.insert_or_assign(name, std::move(tensor));
  } else if (request.paramsPath) {
    REMAT_RETURN_IF_ERROR(
        loadLeafValues(*graph, *request.paramsPath, LeafKind::Param, feeds));
  }
  RunOptions options;
  options.seed = request.seed;
  options.feeds = &feeds;
  if (request.distributed) {
    REMAT_ASSIGN_OR_RETURN(DistributedRun run, runDistributed(*graph, options));
    report.silent = run.rank != 0;
    if (report.silent)
      return report;
    REMAT_ASSIGN_OR_RETURN(report.distributed,
                           summarizeDistributed(*graph, run));
    report.run = std::move(run.run);
  } else {
    REMAT_ASSIGN_OR_RETURN(report.run, runGraph(*graph, options));
  }
  if (request.dumpPath)
    REMAT_RETURN_IF_ERROR(dumpOutputs(report.run, *request.dumpPath));
  if (request.dumpFeedsPath)
    REMAT_RETURN_IF_ERROR(
        dumpLeaves(*graph, feeds, request.seed, *request.dumpFeedsPath));
  // A distributed run reports rank 0's device beside rank 0's measurement.
  report.simulatedPeakBytes = report.distributed
                                  ? report.distributed->simulated[0].peakBytes
                                  : simulateMemory(*graph).peakBytes;
  report.outputs = summarize(report.run);
  if (request.checkGrad) {
    GradientCheckOptions checkOptions;
    checkOptions.seed = request.seed;
    checkOptions.feeds = &feeds;
    checkOptions.samplesPerParam = request.samples;
    checkOptions.tolerance = request.tolerance;
    REMAT_ASSIGN_OR_RETURN(report.gradients,
                           checkGradients(*graph, checkOptions));
  }
  if (request.comparePath) {
    // The import options are FILE's; a text IR OTHER ignores them.
    REMAT_ASSIGN_OR_RETURN(auto other,
                           isOnnxModelFile(*request.comparePath)
                               ? readGraphInput(*request.comparePath,
                                                request.args)
                               : parseGraphFile(*request.comparePath));
    REMAT_ASSIGN_OR_RETURN(RunResult otherRun, runGraph(*other, options));
    report.comparePath = inputName(*request.comparePath);
    report.otherPeakBytes = otherRun.peakBytes;
    report.diffs = compareOutputs(report.run, otherRun);
    disposeGraph(std::move(other), ctx);
    if (report.diffs.empty())
      return invalidArgument("'{}' and '{}' have no output name in common",
                             inputName(request.path),
                             inputName(*request.comparePath));
  }
  disposeGraph(std::move(graph), ctx);
  return report;
}

absl::Status runRunCommand(const ParsedArgs &args, CommandContext &ctx) {
  const CommandSpec &spec = runSpec();
  REMAT_ASSIGN_OR_RETURN(RunRequest request, readRequest(spec, args));
  if (request.path == "-" && request.comparePath == "-")
    return invalidArgument("FILE and OTHER cannot both be stdin");
  REMAT_RETURN_IF_ERROR(checkOutputsSpareInputs(
      {{"-o", args.get("output")},
       {"--dump", request.dumpPath},
       {"--dump-feeds", request.dumpFeedsPath}},
      {{"the input graph", request.path},
       {"the --compare graph", request.comparePath},
       {"the --feeds file", request.feedsPath},
       {"the --params file", request.paramsPath}}));
  REMAT_ASSIGN_OR_RETURN(RunReport report, execute(request, ctx));
  if (report.silent)
    return absl::OkStatus();
  REMAT_RETURN_IF_ERROR(
      writeOutput(args.get("output"), ctx.out, [&](llvm::raw_ostream &os) {
        if (request.json)
          printJson(report, os);
        else
          printText(report, os);
      }));
  return verdict(report);
}

} // namespace

const Command kRunCommand{runSpec, runRunCommand};

} // namespace remat::driver

//===- OptCommand.cpp - remat opt -------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Turns a forward graph into its training graph with a checkpoint strategy
/// (`--strategy`, the default), or runs a textual pass pipeline (`-p`), and
/// prints the result. With `--split-input-file` each `// -----`-separated
/// graph is processed on its own and the outputs are separated the same way;
/// an error in one graph is reported and the next one still runs.
///
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"
#include "GraphInput.h"
#include "Pictures.h"

#include "remat/IO/MeasuredCosts.h"
#include "remat/IO/Report.h"
#include "remat/IO/SweepPlot.h"
#include "remat/IO/TextFormat.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Planner.h"
#include "remat/Pass/PassManager.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Training/Training.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"


#include <fmt/format.h>

#include <cmath>

namespace remat::driver {
namespace {

const CommandSpec &optSpec() {
  static const CommandSpec spec{
      .name = "opt",
      .synopsis = "FILE [--planner=P] [--report=FILE|-] [--explain] "
                  "[--force-data-dependency] [--aggregate-count=N] "
                  "[--aggregate-bytes=SIZE] [--costs=PROFILE] "
                  "[--budget=SIZE [--strict-budget]] "
                  "[--timeline=SVG] [--sweep [--plot=SVG]] "
                  "[--data-parallel=OPTIONS] "
                  "[-p PIPELINE] [--verify-each] "
                  "[--timing] [--split-input-file] [-o OUT]",
      .description =
          "Turns the forward graph in FILE (`-` for stdin; loss = output 0) "
          "into its training\ngraph: autodiff, a planner's choice of what "
          "to recompute, the recompute rewrite,\nscheduling and "
          "verification; the gradient of param `p` is the output `p.grad`.\n"
          "The planners (--planner, or --strategy; none, plain autodiff, "
          "by default) are listed\nbelow the options (docs/planners.md). "
          "With -p, runs the pass pipeline PIPELINE instead:\na "
          "comma-separated list of "
          "passes, each with optional options: `dce,cse,toposort`\nor "
          "`dce{keep-unused-leaves=false}`.\n"
          "The result is verified before it is printed.",
      .options = withOnnxImportOptions({
          {.name = "planner",
           .valueName = "P",
           .help = "The planner that chooses what to recompute (default "
                   "none; listed above)."},
          {.name = "strategy",
           .valueName = "P",
           .help = "The same as --planner (its older name)."},
          {.name = "budget",
           .valueName = "SIZE",
           .help = "A memory budget (`16GiB`, or `40%` of plain autodiff's "
                   "peak): the planner defaults to auto, which builds "
                   "candidate plans and keeps the least recompute within "
                   "the budget, judged by the final graph's simulated peak."},
          {.name = "bound",
           .valueName = "SECONDS",
           .help = "With --budget: also proves a lower bound on the "
                   "recompute cost of every plan within the budget, "
                   "solving for at most SECONDS; the report gains "
                   "recompute_lower_bound and gap_to_bound "
                   "(docs/planning-ilp.md)."},
          {.name = "costs",
           .valueName = "PROFILE",
           .help = "Plans with the op times of PROFILE, a runtime's profile "
                   "of this training graph's export (`ort-run "
                   "--profile`): every planner and the report then count "
                   "nanoseconds, not FLOPs (docs/export.md)."},
          {.name = "sweep",
           .help = "Prints the memory/overhead Pareto curve of the plans "
                   "--budget chooses from, as JSON, instead of the graph."},
          {.name = "data-parallel",
           .valueName = "OPTIONS",
           .help = "Ends with the pass `data-parallel{OPTIONS}` (e.g. "
                   "`towers=2,pack=4`); a budget is then per device, met by "
                   "every device's simulated peak (docs/multi-device.md)."},
          {.name = "plot",
           .valueName = "SVG",
           .help = "With --sweep, also draws the curve as an SVG picture "
                   "in the file SVG."},
          {.name = "timeline",
           .valueName = "SVG",
           .help = "Also draws the live bytes at every step of the result, "
                   "split by kind, as an SVG picture in the file SVG, over "
                   "plain autodiff's as an outline."},
          {.name = "progress",
           .help = "Prints planners' progress on stderr (the ilp planner's "
                   "incumbent, bound and gap as CBC finds them)."},
          {.name = "strict-budget",
           .help = "Exits 1 when no plan reaches the budget (by default a "
                   "warning, and the lowest peak found is built; the warning "
                   "also gives the peak floor no plan can go below)."},
          {.name = "explain",
           .help = "Prints the kept tensors, the segments and their cost "
                   "instead of the graph (which -o still writes)."},
          {.name = "aggregate-count",
           .valueName = "N",
           .help = "Autodiff sums a value's partial gradients early once "
                   "there are N of them (default 4)..."},
          {.name = "aggregate-bytes",
           .valueName = "SIZE",
           .help = "...and they exceed SIZE bytes together (default "
                   "128MiB; 0 sums every N at once). Unless either is given, "
                   "the budget search also tries N=2 and SIZE=0."},
          {.name = "force-data-dependency",
           .help = "Orders recomputation after its gradient with a data "
                   "dependency, for backends that drop control "
                   "dependencies."},
          {.name = "report",
           .valueName = "FILE",
           .help = "Writes the JSON report of the planner run to FILE (`-` "
                   "for stdout, which then needs -o for the graph)."},
          {.name = "pipeline",
           .shortName = 'p',
           .valueName = "PIPELINE",
           .help = "The passes to run, in order."},
          {.name = "verify-each",
           .help = "Verifies the graph after every pass; a failure names "
                   "the pass."},
          {.name = "timing",
           .help = "Prints each pass's run time and whether it changed the "
                   "graph to stderr; with --budget, also each candidate "
                   "plan's time and builds."},
          {.name = "split-input-file",
           .help = "Treats each `// -----`-separated part of FILE as its own "
                   "graph."},
          {.name = "output",
           .shortName = 'o',
           .valueName = "OUT",
           .help = "Writes to OUT instead of stdout."}})};
  return spec;
}

/// Every registered planner, `auto` last: the registry's spellings and
/// summaries, so that a new planner is listed without editing this help.
void printPlanners(llvm::raw_ostream &os) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const PlannerInfo *planner : PlannerRegistry::global().all()) {
    std::string spelling = planner->name;
    if (!planner->argument.empty())
      spelling += planner->needsArgument
                      ? fmt::format("={}", planner->argument)
                      : fmt::format("[={}]", planner->argument);
    rows.emplace_back(std::move(spelling), planner->summary);
  }
  rows.emplace_back(kAutoPlanner.str(),
                    "With --budget, and the default there: builds the plans "
                    "of every planner above that suits the graph and keeps "
                    "the least recompute within the budget");
  size_t width = 0;
  for (const auto &row : rows)
    width = std::max(width, row.first.size());
  os << "\nplanners (--planner=P, or --strategy=P):\n";
  for (const auto &[spelling, summary] : rows)
    os << fmt::format("  {:<{}}  {}\n", spelling, width, summary);
}

void printOptHelp(const ParsedArgs &, llvm::raw_ostream &os) {
  printUsage(optSpec(), os);
  printPlanners(os);
  std::vector<const PassInfo *> passes = PassRegistry::global().all();
  size_t width = 0;
  for (const PassInfo *pass : passes)
    width = std::max(width, pass->argument.size());
  os << "\npasses (options with their defaults):\n";
  for (const PassInfo *pass : passes) {
    os << fmt::format("  {:<{}}  {}\n", pass->argument, width, pass->summary);
    for (const PassOptionInfo &option : pass->options)
      os << fmt::format("    {{{}={}}}  {}\n", option.name, option.defaultValue,
                        option.help);
  }
}

void printTimings(llvm::ArrayRef<ReportPassTime> timings,
                  llvm::raw_ostream &err) {
  double total = 0;
  size_t width = 5;
  for (const ReportPassTime &timing : timings)
    width = std::max(width, timing.pass.size());
  err << "pass timing:\n";
  for (const ReportPassTime &timing : timings) {
    total += timing.seconds;
    err << fmt::format("  {:<{}}  {:10.6f} s  {}\n", timing.pass, width,
                       timing.seconds,
                       timing.changed ? "changed" : "unchanged");
  }
  err << fmt::format("  {:<{}}  {:10.6f} s\n", "total", width, total);
  err.flush();
}

/// The budget search's steps, after the chosen plan's passes: the one
/// autodiff (no plan built), then each candidate and its builds.
void printSearchTimings(llvm::ArrayRef<ReportSearchTime> timings,
                        llvm::raw_ostream &err) {
  if (timings.empty())
    return;
  // "  2 builds  1 unbuilt", or nothing for a row that built and planned
  // nothing.
  auto counts = [](int builds, int unbuilt, bool always) {
    std::string text;
    if (builds > 0 || always)
      text = fmt::format("  {} build{}", builds, builds == 1 ? "" : "s");
    if (unbuilt > 0)
      text += fmt::format("  {} unbuilt", unbuilt);
    return text;
  };
  ReportSearchTime total{"total"};
  size_t width = 5;
  for (const ReportSearchTime &timing : timings)
    width = std::max(width, timing.planner.size());
  err << "budget search timing:\n";
  for (const ReportSearchTime &timing : timings) {
    total.seconds += timing.seconds;
    total.builds += timing.builds;
    total.unbuilt += timing.unbuilt;
    err << fmt::format("  {:<{}}  {:10.6f} s{}\n", timing.planner, width,
                       timing.seconds,
                       counts(timing.builds, timing.unbuilt, false));
  }
  err << fmt::format("  {:<{}}  {:10.6f} s{}\n", total.planner, width,
                     total.seconds, counts(total.builds, total.unbuilt, true));
  err.flush();
}

/// What `remat opt` does to each graph: a planner run or a pipeline.
struct OptPlan {
  std::optional<std::string> pipeline;
  TrainingOptions training;
};

/// Runs `plan` on `graph` and verifies the result.
absl::Status optimize(Graph &graph, const OptPlan &plan, const ParsedArgs &args,
                      CommandContext &ctx) {
  std::optional<std::string> timeline = args.get("timeline");
  if (!plan.pipeline) {
    TimelineExtras extras;
    if (timeline) {
      REMAT_ASSIGN_OR_RETURN(extras.plain,
                             plainTrainingTimeline(graph, plan.training));
    }
    TrainingOptions training = plan.training;
    // LLVM's graveyard holds a few graphs: a split input's many graphs are
    // freed.
    training.freeScratchGraphs =
        !ctx.processExitsAfter || args.has("split-input-file");
    if (args.has("progress"))
      training.onProgress = [&ctx](llvm::StringRef line) {
        ctx.err << "remat: " << line << "\n";
      };
    REMAT_ASSIGN_OR_RETURN(TrainingReport report,
                           buildTrainingGraph(graph, training));
    // The budget search's own warning comes last, after the planner's.
    if (report.budgetMet == false && args.has("strict-budget"))
      return invalidArgument("{} (--strict-budget)", report.warnings.back());
    for (const std::string &warning : report.warnings)
      ctx.err << "remat: warning: " << warning << "\n";
    if (report.measuredCosts && report.measuredCosts->opsEstimated > 0)
      ctx.err << fmt::format(
          "remat: warning: the profile times no node of {} op{} with FLOPs "
          "(the first {}): they cost the measured ops' time per FLOP\n",
          report.measuredCosts->opsEstimated,
          report.measuredCosts->opsEstimated == 1 ? "" : "s",
          report.measuredCosts->firstEstimated);
    if (args.has("timing")) {
      printTimings(report.timings, ctx.err);
      printSearchTimings(report.searchTimings, ctx.err);
    }
    if (args.has("explain"))
      printExplanation(report, ctx.out);
    if (std::optional<std::string> path = args.get("report")) {
      REMAT_RETURN_IF_ERROR(
          writeOutput(path, ctx.out, [&](llvm::raw_ostream &os) {
            printReportJson(report, os);
          }));
    }
    if (!timeline)
      return absl::OkStatus();
    // Plain autodiff's outline would only retrace the result, unless the
    // budget search summed partial gradients otherwise.
    bool ownAggregation =
        report.aggregateCount == training.autodiff.aggregateCount &&
        report.aggregateBytes == training.autodiff.aggregateBytes;
    if (report.planner == "none" && ownAggregation)
      extras.plain.clear();
    extras.title = fmt::format(
        "@{}: live bytes, planner {}{}", report.graph, report.planner,
        ownAggregation ? "" : ", gradients summed at once");
    extras.budgetBytes = report.budgetBytes;
    return writeTimeline(*timeline, graph, extras, ctx.out);
  }
  PassManager pm;
  pm.enableVerifier(args.has("verify-each"));
  REMAT_RETURN_IF_ERROR(parsePassPipeline(*plan.pipeline, pm));
  REMAT_ASSIGN_OR_RETURN(PipelineResult result, pm.run(graph));
  if (args.has("timing"))
    printTimings(reportPassTimes(result), ctx.err);
  REMAT_RETURN_IF_ERROR(verify(graph));
  if (!timeline)
    return absl::OkStatus();
  TimelineExtras extras{.title = fmt::format("@{}: live bytes after {}",
                                             graph.name().str(),
                                             *plan.pipeline)};
  return writeTimeline(*timeline, graph, extras, ctx.out);
}

/// Checks the options that choose between a planner run and a pipeline,
/// before any input is read.
absl::StatusOr<OptPlan> planFromArgs(const ParsedArgs &args) {
  OptPlan plan;
  plan.pipeline = args.get("pipeline");
  REMAT_ASSIGN_OR_RETURN(std::optional<std::string> strategy,
                         plannerOption(args));
  if (plan.pipeline && strategy)
    return invalidArgument("'remat opt' takes --planner or -p, not both");
  std::optional<std::string> report = args.get("report");
  if (plan.pipeline && report)
    return invalidArgument("--report needs a planner run, not -p");
  if (report && args.has("split-input-file"))
    return invalidArgument("--report takes one graph, not --split-input-file");
  std::optional<std::string> output = args.get("output");
  bool explain = args.has("explain");
  if (report && *report == "-" && explain)
    return invalidArgument("--report=- and --explain both write to stdout: "
                           "give the report a file");
  if (report && *report == "-" && (!output || *output == "-"))
    return invalidArgument("--report=- writes the report to stdout: give the "
                           "graph a file with -o");
  for (llvm::StringRef picture : {"timeline", "plot"})
    if (args.get(picture).value_or("") == "-")
      return invalidArgument("--{} writes a picture to a file, not stdout",
                             picture.str());
  if (args.has("plot") && !args.has("sweep"))
    return invalidArgument("--plot draws the curve of --sweep: give --sweep");
  if (args.has("timeline") && args.has("split-input-file"))
    return invalidArgument(
        "--timeline takes one graph, not --split-input-file");
  for (llvm::StringRef option :
       {"explain", "force-data-dependency", "aggregate-count", "costs",
        "aggregate-bytes", "budget", "strict-budget", "sweep",
        "data-parallel", "progress", "bound"})
    if (plan.pipeline && args.has(option))
      return invalidArgument("--{} needs a planner run, not -p (pass "
                             "options go in the pipeline)",
                             option.str());
  if (explain && args.has("split-input-file"))
    return invalidArgument("--explain takes one graph, not --split-input-file");
  if (plan.pipeline) {
    // A malformed pipeline is reported before the input is read.
    PassManager check;
    REMAT_RETURN_IF_ERROR(parsePassPipeline(*plan.pipeline, check));
    return plan;
  }
  if (args.has("sweep"))
    for (llvm::StringRef option :
         {"strategy", "planner", "budget", "explain", "report",
          "split-input-file", "timeline", "bound"})
      if (args.has(option))
        return invalidArgument("--sweep builds every plan itself; it takes "
                               "no --{}",
                               option.str());
  std::optional<std::string> budget = args.get("budget");
  if (args.has("strict-budget") && !budget)
    return invalidArgument("--strict-budget needs --budget");
  if (budget) {
    // Checked now with a stand-in baseline: the real one is plain autodiff's
    // peak, known once the graph is read.
    REMAT_RETURN_IF_ERROR(parseByteSize(*budget, 1).status());
    plan.training.budget = *budget;
  }
  if (std::optional<std::string> bound = args.get("bound")) {
    double seconds = 0;
    if (!budget)
      return invalidArgument("--bound needs --budget: it bounds the plans "
                             "within a budget");
    if (args.has("data-parallel"))
      return invalidArgument("--bound takes a graph on one device, not "
                             "--data-parallel");
    if (llvm::StringRef(*bound).getAsDouble(seconds) || !(seconds > 0) ||
        !std::isfinite(seconds))
      return invalidArgument("--bound takes a positive number of seconds, "
                             "got '{}'",
                             *bound);
    plan.training.boundSeconds = seconds;
  }
  plan.training.planner =
      strategy.value_or(budget ? kAutoPlanner.str() : "none");
  if (plan.training.planner == kAutoPlanner && !budget)
    return invalidArgument("--planner=auto needs --budget=SIZE");
  if (std::optional<std::string> towers = args.get("data-parallel")) {
    plan.training.finalPipeline = fmt::format("data-parallel{{{}}}", *towers);
    PassManager check;
    REMAT_RETURN_IF_ERROR(
        parsePassPipeline(plan.training.finalPipeline, check));
  }
  if (std::optional<std::string> costs = args.get("costs")) {
    REMAT_ASSIGN_OR_RETURN(NodeProfile profile, readNodeProfile(*costs));
    plan.training.measuredCosts =
        std::make_shared<const NodeProfile>(std::move(profile));
  }
  plan.training.verifyEach = args.has("verify-each");
  plan.training.forceDataDependency = args.has("force-data-dependency");
  AutodiffOptions &autodiff = plan.training.autodiff;
  REMAT_ASSIGN_OR_RETURN(std::optional<int64_t> count,
                         integerOption(args, "aggregate-count", 2));
  autodiff.aggregateCount = count.value_or(autodiff.aggregateCount);
  if (std::optional<std::string> bytes = args.get("aggregate-bytes")) {
    REMAT_ASSIGN_OR_RETURN(autodiff.aggregateBytes, parseByteSize(*bytes));
  }
  plan.training.searchAggregation =
      !args.has("aggregate-count") && !args.has("aggregate-bytes");
  if (plan.training.planner != kAutoPlanner)
    REMAT_RETURN_IF_ERROR(
        PlannerRegistry::global().create(plan.training.planner).status());
  return plan;
}

absl::Status runOptCommand(const ParsedArgs &args, CommandContext &ctx) {
  const CommandSpec &spec = optSpec();
  REMAT_ASSIGN_OR_RETURN(std::string path,
                         singlePositional(spec, args, "FILE"));
  REMAT_RETURN_IF_ERROR(checkOutputsSpareInputs(
      {{"-o", args.get("output")},
       {"--report", args.get("report")},
       {"--timeline", args.get("timeline")},
       {"--plot", args.get("plot")}},
      {{"the input graph", path}, {"the --costs profile", args.get("costs")}}));
  REMAT_ASSIGN_OR_RETURN(OptPlan plan, planFromArgs(args));

  if (args.has("sweep")) {
    REMAT_ASSIGN_OR_RETURN(auto graph, readGraphInput(path, args));
    REMAT_ASSIGN_OR_RETURN(SweepReport sweep,
                           sweepTrainingPlans(*graph, plan.training));
    if (std::optional<std::string> plot = args.get("plot")) {
      REMAT_RETURN_IF_ERROR(
          writeOutput(plot, ctx.out, [&](llvm::raw_ostream &os) {
            printSweepSvg(sweep, os);
          }));
    }
    return writeOutput(args.get("output"), ctx.out, [&](llvm::raw_ostream &os) {
      printSweepJson(sweep, os);
    });
  }

  if (!args.has("split-input-file")) {
    REMAT_ASSIGN_OR_RETURN(auto graph, readGraphInput(path, args));
    REMAT_RETURN_IF_ERROR(optimize(*graph, plan, args, ctx));
    std::optional<std::string> output = args.get("output");
    absl::Status written = absl::OkStatus();
    // --explain takes stdout from the graph.
    if (!args.has("explain") || (output && *output != "-"))
      written =
          writeOutput(output, ctx.out,
                      [&](llvm::raw_ostream &os) { printGraph(*graph, os); });
    disposeGraph(std::move(graph), ctx);
    return written;
  }

  if (isOnnxModelFile(path))
    return invalidArgument("option '--split-input-file' cuts text IR, and "
                           "'{}' is an ONNX model",
                           path);
  // Each graph's error is reported as it happens; the others still run.
  REMAT_ASSIGN_OR_RETURN(std::vector<InputChunk> chunks, readSplitInput(path));
  std::string name = inputName(path);
  std::vector<std::string> printed;
  for (const InputChunk &chunk : chunks) {
    absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(chunk.text, name);
    absl::Status status = graph.status();
    if (status.ok())
      status = optimize(**graph, plan, args, ctx);
    if (status.ok())
      printed.push_back(printGraph(**graph));
    else
      reportError(status, ctx.err);
  }
  REMAT_RETURN_IF_ERROR(
      writeOutput(args.get("output"), ctx.out, [&](llvm::raw_ostream &os) {
        for (size_t i = 0; i < printed.size(); ++i)
          os << (i == 0 ? "" : "// -----\n") << printed[i];
      }));
  if (printed.size() != chunks.size())
    return invalidArgument("{} of {} graphs in '{}' failed",
                           chunks.size() - printed.size(), chunks.size(), name);
  return absl::OkStatus();
}

} // namespace

const Command kOptCommand{optSpec, runOptCommand, printOptHelp};

} // namespace remat::driver

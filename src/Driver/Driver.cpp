//===- Driver.cpp - The remat command-line tool as a library ----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Driver/Driver.h"

#include "Commands.h"

#include "remat/IR/Graph.h"
#include "remat/Runtime/Distributed.h"
#include "remat/Support/Status.h"

#include "llvm/Support/BuryPointer.h"

#include <fmt/format.h>

#include <algorithm>
#include <new>

namespace remat {
namespace {

using driver::Command;
using driver::CommandContext;
using driver::reportError;

struct Subcommand {
  llvm::StringLiteral name;
  llvm::StringLiteral synopsis;
  llvm::StringLiteral summary;
  const Command *command;
};

// Sorted by name.
constexpr Subcommand kSubcommands[] = {
    {"compare", "ACTUAL EXPECTED [--tolerance=R] [-o OUT]",
     "Compares the arrays of two numpy files by name, within a relative "
     "tolerance.",
     &driver::kCompareCommand},
    {"dot", "FILE [-o OUT]", "Writes a graph in graphviz's DOT language.",
     &driver::kDotCommand},
    {"export", "TRAIN.remat [--params=MODEL.onnx] [--opset=17] -o OUT.onnx",
     "Writes a training graph as an ONNX model that ONNX Runtime runs.",
     &driver::kExportCommand},
    {"fit",
     "MODEL|FILE --memory=SIZE [--max-overhead=X] [--planner=P] "
     "[--report=FILE|-]",
     "Finds the largest batch whose planned training graph fits a memory "
     "size.",
     &driver::kFitCommand},
    {"import",
     "MODEL.onnx [--input-shape=NAME=D0xD1x...] [--loss=LOSS] [-o OUT]",
     "Imports an ONNX model as a training graph.", &driver::kImportCommand},
    {"ops", "[--markdown]", "Prints the reference of every op kind.",
     &driver::kOpsCommand},
    {"opt",
     "FILE [[--planner=P] [--budget=SIZE|P%] [--explain] [--report=FILE|-] "
     "| -p PIPELINE] [--verify-each] [--timing] [-o OUT]",
     "Turns a forward graph into its training graph with a planner (or "
     "within a --budget), or runs a pass pipeline.",
     &driver::kOptCommand},
    {"run",
     "FILE [--seed=N] [--check-grad | --compare=OTHER] [--json] [-o OUT]",
     "Runs a graph on the reference CPU executor: outputs, measured peak "
     "memory, checks.",
     &driver::kRunCommand},
    {"stats", "FILE [--json]",
     "Prints ops, parameters, FLOPs and the peak memory of the schedule.",
     &driver::kStatsCommand},
    {"zoo", "MODEL [--key=value ...] [-o FILE]",
     "Prints the forward training graph of a model of the zoo.",
     &driver::kZooCommand},
};

void printToolUsage(llvm::raw_ostream &os) {
  os << "usage: remat SUBCOMMAND [ARGS...]\n\n"
        "Makes training graphs fit in memory by recomputing activations.\n\n"
        "subcommands:\n";
  for (const Subcommand &sub : kSubcommands)
    os << fmt::format("  remat {} {}\n      {}\n", sub.name.str(),
                      sub.synopsis.str(), sub.summary.str());
  os << "\n'remat SUBCOMMAND --help' describes each subcommand's options.\n"
        "Exit status: 0 on success, 1 on an error (one line on stderr).\n";
}

int dispatch(llvm::ArrayRef<std::string> args, llvm::raw_ostream &out,
             bool processExitsAfter, llvm::raw_ostream &err) {
  if (args.empty()) {
    reportError(
        absl::InvalidArgumentError("no subcommand given (see 'remat --help')"),
        err);
    return 1;
  }
  llvm::StringRef name = args.front();
  if (name == "--help" || name == "-h" || name == "help") {
    printToolUsage(out);
    return 0;
  }
  for (const Subcommand &sub : kSubcommands) {
    if (sub.name != name)
      continue;
    CommandContext ctx{out, err, processExitsAfter};
    absl::Status status =
        driver::runCommand(*sub.command, args.drop_front(), ctx);
    out.flush();
    if (status.ok())
      return 0;
    reportError(status, err);
    return 1;
  }
  std::vector<std::string> names;
  for (const Subcommand &sub : kSubcommands)
    names.push_back(sub.name.str());
  reportError(absl::InvalidArgumentError(
                  fmt::format("unknown subcommand '{}' (expected one of: {})",
                              name.str(), fmt::join(names, ", "))),
              err);
  return 1;
}

} // namespace

void driver::reportError(const absl::Status &status, llvm::raw_ostream &err) {
  // Under mpirun every rank runs the same command on the same files and
  // fails alike: one line, from rank 0.
  if (launcherRank() != 0)
    return;
  std::string message(status.message());
  std::replace(message.begin(), message.end(), '\n', ' ');
  if (llvm::StringRef(message).contains(": error: "))
    err << message << '\n';
  else
    err << "remat: error: " << message << '\n';
  err.flush();
}

absl::Status driver::runCommand(const Command &command,
                                llvm::ArrayRef<std::string> argv,
                                CommandContext &ctx) {
  const CommandSpec &spec = command.spec();
  REMAT_ASSIGN_OR_RETURN(ParsedArgs args, parseArgs(spec, argv));
  if (!args.help)
    return command.run(args, ctx);
  if (command.help)
    command.help(args, ctx.out);
  else
    printUsage(spec, ctx.out);
  return absl::OkStatus();
}

void driver::disposeGraph(std::unique_ptr<Graph> graph,
                          const CommandContext &ctx) {
  if (ctx.processExitsAfter)
    llvm::BuryPointer(std::move(graph));
}

int runRemat(llvm::ArrayRef<std::string> args, llvm::raw_ostream &out,
             llvm::raw_ostream &err, bool processExitsAfter) {
  try {
    return dispatch(args, out, processExitsAfter, err);
  } catch (const std::bad_alloc &) {
    reportError(absl::ResourceExhaustedError("out of memory"), err);
    return 1;
  }
}

int runRematMain(int argc, char **argv, llvm::raw_ostream &out,
                 llvm::raw_ostream &err) {
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  return runRemat(args, out, err, /*processExitsAfter=*/true);
}

} // namespace remat

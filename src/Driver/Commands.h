//===- Commands.h - The subcommands of the remat tool ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One `Command` per subcommand, each in its own file. The driver parses a
/// command's arguments (the words after its name) and prints its `--help`;
/// the command writes results to `out` or to its `-o` file and returns an
/// error status for the driver to print; it prints
/// nothing to `err` but diagnostics that are not errors (e.g. timings).
/// Private to src/Driver.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_DRIVER_COMMANDS_H
#define REMAT_SRC_DRIVER_COMMANDS_H

#include "Args.h"

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace remat {
class Graph;
} // namespace remat

namespace remat::driver {

/// The streams a command writes to.
struct CommandContext {
  llvm::raw_ostream &out;
  llvm::raw_ostream &err;
  /// True when the process ends right after the command (the `remat` binary),
  /// false when a test runs commands in-process.
  bool processExitsAfter = false;
};

/// Disposes of a command's graph. A process about to exit leaves it to the
/// operating system, as LLVM's tools do with their modules: freeing a
/// million-op graph op by op costs a tenth of `remat stats`. In-process
/// callers free it.
void disposeGraph(std::unique_ptr<Graph> graph, const CommandContext &ctx);

/// Prints `status` as one line on `err`: as-is when it already reads
/// `location: error: ...`, else after `remat: error: `.
void reportError(const absl::Status &status, llvm::raw_ostream &err);

/// A subcommand: its options, what it does with them parsed, and its
/// `--help` (the options' usage when null).
struct Command {
  const CommandSpec &(*spec)();
  absl::Status (*run)(const ParsedArgs &args, CommandContext &ctx);
  void (*help)(const ParsedArgs &args, llvm::raw_ostream &os) = nullptr;
};

/// Parses `argv` (the words after the subcommand's name) by `command`'s
/// options, then prints its help or runs it.
absl::Status runCommand(const Command &command,
                        llvm::ArrayRef<std::string> argv, CommandContext &ctx);

extern const Command kCompareCommand;
extern const Command kDotCommand;
extern const Command kExportCommand;
extern const Command kFitCommand;
extern const Command kImportCommand;
extern const Command kOpsCommand;
extern const Command kOptCommand;
extern const Command kRunCommand;
extern const Command kStatsCommand;
extern const Command kZooCommand;

} // namespace remat::driver

#endif // REMAT_SRC_DRIVER_COMMANDS_H

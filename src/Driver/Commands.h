//===- Commands.h - The subcommands of the remat tool ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One entry point per subcommand, each in its own file. A command reads its
/// arguments (the words after its name), writes results to `out` or to its
/// `-o` file, and returns an error status for the driver to print; it prints
/// nothing to `err` but diagnostics that are not errors (e.g. timings).
/// Private to src/Driver.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_DRIVER_COMMANDS_H
#define REMAT_SRC_DRIVER_COMMANDS_H

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

/// The signature every subcommand has.
using CommandFn = absl::Status (*)(llvm::ArrayRef<std::string> args,
                                   CommandContext &ctx);

/// Prints `status` as one line on `err`: as-is when it already reads
/// `location: error: ...`, else after `remat: error: `.
void reportError(const absl::Status &status, llvm::raw_ostream &err);

absl::Status runZooCommand(llvm::ArrayRef<std::string> args,
                           CommandContext &ctx);
absl::Status runStatsCommand(llvm::ArrayRef<std::string> args,
                             CommandContext &ctx);
absl::Status runOptCommand(llvm::ArrayRef<std::string> args,
                           CommandContext &ctx);
absl::Status runDotCommand(llvm::ArrayRef<std::string> args,
                           CommandContext &ctx);
absl::Status runExportCommand(llvm::ArrayRef<std::string> args,
                              CommandContext &ctx);
absl::Status runFitCommand(llvm::ArrayRef<std::string> args,
                           CommandContext &ctx);
absl::Status runImportCommand(llvm::ArrayRef<std::string> args,
                              CommandContext &ctx);
absl::Status runOpsCommand(llvm::ArrayRef<std::string> args,
                           CommandContext &ctx);
absl::Status runRunCommand(llvm::ArrayRef<std::string> args,
                           CommandContext &ctx);

} // namespace remat::driver

#endif // REMAT_SRC_DRIVER_COMMANDS_H

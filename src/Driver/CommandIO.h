//===- CommandIO.h - Input and output files of the subcommands ---*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writing a command's result to its `-o` file or to standard output, and
/// reading an input that `--split-input-file` cuts into several graphs.
/// Private to src/Driver.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_DRIVER_COMMANDIO_H
#define REMAT_SRC_DRIVER_COMMANDIO_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace remat::driver {

/// Runs `write` on the file `path`, or on `stdoutStream` when `path` is absent
/// or `-`. A write that fails (a full disk) removes the file, so that it
/// leaves no partial file behind.
absl::Status writeOutput(const std::optional<std::string> &path,
                         llvm::raw_ostream &stdoutStream,
                         llvm::function_ref<void(llvm::raw_ostream &)> write);

/// A file a command reads or writes, and what it is in messages: `-o` or
/// `--report` for an output, `the input graph` for an input.
struct NamedPath {
  llvm::StringRef what;
  std::optional<std::string> path;
};

/// Fails when an output is the regular file of an input, compared by
/// filesystem identity (another spelling of the path, or a link to it, is the
/// same file): writing it would destroy the input. Absent paths and `-`
/// (stdin, stdout) are never the same file.
absl::Status checkOutputsSpareInputs(llvm::ArrayRef<NamedPath> outputs,
                                     llvm::ArrayRef<NamedPath> inputs);

/// The line that separates graphs in a `--split-input-file` input.
inline constexpr llvm::StringLiteral kSplitMarker = "// -----";

/// One graph's text cut out of a larger input.
struct InputChunk {
  /// The chunk, preceded by one newline per line of the input before it so
  /// that parser locations are those of the whole file.
  std::string text;
};

/// Reads `path` (`-` for stdin) and cuts it at every line that starts with
/// `// -----`; an input without such lines is one chunk.
absl::StatusOr<std::vector<InputChunk>> readSplitInput(llvm::StringRef path);

/// The name messages give the input `path`: `<stdin>` for `-`.
std::string inputName(llvm::StringRef path);

} // namespace remat::driver

#endif // REMAT_SRC_DRIVER_COMMANDIO_H

//===- Args.h - Command-line arguments of the subcommands --------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A small parser for the subcommands' arguments: `--key=value` or
/// `--key value` for declared options, `--flag`, short `-o FILE` (or
/// `-oFILE`), positional arguments, `-` as a positional (stdin or stdout), and
/// `--` ending the options. A command may also accept options it does not
/// declare (`remat zoo`'s model options), written `--key=value` or `--flag`.
/// Private to src/Driver.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_DRIVER_ARGS_H
#define REMAT_SRC_DRIVER_ARGS_H

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace remat::driver {

/// One option a subcommand declares.
struct OptionSpec {
  /// The long name without dashes: `json` for `--json`.
  llvm::StringRef name;
  /// The short letter (`o` for `-o`); 0 for none.
  char shortName = 0;
  /// The placeholder in usage (`FILE`); empty for a flag, which takes no value.
  llvm::StringRef valueName;
  llvm::StringRef help;
};

/// The interface of one subcommand, for parsing and `--help`.
struct CommandSpec {
  /// `stats` for `remat stats`.
  llvm::StringRef name;
  /// What follows `remat <name>` in the usage line.
  llvm::StringRef synopsis;
  /// A paragraph printed under the usage line.
  llvm::StringRef description;
  std::vector<OptionSpec> options;
  /// Whether undeclared `--key=value` options are collected as extras rather
  /// than rejected.
  bool acceptsExtraOptions = false;
};

/// The arguments of one subcommand invocation.
class ParsedArgs {
public:
  /// Positional arguments in order (`-` included).
  std::vector<std::string> positional;
  /// Undeclared options in order, `--flag` as {"flag", "true"}; only for
  /// commands that accept them.
  std::vector<std::pair<std::string, std::string>> extras;
  /// Whether `--help` or `-h` was given; parse errors are then ignored.
  bool help = false;

  /// Whether the declared option `name` (long name) was given.
  bool has(llvm::StringRef name) const { return values_.count(name) != 0; }
  /// The value of the declared option `name`, or nullopt if not given.
  std::optional<std::string> get(llvm::StringRef name) const;

  /// Records the value of the declared option `name`; false if it already
  /// has one.
  bool setValue(llvm::StringRef name, std::string value) {
    return values_.try_emplace(name, std::move(value)).second;
  }

private:
  llvm::StringMap<std::string> values_;
};

/// Parses `args` (the words after the subcommand's name) against `spec`.
/// Unknown options, missing or unexpected values and repeated options are
/// errors naming the option and the command.
absl::StatusOr<ParsedArgs> parseArgs(const CommandSpec &spec,
                                     llvm::ArrayRef<std::string> args);

/// Fails unless exactly one positional argument was given; `what` names it in
/// the message (`FILE`).
absl::StatusOr<std::string> singlePositional(const CommandSpec &spec,
                                             const ParsedArgs &args,
                                             llvm::StringRef what);

/// Prints `spec`'s usage line, description and options.
void printUsage(const CommandSpec &spec, llvm::raw_ostream &os);

/// The value of the declared option `name`, an integer in [min, max]; nullopt
/// when not given. Anything else, an out-of-range number included, is an
/// error that names the range: `option '--samples' must be an integer from 1
/// to 9223372036854775807, got '0'`.
absl::StatusOr<std::optional<int64_t>>
integerOption(const ParsedArgs &args, llvm::StringRef name, int64_t min,
              int64_t max = std::numeric_limits<int64_t>::max());

/// `--strategy=S` or its alias `--planner=S`, if given; an error when both
/// are.
absl::StatusOr<std::optional<std::string>>
plannerOption(const ParsedArgs &args);

} // namespace remat::driver

#endif // REMAT_SRC_DRIVER_ARGS_H

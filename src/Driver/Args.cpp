//===- Args.cpp - Command-line arguments of the subcommands -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Args.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

namespace remat::driver {
namespace {

const OptionSpec *findLong(const CommandSpec &spec, llvm::StringRef name) {
  for (const OptionSpec &option : spec.options)
    if (option.name == name)
      return &option;
  return nullptr;
}

const OptionSpec *findShort(const CommandSpec &spec, char name) {
  for (const OptionSpec &option : spec.options)
    if (option.shortName != 0 && option.shortName == name)
      return &option;
  return nullptr;
}

/// How an option is spelled in messages: `-o` or `--json`.
std::string spelling(const OptionSpec &option, bool asShort) {
  return asShort ? fmt::format("-{}", option.shortName)
                 : fmt::format("--{}", option.name.str());
}

/// Whether `word` reads as an option rather than an option's value: it
/// starts with `-` and is neither `-` nor a negative number (`-1`, `-.5`).
bool looksLikeOption(llvm::StringRef word) {
  if (!word.startswith("-") || word == "-")
    return false;
  char second = word[1];
  return !(llvm::isDigit(second) || second == '.');
}

/// Walks the words once; the first error is kept so that a later `--help`
/// still wins.
class ArgParser {
public:
  ArgParser(const CommandSpec &spec, llvm::ArrayRef<std::string> args)
      : spec_(spec), args_(args) {}

  absl::StatusOr<ParsedArgs> parse() {
    bool optionsEnded = false;
    for (next_ = 0; next_ < args_.size();) {
      llvm::StringRef word = args_[next_++];
      if (optionsEnded || word == "-" || !word.startswith("-")) {
        parsed_.positional.push_back(word.str());
      } else if (word == "--") {
        optionsEnded = true;
      } else if (word == "--help" || word == "-h") {
        parsed_.help = true;
      } else if (word.startswith("--")) {
        parseLong(word.drop_front(2));
      } else {
        parseShort(word.drop_front(1));
      }
    }
    if (!parsed_.help && !error_.ok())
      return error_;
    return std::move(parsed_);
  }

private:
  void fail(absl::Status status) {
    if (error_.ok())
      error_ = std::move(status);
  }

  std::string seeHelp() const {
    return fmt::format("(see 'remat {} --help')", spec_.name.str());
  }

  void parseLong(llvm::StringRef body) {
    auto [name, value] = body.split('=');
    bool hasValue = body.contains('=');
    const OptionSpec *option = findLong(spec_, name);
    if (!option) {
      if (!spec_.acceptsExtraOptions || name.empty()) {
        fail(invalidArgument("unknown option '--{}' for 'remat {}' {}",
                             name.str(), spec_.name.str(), seeHelp()));
        return;
      }
      for (const auto &[seen, unused] : parsed_.extras)
        if (seen == name) {
          fail(invalidArgument("option '--{}' given twice", name.str()));
          return;
        }
      parsed_.extras.emplace_back(name.str(),
                                  hasValue ? value.str() : std::string("true"));
      return;
    }
    record(*option, /*asShort=*/false,
           hasValue ? std::optional<std::string>(value.str()) : std::nullopt);
  }

  void parseShort(llvm::StringRef body) {
    const OptionSpec *option = findShort(spec_, body.front());
    if (!option) {
      fail(invalidArgument("unknown option '-{}' for 'remat {}' {}", body.str(),
                           spec_.name.str(), seeHelp()));
      return;
    }
    llvm::StringRef attached = body.drop_front(1);
    if (!attached.empty() && option->valueName.empty()) {
      fail(invalidArgument("unknown option '-{}' for 'remat {}' {}", body.str(),
                           spec_.name.str(), seeHelp()));
      return;
    }
    record(*option, /*asShort=*/true,
           attached.empty() ? std::nullopt
                            : std::optional<std::string>(attached.str()));
  }

  /// Stores `option`, taking its value from `value` or the next word.
  void record(const OptionSpec &option, bool asShort,
              std::optional<std::string> value) {
    std::string name = spelling(option, asShort);
    if (option.valueName.empty()) {
      if (value) {
        fail(invalidArgument("option '{}' takes no value", name));
        return;
      }
      value = "";
    } else if (!value) {
      if (next_ == args_.size()) {
        fail(invalidArgument("option '{}' needs a value ({} {})", name, name,
                             option.valueName.str()));
        return;
      }
      // `--rounds -o x.onnx` forgot the value: taking `-o` would report
      // `x.onnx` as a stray positional. A value that starts with `-` is
      // written attached (`--name=-v`); `-` and negative numbers are values.
      llvm::StringRef next = args_[next_];
      if (looksLikeOption(next)) {
        fail(invalidArgument("option '{}' needs a value (--{}={}), not the "
                             "option '{}' after it",
                             name, option.name.str(), option.valueName.str(),
                             next.str()));
        return;
      }
      value = args_[next_++];
    }
    if (!parsed_.setValue(option.name, std::move(*value)))
      fail(invalidArgument("option '{}' given twice", name));
  }

  const CommandSpec &spec_;
  llvm::ArrayRef<std::string> args_;
  size_t next_ = 0;
  ParsedArgs parsed_;
  absl::Status error_;
};

} // namespace

std::optional<std::string> ParsedArgs::get(llvm::StringRef name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return std::nullopt;
  return it->second;
}

absl::StatusOr<ParsedArgs> parseArgs(const CommandSpec &spec,
                                     llvm::ArrayRef<std::string> args) {
  return ArgParser(spec, args).parse();
}

absl::StatusOr<std::string> singlePositional(const CommandSpec &spec,
                                             const ParsedArgs &args,
                                             llvm::StringRef what) {
  if (args.positional.size() == 1)
    return args.positional.front();
  if (args.positional.empty())
    return invalidArgument("'remat {}' needs a {} argument (see 'remat {} "
                           "--help')",
                           spec.name.str(), what.str(), spec.name.str());
  return invalidArgument("'remat {}' takes one {} argument, got {}: '{}' and "
                         "'{}'",
                         spec.name.str(), what.str(), args.positional.size(),
                         args.positional[0], args.positional[1]);
}

void printUsage(const CommandSpec &spec, llvm::raw_ostream &os) {
  os << "usage: remat " << spec.name << ' ' << spec.synopsis << "\n\n"
     << spec.description << "\n\noptions:\n";
  std::vector<std::pair<std::string, llvm::StringRef>> rows;
  for (const OptionSpec &option : spec.options) {
    std::string left =
        option.shortName
            ? fmt::format("-{}, --{}", option.shortName, option.name.str())
            : fmt::format("    --{}", option.name.str());
    if (!option.valueName.empty())
      left += fmt::format("={}", option.valueName.str());
    rows.emplace_back(std::move(left), option.help);
  }
  rows.emplace_back("-h, --help", "Prints this help.");
  size_t width = 0;
  for (const auto &row : rows)
    width = std::max(width, row.first.size());
  for (const auto &[left, help] : rows)
    os << fmt::format("  {:<{}}  {}\n", left, width, help.str());
}

absl::StatusOr<std::optional<int64_t>>
integerOption(const ParsedArgs &args, llvm::StringRef name, int64_t min,
              int64_t max) {
  std::optional<std::string> text = args.get(name);
  if (!text)
    return std::nullopt;
  int64_t value = 0;
  if (llvm::StringRef(*text).getAsInteger(10, value) || value < min ||
      value > max)
    return invalidArgument("option '--{}' must be an integer from {} to {}, "
                           "got '{}'",
                           name.str(), min, max, *text);
  return value;
}

absl::StatusOr<std::optional<std::string>>
plannerOption(const ParsedArgs &args) {
  std::optional<std::string> strategy = args.get("strategy");
  std::optional<std::string> planner = args.get("planner");
  if (strategy && planner)
    return invalidArgument("--planner and --strategy name the same thing: "
                           "give one");
  return strategy ? strategy : planner;
}

} // namespace remat::driver

//===- PipelineParser.cpp - Parsing textual pass pipelines ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The grammar, with whitespace allowed around every token:
///
///   pipeline := (entry (',' entry)*)?
///   entry    := name ('{' (option (',' option)*)? '}')?
///   option   := name '=' value
///   name     := [A-Za-z0-9_.-]+
///   value    := '"' [^"]* '"' | [^,{}=" \t\r\n]+
///
/// Every pass of the pipeline is created before any is added, so a failed
/// parse leaves the pass manager unchanged. Errors read
/// `pipeline:LINE:COL: error: ...` pointing at the offending text.
///
//===----------------------------------------------------------------------===//

#include "remat/IR/Diagnostics.h"
#include "remat/Pass/PassManager.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

namespace remat {
namespace {

/// Where a token starts, for messages.
using Offset = size_t;

/// One `key=value` as written.
struct WrittenOption {
  std::string key;
  std::string value;
  Offset keyAt;
  Offset valueAt;
};

class PipelineParser {
public:
  PipelineParser(llvm::StringRef text, const PassRegistry &registry)
      : text_(text), registry_(registry) {}

  absl::Status parse(std::vector<std::unique_ptr<Pass>> &passes) {
    skipSpace();
    if (atEnd())
      return absl::OkStatus();
    while (true) {
      REMAT_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, parseEntry());
      passes.push_back(std::move(pass));
      skipSpace();
      if (atEnd())
        return absl::OkStatus();
      if (!consume(','))
        return error(pos_, fmt::format("expected ',' or the end of the "
                                       "pipeline, got {}",
                                       describeHere()));
      skipSpace();
    }
  }

private:
  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }

  bool consume(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }

  void skipSpace() {
    while (!atEnd() && llvm::isSpace(text_[pos_]))
      ++pos_;
  }

  static bool isNameChar(char c) {
    return llvm::isAlnum(c) || c == '-' || c == '_' || c == '.';
  }

  /// The name at the cursor; empty if there is none.
  llvm::StringRef lexName() {
    Offset start = pos_;
    while (!atEnd() && isNameChar(text_[pos_]))
      ++pos_;
    return text_.slice(start, pos_);
  }

  /// What the cursor points at, for "expected X, got Y" messages.
  std::string describeHere() const {
    return atEnd() ? std::string("the end of the pipeline")
                   : fmt::format("'{}'", text_[pos_]);
  }

  absl::Status error(Offset at, llvm::StringRef message) const {
    SourceLoc loc{1, 1};
    for (Offset i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++loc.line;
        loc.column = 1;
      } else {
        ++loc.column;
      }
    }
    return absl::InvalidArgumentError(formatError("pipeline", loc, message));
  }

  absl::StatusOr<std::unique_ptr<Pass>> parseEntry() {
    Offset nameAt = pos_;
    llvm::StringRef name = lexName();
    if (name.empty())
      return error(nameAt,
                   fmt::format("expected a pass name, got {}", describeHere()));
    const PassInfo *info = registry_.lookup(name);
    if (!info) {
      std::string suggestion = registry_.suggest(name);
      return error(nameAt,
                   suggestion.empty()
                       ? fmt::format("unknown pass '{}'", name.str())
                       : fmt::format("unknown pass '{}'; did you mean '{}'?",
                                     name.str(), suggestion));
    }

    skipSpace();
    PassOptions options;
    if (consume('{')) {
      std::vector<WrittenOption> written;
      REMAT_RETURN_IF_ERROR(parseOptions(written));
      for (size_t i = 0; i < written.size(); ++i) {
        const WrittenOption &option = written[i];
        for (size_t j = 0; j < i; ++j)
          if (written[j].key == option.key)
            return error(option.keyAt,
                         fmt::format("option '{}' of pass '{}' is given twice",
                                     option.key, info->argument));
        absl::Status status = info->checkOption(option.key, option.value);
        if (!status.ok())
          return error(info->findOption(option.key) ? option.valueAt
                                                    : option.keyAt,
                       std::string(status.message()));
        options.set(option.key, option.value);
      }
    }

    absl::StatusOr<std::unique_ptr<Pass>> pass = info->factory(options);
    if (!pass.ok())
      return error(nameAt, std::string(pass.status().message()));
    return pass;
  }

  /// Parses the options after `{` up to and including `}`.
  absl::Status parseOptions(std::vector<WrittenOption> &written) {
    skipSpace();
    if (consume('}'))
      return absl::OkStatus();
    while (true) {
      WrittenOption option;
      option.keyAt = pos_;
      option.key = lexName().str();
      if (option.key.empty())
        return error(pos_, fmt::format("expected an option name, got {}",
                                       describeHere()));
      skipSpace();
      if (!consume('='))
        return error(pos_, fmt::format("expected '=' after option '{}', got {}",
                                       option.key, describeHere()));
      skipSpace();
      option.valueAt = pos_;
      REMAT_ASSIGN_OR_RETURN(option.value, lexValue());
      written.push_back(std::move(option));
      skipSpace();
      if (consume('}'))
        return absl::OkStatus();
      if (!consume(','))
        return error(pos_, fmt::format("expected ',' or '}}' in the options, "
                                       "got {}",
                                       describeHere()));
      skipSpace();
    }
  }

  absl::StatusOr<std::string> lexValue() {
    Offset start = pos_;
    if (consume('"')) {
      size_t close = text_.find('"', pos_);
      if (close == llvm::StringRef::npos)
        return error(start, "unterminated string in option value");
      std::string value = text_.slice(pos_, close).str();
      pos_ = close + 1;
      return value;
    }
    while (!atEnd()) {
      char c = text_[pos_];
      if (c == ',' || c == '{' || c == '}' || c == '=' || c == '"' ||
          llvm::isSpace(c))
        break;
      ++pos_;
    }
    if (pos_ == start)
      return error(start,
                   fmt::format("expected an option value, got {}", describeHere()));
    return text_.slice(start, pos_).str();
  }

  llvm::StringRef text_;
  const PassRegistry &registry_;
  Offset pos_ = 0;
};

} // namespace

absl::Status parsePassPipeline(llvm::StringRef pipeline, PassManager &pm,
                               const PassRegistry &registry) {
  std::vector<std::unique_ptr<Pass>> passes;
  REMAT_RETURN_IF_ERROR(PipelineParser(pipeline, registry).parse(passes));
  for (std::unique_ptr<Pass> &pass : passes)
    pm.addPass(std::move(pass));
  return absl::OkStatus();
}

absl::Status parsePassPipeline(llvm::StringRef pipeline, PassManager &pm) {
  return parsePassPipeline(pipeline, pm, PassRegistry::global());
}

} // namespace remat

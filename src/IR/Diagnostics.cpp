//===- Diagnostics.cpp - Error messages with locations ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Diagnostics.h"

#include "remat/IR/Graph.h"

#include <fmt/format.h>

namespace remat {

std::string formatError(llvm::StringRef file, SourceLoc loc,
                        llvm::StringRef message) {
  return fmt::format("{}:{}:{}: error: {}", file.empty() ? "<input>" : file.str(),
                     loc.line, loc.column, message.str());
}

absl::Status opError(const Op &op, llvm::StringRef message) {
  std::string text = fmt::format("'{}': {}", op.describe(), message.str());
  if (op.loc().isKnown())
    return absl::InvalidArgumentError(
        formatError(op.graph()->sourceName(), op.loc(), text));
  return absl::InvalidArgumentError(
      fmt::format("{}: error: {}", op.graph()->name().str(), text));
}

std::string opLocation(const Op &op) {
  if (!op.loc().isKnown())
    return fmt::format("'{}'", op.describe());
  llvm::StringRef file = op.graph()->sourceName();
  return fmt::format("{}:{}:{}", file.empty() ? "<input>" : file.str(),
                     op.loc().line, op.loc().column);
}

} // namespace remat

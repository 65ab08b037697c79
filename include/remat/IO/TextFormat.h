//===- TextFormat.h - Reading and writing the text IR ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The text IR (grammar in docs/text-format.md). Printing a parsed graph gives
/// the same text for canonical input; parse(print(g)) prints as print(g) always.
/// Malformed input yields `file:line:col: error: message`, never a crash.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_TEXTFORMAT_H
#define REMAT_IO_TEXTFORMAT_H

#include "remat/IR/Graph.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace remat {

/// Parses one graph from `text`; `sourceName` prefixes error locations and is
/// recorded as the graph's source name. The result is verified.
absl::StatusOr<std::unique_ptr<Graph>> parseGraph(llvm::StringRef text,
                                                  llvm::StringRef sourceName);

/// Reads `path` (`-` for stdin) and parses it.
absl::StatusOr<std::unique_ptr<Graph>> parseGraphFile(llvm::StringRef path);

/// Writes `graph` in canonical text form.
void printGraph(const Graph &graph, llvm::raw_ostream &os);
/// Returns `graph` in canonical text form.
std::string printGraph(const Graph &graph);

} // namespace remat

#endif // REMAT_IO_TEXTFORMAT_H

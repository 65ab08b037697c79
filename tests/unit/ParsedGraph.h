//===- ParsedGraph.h - Graphs of text IR for tests ---------------*- C++
//-*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Parses a test's text IR as the file `test.remat`, so that messages about
/// its ops are located.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_PARSEDGRAPH_H
#define REMAT_TESTS_UNIT_PARSEDGRAPH_H

#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"

#include <gtest/gtest.h>

#include <memory>

namespace remat {

/// `text` parsed, or null after a test failure.
inline std::unique_ptr<Graph> parsed(llvm::StringRef text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "test.remat");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

} // namespace remat

#endif // REMAT_TESTS_UNIT_PARSEDGRAPH_H

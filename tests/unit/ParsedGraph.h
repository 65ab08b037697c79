//===- ParsedGraph.h - Graphs of text IR for tests ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Parses a test's text IR as the file `test.remat`, so that messages about
/// its ops are located; and the smallest chain the tests share.
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

/// x -> a -> b -> c -> d -> loss: four `tanh` on a 16-byte param, a 4-byte
/// loss.
constexpr llvm::StringLiteral kTanhChain = R"(graph @chain {
  param %x : f32[4]
  %a = tanh(%x) : f32[4]
  %b = tanh(%a) : f32[4]
  %c = tanh(%b) : f32[4]
  %d = tanh(%c) : f32[4]
  %loss = reduce_sum(%d) {axes = [0]} : f32[]
  output %loss
})";

} // namespace remat

#endif // REMAT_TESTS_UNIT_PARSEDGRAPH_H

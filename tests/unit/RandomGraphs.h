//===- RandomGraphs.h - Random forward graphs for planner tests -*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Small random forward graphs that every planner accepts and the executor
/// runs in milliseconds, for tests that hold plans to what they claim.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_RANDOMGRAPHS_H
#define REMAT_TESTS_UNIT_RANDOMGRAPHS_H

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

namespace remat {

/// A random forward graph of `size` ops over [8] vectors: elementwise
/// unary and binary ops reading mostly recent values, a loss over the last.
/// About one op in six declares a new param, or one in 6 * `paramRarity`
/// (activations then outweigh the params, and budgets between the peak
/// floor and plain autodiff's peak leave room to plan).
inline std::unique_ptr<Graph> randomGraph(std::mt19937 &random, int size,
                                          unsigned paramRarity = 1) {
  auto graph = std::make_unique<Graph>("random");
  Builder b(*graph);
  const Type type(DType::F32, {8});
  std::vector<Value *> values = {b.input("x", type), b.param("w", type)};
  for (int i = 0; i < size; ++i) {
    auto operand = [&] {
      size_t back = std::min<size_t>(values.size(), 1 + random() % 4);
      return random() % 5 ? values[values.size() - back]
                          : values[random() % values.size()];
    };
    unsigned pick = random() % 6;
    if (pick == 0 && (paramRarity == 1 || random() % paramRarity == 0))
      values.push_back(b.param("w", type));
    else if (pick < 3)
      values.push_back(b.op(pick == 1 ? "sin" : "tanh", {operand()}));
    else
      values.push_back(b.op(pick == 3 ? "mul" : "add", {operand(), operand()}));
  }
  Value *sum = b.op("add", {values.back(), values[1]});
  graph->addOutput(b.op("reduce_sum", {sum}, {}, "loss"));
  EXPECT_TRUE(b.status().ok()) << b.status();
  return graph;
}

} // namespace remat

#endif // REMAT_TESTS_UNIT_RANDOMGRAPHS_H

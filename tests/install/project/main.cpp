//===- main.cpp - Uses an installed remat -----------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Builds a two-layer perceptron with the Builder, verifies it, and prints its
/// op counts, or the first error.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/TextFormat.h"
#include "remat/IR/Builder.h"
#include "remat/IR/Verifier.h"

#include <cstdio>
#include <string>

int main() {
  using namespace remat;
  Graph graph("installed");
  Builder b(graph);
  Value *x = b.input("x", Type(DType::F32, {8, 16}));
  Value *w1 = b.param("w1", Type(DType::F32, {16, 32}));
  Value *h = b.op("relu", {b.op("matmul", {x, w1})}, {}, "h");
  Value *w2 = b.param("w2", Type(DType::F32, {32, 4}));
  Value *y = b.op("matmul", {h, w2}, {}, "y");
  if (!b.status().ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(b.status().message()).c_str());
    return 1;
  }
  graph.addOutput(y);
  absl::Status status = verify(graph);
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  unsigned leaves = 0;
  for (const Op &op : graph.ops())
    leaves += op.hasFlag(OpFlagLeaf);
  std::printf("verified graph @%s: %zu ops, %u leaves\n%s",
              graph.name().str().c_str(), graph.numOps() - leaves, leaves,
              printGraph(graph).c_str());
  return 0;
}

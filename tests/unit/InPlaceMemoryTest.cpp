//===- InPlaceMemoryTest.cpp - Results written over dead operands ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `extern` ops that name the operands their result may be written over
/// (`inplace`, as Inductor writes a pointwise kernel's result into a dead
/// operand's buffer): the simulation's rule (docs/memory-model.md, "Results
/// written in place"), the verifier's checks, the peak floor that stays
/// under every such plan, and the recompute bound that refuses them. All
/// tensors are f32[1024], 4096 bytes ("K"); every figure is worked out by
/// hand.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Memory.h"
#include "remat/Analysis/PeakFloor.h"
#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/Training/Training.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t K = 4096;

/// `graph @g` of an input `%x` and `body`, with `%x` and each `%name` in
/// `body` f32[1024]: `op(NAME, OPERANDS, INPLACE)` writes one line.
std::string op(llvm::StringRef name, llvm::StringRef operands,
               llvm::StringRef inPlace = "") {
  std::string attrs = "fn = \"aten.mul.Tensor\", types = \"f32[1024]\"";
  if (!inPlace.empty())
    attrs += fmt::format(", inplace = [{}]", inPlace.str());
  return fmt::format("  %{} = extern({}) {{{}}}\n", name.str(), operands.str(),
                     attrs);
}

std::unique_ptr<Graph> parse(const std::string &body) {
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      parseGraph("graph @g {\n  input %x : f32[1024]\n" + body + "}\n", "g");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

const Value *value(const Graph &graph, llvm::StringRef name) {
  return graph.lookupValue(name);
}

TEST(InPlaceMemoryTest, AResultTakesTheStorageOfAnOperandNothingReadsLater) {
  // step 0: x                          x        = 1K
  // step 1: a = f(x)                   x, a     = 2K
  // step 2: b = f(a), over a           x, a     = 2K  (3K if not in place)
  // step 3: c = f(b), over b: an output, so a's storage lives to the end.
  std::unique_ptr<Graph> graph = parse(op("a", "%x") + op("b", "%a", "0") +
                                       op("c", "%b", "0") + "  output %c\n");
  ASSERT_TRUE(graph);
  EXPECT_THAT(simulateMemory(*graph).timeline,
              ElementsAre(K, 2 * K, 2 * K, 2 * K));
  Liveness liveness = computeLiveness(*graph);
  const Value *a = value(*graph, "a");
  EXPECT_EQ(liveness.owner[value(*graph, "b")->id()], a);
  EXPECT_EQ(liveness.owner[value(*graph, "c")->id()], a);
  EXPECT_EQ(liveness.firstStep[a->id()], 1);
  EXPECT_EQ(liveness.lastStep[a->id()], 3);
  EXPECT_EQ(liveness.firstStep[value(*graph, "b")->id()], -1);
}

TEST(InPlaceMemoryTest, AnOperandReadLaterKeepsItsStorage) {
  // step 2: b = f(a) cannot write over a, which d reads at step 3.
  // step 0: x 1K; 1: x, a 2K; 2: x, a, b 3K; 3: x, a, b, d 4K.
  std::unique_ptr<Graph> graph =
      parse(op("a", "%x") + op("b", "%a", "0") + op("d", "%a, %b") +
            "  output %d\n");
  ASSERT_TRUE(graph);
  EXPECT_THAT(simulateMemory(*graph).timeline,
              ElementsAre(K, 2 * K, 3 * K, 4 * K));
  Liveness liveness = computeLiveness(*graph);
  const Value *b = value(*graph, "b");
  EXPECT_EQ(liveness.owner[b->id()], b);
}

TEST(InPlaceMemoryTest, AViewReadLaterKeepsItsOwnersStorage) {
  // a's storage is read at step 4 through the view v: b (step 3) may not
  // take it. 0: x 1K; 1: x, a; 2: v is a; 3: x, a, b 3K; 4: x, a, b, d 4K.
  std::unique_ptr<Graph> graph = parse(
      op("a", "%x") +
      "  %v = extern_view(%a) {fn = \"aten.view.default\", "
      "types = \"f32[1024]\"}\n" +
      op("b", "%a", "0") + op("d", "%v, %b") + "  output %d\n");
  ASSERT_TRUE(graph);
  EXPECT_THAT(simulateMemory(*graph).timeline,
              ElementsAre(K, 2 * K, 2 * K, 3 * K, 4 * K));
}

TEST(InPlaceMemoryTest, LeavesAndOutputsAreNeverWrittenOver) {
  // b = f(x) over the input x, and c = f(a) over the output a: neither.
  // 0: x 1K; 1: x, a 2K; 2: x, a, b 3K; 3: x, a, b, c 4K.
  std::unique_ptr<Graph> graph =
      parse(op("a", "%x") + op("b", "%x", "0") + op("c", "%a, %b", "0") +
            "  output %a\n  output %c\n");
  ASSERT_TRUE(graph);
  EXPECT_THAT(simulateMemory(*graph).timeline,
              ElementsAre(K, 2 * K, 3 * K, 4 * K));
}

TEST(InPlaceMemoryTest, TheFirstListedOperandThatDiesIsTaken) {
  // c = f(a, b) lists a then b; a is read at step 4, so c takes b's storage.
  // 0: x 1K; 1: x, a 2K; 2: x, a, b 3K; 3: x, a, b (c) 3K;
  // 4: x, a, b (c), d 4K.
  std::unique_ptr<Graph> graph =
      parse(op("a", "%x") + op("b", "%x") + op("c", "%a, %b", "0, 1") +
            op("d", "%a, %c") + "  output %d\n");
  ASSERT_TRUE(graph);
  EXPECT_THAT(simulateMemory(*graph).timeline,
              ElementsAre(K, 2 * K, 3 * K, 3 * K, 4 * K));
  Liveness liveness = computeLiveness(*graph);
  EXPECT_EQ(liveness.owner[value(*graph, "c")->id()], value(*graph, "b"));
}

TEST(InPlaceMemoryTest, BadInPlaceOperandsAreLocatedErrors) {
  auto error = [](llvm::StringRef line) {
    absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(
        "graph @g {\n  input %x : f32[1024]\n  input %i : i64[1024]\n" +
            line.str() + "\n  output %y\n}\n",
        "bad");
    EXPECT_FALSE(graph.ok()) << line.str();
    return graph.ok() ? std::string() : std::string(graph.status().message());
  };
  std::string outOfRange = error(
      "  %y = extern(%x) {fn = \"f\", types = \"f32[1024]\", inplace = [1]}");
  EXPECT_THAT(outOfRange, HasSubstr("bad:4:"));
  EXPECT_THAT(outOfRange, HasSubstr("names operand 1 of 1"));
  EXPECT_THAT(error("  %y = extern(%x) {fn = \"f\", types = \"f32[1024]\", "
                    "inplace = [-1]}"),
              HasSubstr("names operand -1 of 1"));
  EXPECT_THAT(error("  %y = extern(%x, %x) {fn = \"f\", types = "
                    "\"f32[1024]\", inplace = [1, 1]}"),
              HasSubstr("names operand 1 twice"));
  EXPECT_THAT(error("  %y = extern(%x, %i) {fn = \"f\", types = "
                    "\"f32[1024]\", inplace = [1]}"),
              HasSubstr("f32[1024] cannot be written in place of operand 1 "
                        "(i64[1024])"));
  EXPECT_THAT(error("  %y = extern_view(%x) {fn = \"f\", types = "
                    "\"f32[1024]\", inplace = [0]}"),
              HasSubstr("inplace"));
}

TEST(InPlaceMemoryTest, ThePeakFloorStaysUnderAPlanWrittenInPlace) {
  // The simulated peak is 2K (the first test's chain, b an output). The
  // floor's bound at b's step is x + a + b less b, which a may hold: 2K,
  // where counting b's bytes too would claim 3K, above the plan.
  std::unique_ptr<Graph> graph =
      parse(op("a", "%x") + op("b", "%a", "0") + "  output %b\n");
  ASSERT_TRUE(graph);
  ASSERT_EQ(simulateMemory(*graph).peakBytes, 2 * K);
  absl::StatusOr<PeakFloor> floor =
      computePeakFloor(*graph, graph->opIdBound());
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_EQ(floor->bytes, 2 * K);
}

TEST(InPlaceMemoryTest, TheRecomputeBoundRefusesResultsWrittenInPlace) {
  // A joint graph: the forward a, b; the tangent t; the gradient g.
  std::unique_ptr<Graph> graph =
      parse(op("a", "%x") + op("b", "%a", "0") +
            "  %t = extern(%b) {fn = \"tangent\", types = \"f32[1024]\"}\n" +
            op("g", "%t, %a") + "  output %b\n  output %g\n");
  ASSERT_TRUE(graph);
  TrainingOptions options;
  options.planner = "none";
  options.budget = "100%";
  options.boundSeconds = 1;
  absl::StatusOr<TrainingReport> report =
      buildJointTrainingGraph(*graph, /*forwardOps=*/3, options);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(),
              HasSubstr("writes its result in place ('inplace'), which the "
                        "recompute bound does not model"));
}

} // namespace
} // namespace remat

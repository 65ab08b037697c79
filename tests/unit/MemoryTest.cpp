//===- MemoryTest.cpp - Liveness and memory simulation --------------------===//
//
// Every figure below is worked out by hand from docs/memory-model.md. All
// tensors are f32[1024], 4096 bytes, unless said otherwise; "K" is 4096.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Memory.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t K = 4096;
const Type kT(DType::F32, {1024});

std::vector<std::string> names(const std::vector<const Value *> &values) {
  std::vector<std::string> result;
  for (const Value *value : values)
    result.push_back(value->name().str());
  return result;
}

TEST(MemoryTest, ChainOfRelus) {
  // step 0: x          live x                 = 1K
  // step 1: a = relu x live x, a              = 2K
  // step 2: b = relu a live x, a (read), b    = 3K  <- peak, first reached
  // step 3: c = relu b live x, b (read), c    = 3K  (c is the output)
  Graph g("chain");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *bv = b.op("relu", {a}, {}, "b");
  g.addOutput(b.op("relu", {bv}, {}, "c"));
  ASSERT_TRUE(b.status().ok());
  MemoryProfile profile = simulateMemory(g);
  EXPECT_THAT(profile.timeline, ElementsAre(1 * K, 2 * K, 3 * K, 3 * K));
  EXPECT_EQ(profile.peakBytes, 3 * K);
  EXPECT_EQ(profile.peakStep, 2);
  EXPECT_THAT(names(profile.liveAtPeak), ElementsAre("x", "a", "b"));
  EXPECT_EQ(profile.peakBreakdown.inputs, K);
  EXPECT_EQ(profile.peakBreakdown.activations, 2 * K);
  EXPECT_EQ(profile.peakBreakdown.params, 0);
  EXPECT_EQ(profile.peakBreakdown.paramGrads, 0);
  EXPECT_EQ(profile.peakBreakdown.total(), profile.peakBytes);
}

TEST(MemoryTest, ViewsAliasAndExtendTheirOwner) {
  // step 0: x                         x                  = 1K
  // step 1: a = relu x                x, a               = 2K
  // step 2: v = identity a            x, a (v is a)      = 2K
  // step 3: w = identity v            x, a (w is a too)  = 2K
  // step 4: n = neg x                 x, a, n            = 3K
  // step 5: c = add(w, n)             x, a, n, c         = 4K  <- peak
  // a is last read through w at step 5, so it stays live from 1 to 5.
  Graph g("views");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *v = b.op("identity", {a}, {}, "v");
  Value *w = b.op("identity", {v}, {}, "w");
  Value *n = b.op("neg", {x}, {}, "n");
  g.addOutput(b.op("add", {w, n}, {}, "c"));
  ASSERT_TRUE(b.status().ok());
  MemoryProfile profile = simulateMemory(g);
  EXPECT_THAT(profile.timeline,
              ElementsAre(K, 2 * K, 2 * K, 2 * K, 3 * K, 4 * K));
  EXPECT_EQ(profile.peakStep, 5);
  EXPECT_THAT(names(profile.liveAtPeak), ElementsAre("x", "a", "n", "c"));

  Liveness liveness = computeLiveness(g);
  EXPECT_EQ(liveness.owner[w->id()], a);
  EXPECT_EQ(liveness.owner[v->id()], a);
  EXPECT_EQ(liveness.owner[a->id()], a);
  EXPECT_EQ(liveness.firstStep[a->id()], 1);
  EXPECT_EQ(liveness.lastStep[a->id()], 5);
  EXPECT_EQ(liveness.firstStep[w->id()], -1);
  EXPECT_EQ(liveness.lastStep[x->id()], 5);
  EXPECT_EQ(liveness.numSteps, 6);
}

TEST(MemoryTest, OutputsLiveToTheEndEvenThroughAView) {
  // step 0: x                         x            = 1K
  // step 1: a = relu x                x, a         = 2K
  // step 2: v = identity a (output)   x, a         = 2K
  // step 3: n = neg x                 x, a, n      = 3K
  // step 4: m = neg n (the loss)      x, a, n, m   = 4K
  // Without v as an output, a would die at step 2 and step 4 would hold 3K.
  Graph g("out-view");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *v = b.op("identity", {a}, {}, "v");
  Value *n = b.op("neg", {x}, {}, "n");
  Value *m = b.op("neg", {n}, {}, "m");
  ASSERT_TRUE(b.status().ok());
  g.addOutput(m);
  EXPECT_THAT(simulateMemory(g).timeline,
              ElementsAre(K, 2 * K, 2 * K, 2 * K, 3 * K));
  g.addOutput(v);
  EXPECT_THAT(simulateMemory(g).timeline,
              ElementsAre(K, 2 * K, 2 * K, 3 * K, 4 * K));
}

TEST(MemoryTest, UnreadValueLivesOnlyAtItsStep) {
  // step 0: x             x      = 1K
  // step 1: d = neg x     x, d   = 2K  <- peak, first reached; d dies here
  // step 2: a = relu x    x, a   = 2K  (a is the output)
  Graph g("dead");
  Builder b(g);
  Value *x = b.input("x", kT);
  b.op("neg", {x}, {}, "d");
  g.addOutput(b.op("relu", {x}, {}, "a"));
  ASSERT_TRUE(b.status().ok());
  MemoryProfile profile = simulateMemory(g);
  EXPECT_THAT(profile.timeline, ElementsAre(K, 2 * K, 2 * K));
  EXPECT_EQ(profile.peakStep, 1);
  EXPECT_THAT(names(profile.liveAtPeak), ElementsAre("x", "d"));
}

TEST(MemoryTest, LeavesLiveAtEveryStepWhereverDeclared) {
  // w is declared at step 2 but counts from step 0.
  // step 0: x               x, w          = 2K
  // step 1: a = relu x      x, w, a       = 3K
  // step 2: w               x, w, a       = 3K
  // step 3: c = mul(a, w)   x, w, a, c    = 4K  <- peak
  Graph g("late-param");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *w = b.param("w", kT);
  g.addOutput(b.op("mul", {a, w}, {}, "c"));
  ASSERT_TRUE(b.status().ok());
  MemoryProfile profile = simulateMemory(g);
  EXPECT_THAT(profile.timeline, ElementsAre(2 * K, 3 * K, 3 * K, 4 * K));
  EXPECT_EQ(profile.peakStep, 3);
  EXPECT_EQ(profile.peakBreakdown.params, K);
  EXPECT_EQ(profile.peakBreakdown.inputs, K);
  EXPECT_EQ(profile.peakBreakdown.activations, 2 * K);
}

TEST(MemoryTest, BreakdownSplitsParamGradients) {
  // Leaves x, w, q are live throughout (3K). Outputs: loss, w.grad, q.grad.
  // step 3: y = mul(x, w)           leaves + y                    = 4K
  // step 4: w.grad = neg x          leaves + y, w.grad            = 5K
  // step 5: q.grad = neg q          leaves + y, w.grad, q.grad    = 6K
  // step 6: loss = relu y           leaves + y, w.grad, q.grad, loss = 7K
  // q is an input, not a param, so q.grad counts as an activation.
  Graph g("grads");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *w = b.param("w", kT);
  Value *q = b.input("q", kT);
  Value *y = b.op("mul", {x, w}, {}, "y");
  Value *wGrad = b.op("neg", {x}, {}, "w.grad");
  Value *qGrad = b.op("neg", {q}, {}, "q.grad");
  Value *loss = b.op("relu", {y}, {}, "loss");
  ASSERT_TRUE(b.status().ok());
  g.setOutputs({loss, wGrad, qGrad});
  MemoryProfile profile = simulateMemory(g);
  EXPECT_THAT(profile.timeline,
              ElementsAre(3 * K, 3 * K, 3 * K, 4 * K, 5 * K, 6 * K, 7 * K));
  EXPECT_EQ(profile.peakStep, 6);
  EXPECT_EQ(profile.peakBreakdown.params, K);
  EXPECT_EQ(profile.peakBreakdown.inputs, 2 * K);
  EXPECT_EQ(profile.peakBreakdown.paramGrads, K);
  // y, q.grad and loss.
  EXPECT_EQ(profile.peakBreakdown.activations, 3 * K);
  EXPECT_EQ(profile.peakBreakdown.total(), 7 * K);
}

TEST(MemoryTest, SizesFollowTheDType) {
  // x: f64[10] = 80 bytes, y: i8[10] = 10 bytes, both live throughout.
  // steps 0, 1: x, y                 = 90
  // step 2: nx = neg x (f64, output) = 90 + 80 = 170
  // step 3: ny = neg y (i8, output)  = 170 + 10 = 180
  Graph g("dtypes");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F64, {10}));
  Value *y = b.input("y", Type(DType::I8, {10}));
  Value *nx = b.op("neg", {x}, {}, "nx");
  Value *ny = b.op("neg", {y}, {}, "ny");
  ASSERT_TRUE(b.status().ok());
  g.setOutputs({nx, ny});
  EXPECT_THAT(simulateMemory(g).timeline, ElementsAre(90, 90, 170, 180));
}

TEST(MemoryTest, EmptyGraph) {
  Graph g("empty");
  MemoryProfile profile = simulateMemory(g);
  EXPECT_EQ(profile.peakBytes, 0);
  EXPECT_EQ(profile.peakStep, -1);
  EXPECT_THAT(profile.timeline, IsEmpty());
  EXPECT_THAT(profile.liveAtPeak, IsEmpty());
}

TEST(MemoryScaleTest, LongChainPeaksEarly) {
  // x -> 100k relus: from step 2 on, x, the value read and the value made
  // are live: 3K at steps 2..100000; the first of them is the peak.
  Graph g("long");
  Builder b(g);
  Value *v = b.input("x", kT);
  constexpr int kLength = 100000;
  for (int i = 0; i < kLength; ++i)
    v = b.op("relu", {v});
  g.addOutput(v);
  ASSERT_TRUE(b.status().ok());
  MemoryProfile profile = simulateMemory(g);
  EXPECT_EQ(profile.timeline.size(), size_t(kLength) + 1);
  EXPECT_EQ(profile.peakBytes, 3 * K);
  EXPECT_EQ(profile.peakStep, 2);
  EXPECT_EQ(profile.timeline.back(), 3 * K);
}

} // namespace
} // namespace remat

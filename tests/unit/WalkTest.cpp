//===- WalkTest.cpp - Backward and forward walks --------------------------===//

#include "remat/Analysis/Walk.h"

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

std::vector<std::string> names(const std::vector<Op *> &ops) {
  std::vector<std::string> result;
  for (const Op *op : ops)
    result.push_back(op->result()->name().str());
  return result;
}

/// x -> a -> b, c = a + b, d = -x, e = c + d; d also waits for b (control).
///
///   x ──► a ──► b
///   │     └──┐  │ (control to d)
///   │        ▼  ▼
///   │        c ◄┘
///   └──► d ─────► e ◄── c
class WalkTest : public ::testing::Test {
protected:
  void SetUp() override {
    Builder b(g);
    Type t(DType::F32, {4});
    x = b.input("x", t);
    a = b.op("relu", {x}, {}, "a");
    bv = b.op("neg", {a}, {}, "b");
    c = b.op("add", {a, bv}, {}, "c");
    d = b.op("neg", {x}, {}, "d");
    e = b.op("add", {c, d}, {}, "e");
    ASSERT_TRUE(b.status().ok()) << b.status();
    d->producer()->addControlDep(bv->producer());
  }

  Op *op(Value *v) { return v->producer(); }

  Graph g{"walk"};
  Value *x, *a, *bv, *c, *d, *e;
};

TEST_F(WalkTest, BackwardReachesProducersAndControlDeps) {
  EXPECT_THAT(names(backwardWalk(g, {op(c)}).ops),
              ElementsAre("x", "a", "b", "c"));
  // d reads only x, but waits for b, which reads a.
  EXPECT_THAT(names(backwardWalk(g, {op(d)}).ops),
              ElementsAre("x", "a", "b", "d"));
  WalkOptions dataOnly;
  dataOnly.followControl = false;
  EXPECT_THAT(names(backwardWalk(g, {op(d)}, dataOnly).ops),
              ElementsAre("x", "d"));
}

TEST_F(WalkTest, ForwardReachesUsersAndControlUsers) {
  EXPECT_THAT(names(forwardWalk(g, {op(a)}).ops),
              ElementsAre("a", "b", "c", "d", "e"));
  WalkOptions dataOnly;
  dataOnly.followControl = false;
  EXPECT_THAT(names(forwardWalk(g, {op(bv)}, dataOnly).ops),
              ElementsAre("b", "c", "e"));
}

TEST_F(WalkTest, ExclusiveDropsEverySeedEvenWhenAnotherSeedReachesIt) {
  WalkOptions exclusive;
  exclusive.inclusive = false;
  // c reaches a, yet a is a seed and stays out.
  EXPECT_THAT(names(backwardWalk(g, {op(a), op(c)}, exclusive).ops),
              ElementsAre("x", "b"));
  WalkResult walk = forwardWalk(g, {op(x)}, exclusive);
  EXPECT_THAT(names(walk.ops), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_FALSE(walk.set.test(op(x)->id()));
  EXPECT_EQ(walk.set.count(), 5u);
}

TEST_F(WalkTest, StopValuesAreNotCrossed) {
  ValueSet stopAtA = makeValueSet(g, {a});
  WalkOptions options;
  options.stopAt = &stopAtA;
  // c reads a (stopped) and b; b reads a (stopped): neither a nor x is reached.
  EXPECT_THAT(names(backwardWalk(g, {op(c)}, options).ops),
              ElementsAre("b", "c"));
  // Forward from a: a's users are behind the stop value itself.
  EXPECT_THAT(names(forwardWalk(g, {op(a)}, options).ops), ElementsAre("a"));

  ValueSet stopAtC = makeValueSet(g, {c});
  options.stopAt = &stopAtC;
  options.followControl = false;
  // c is reached through a and b, but e only through c.
  EXPECT_THAT(names(forwardWalk(g, {op(a)}, options).ops),
              ElementsAre("a", "b", "c"));
}

TEST_F(WalkTest, WithinRestrictsTheWalkAndDropsOutsideSeeds) {
  OpSet within = makeOpSet(g, {op(a), op(bv), op(c), op(e)});
  WalkOptions options;
  options.within = &within;
  // d is outside, so e's path to x through d is cut; x is outside too.
  EXPECT_THAT(names(backwardWalk(g, {op(e)}, options).ops),
              ElementsAre("a", "b", "c", "e"));
  EXPECT_THAT(names(backwardWalk(g, {op(d)}, options).ops), IsEmpty());
}

TEST_F(WalkTest, SchedulePositionsGiveTheSameOrder) {
  SchedulePositions positions(g);
  EXPECT_EQ(positions[op(x)], 0u);
  EXPECT_EQ(positions[op(e)], 5u);
  WalkOptions options;
  options.positions = &positions;
  EXPECT_EQ(names(backwardWalk(g, {op(e)}, options).ops),
            names(backwardWalk(g, {op(e)}).ops));
  EXPECT_EQ(names(forwardWalk(g, {op(a)}, options).ops),
            names(forwardWalk(g, {op(a)}).ops));
}

TEST(WalkScaleTest, DeepChainDoesNotRecurse) {
  Graph g("deep");
  Builder b(g);
  Value *v = b.input("x", Type(DType::F32, {1}));
  Op *first = v->producer();
  constexpr int kDepth = 200000;
  for (int i = 0; i < kDepth; ++i)
    v = b.op("neg", {v});
  ASSERT_TRUE(b.status().ok());
  // The chain holds the input and kDepth negations.
  EXPECT_EQ(backwardWalk(g, {v->producer()}).ops.size(), size_t(kDepth) + 1);
  EXPECT_EQ(forwardWalk(g, {first}).ops.size(), size_t(kDepth) + 1);
}

} // namespace
} // namespace remat

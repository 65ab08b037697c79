//===- TopoSortTest.cpp - Deterministic topological orders ----------------===//

#include "remat/Analysis/TopoSort.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> names(const std::vector<Op *> &ops) {
  std::vector<std::string> result;
  for (const Op *op : ops)
    result.push_back(op->result()->name().str());
  return result;
}

std::vector<std::string> scheduleNames(Graph &g) {
  std::vector<std::string> result;
  for (Op &op : g.ops())
    result.push_back(op.result()->name().str());
  return result;
}

const Type kT(DType::F32, {4});

TEST(TopoSortTest, TopologicalScheduleIsKept) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *w = b.param("w", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  // c could run before a: Kahn's algorithm alone would not keep this order.
  Value *c = b.op("neg", {w}, {}, "c");
  b.op("add", {a, c}, {}, "d");
  ASSERT_TRUE(b.status().ok());
  absl::StatusOr<std::vector<Op *>> order = topologicalOrder(g);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(names(*order), scheduleNames(g));
}

TEST(TopoSortTest, ReadyOpsGoInScheduleOrder) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *bv = b.op("neg", {a}, {}, "b");
  b.op("neg", {x}, {}, "c");
  ASSERT_TRUE(b.status().ok());
  g.moveBefore(bv->producer(), a->producer());
  ASSERT_THAT(scheduleNames(g), ElementsAre("x", "b", "a", "c"));
  // x first; then a (position 2) and c (3) are ready and a goes; that frees
  // b (position 1), which now precedes c.
  absl::StatusOr<std::vector<Op *>> order = topologicalOrder(g);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_THAT(names(*order), ElementsAre("x", "a", "b", "c"));
}

TEST(TopoSortTest, ControlDependenciesAreEdges) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *c = b.op("neg", {x}, {}, "c");
  ASSERT_TRUE(b.status().ok());
  a->producer()->addControlDep(c->producer());
  absl::StatusOr<std::vector<Op *>> order = topologicalOrder(g);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_THAT(names(*order), ElementsAre("x", "c", "a"));
}

TEST(TopoSortTest, CycleNamesAnOpOnIt) {
  Graph g("cyclic");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *bv = b.op("neg", {a}, {}, "b");
  Value *d = b.op("neg", {bv}, {}, "d");
  ASSERT_TRUE(b.status().ok());
  // a -> b by data, b -> a by control: a cycle. d hangs off it and goes first
  // in the schedule, so the search must walk past it to name b or a.
  a->producer()->addControlDep(bv->producer());
  g.moveBefore(d->producer(), x->producer());
  absl::StatusOr<std::vector<Op *>> order = topologicalOrder(g);
  ASSERT_FALSE(order.ok());
  std::string message(order.status().message());
  EXPECT_THAT(message,
              HasSubstr("is on a cycle of data and control dependencies"));
  // From d: its pending producer b, then b's pending a, then a's pending
  // control dependency b again: b is named.
  EXPECT_THAT(message, HasSubstr("'%b = neg'"));
  EXPECT_FALSE(levelOrder(g).ok());
}

TEST(TopoSortTest, LevelsFollowLongestPathFromTheLeaves) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *w = b.param("w", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *bv = b.op("neg", {x}, {}, "b");
  Value *c = b.op("add", {a, w}, {}, "c");
  Value *d = b.op("add", {c, bv}, {}, "d");
  Value *e = b.op("neg", {x}, {}, "e");
  ASSERT_TRUE(b.status().ok());
  e->producer()->addControlDep(d->producer());
  // Leaves x and w have no operands (level 0); a and b read only x (1); c
  // reads a (2); d reads c (3); e reads x but waits for d (4).
  absl::StatusOr<std::vector<std::vector<Op *>>> levels = levelOrder(g);
  ASSERT_TRUE(levels.ok()) << levels.status();
  ASSERT_EQ(levels->size(), 5u);
  EXPECT_THAT(names((*levels)[0]), ElementsAre("x", "w"));
  EXPECT_THAT(names((*levels)[1]), ElementsAre("a", "b"));
  EXPECT_THAT(names((*levels)[2]), ElementsAre("c"));
  EXPECT_THAT(names((*levels)[3]), ElementsAre("d"));
  EXPECT_THAT(names((*levels)[4]), ElementsAre("e"));
}

TEST(TopoSortTest, LevelsKeepScheduleOrderWithinALevel) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *p = b.op("relu", {x}, {}, "p");
  Value *q = b.op("neg", {x}, {}, "q");
  ASSERT_TRUE(b.status().ok());
  g.moveBefore(q->producer(), p->producer());
  absl::StatusOr<std::vector<std::vector<Op *>>> levels = levelOrder(g);
  ASSERT_TRUE(levels.ok());
  ASSERT_EQ(levels->size(), 2u);
  EXPECT_THAT(names((*levels)[1]), ElementsAre("q", "p"));
}

TEST(TopoSortTest, EmptyGraph) {
  Graph g("empty");
  absl::StatusOr<std::vector<Op *>> order = topologicalOrder(g);
  ASSERT_TRUE(order.ok());
  EXPECT_THAT(*order, IsEmpty());
  absl::StatusOr<std::vector<std::vector<Op *>>> levels = levelOrder(g);
  ASSERT_TRUE(levels.ok());
  EXPECT_THAT(*levels, IsEmpty());
}

TEST(TopoSortTest, ReversedDeepChainIsSortedWithoutRecursion) {
  Graph g("deep");
  Builder b(g);
  Value *v = b.input("x", Type(DType::F32, {1}));
  constexpr int kDepth = 100000;
  std::vector<Op *> reversed;
  for (int i = 0; i < kDepth; ++i) {
    v = b.op("neg", {v});
    reversed.push_back(v->producer());
  }
  ASSERT_TRUE(b.status().ok());
  Op *input = &g.ops().front();
  std::reverse(reversed.begin(), reversed.end());
  reversed.push_back(input);
  g.setSchedule(reversed);
  absl::StatusOr<std::vector<Op *>> order = topologicalOrder(g);
  ASSERT_TRUE(order.ok());
  ASSERT_EQ(order->size(), size_t(kDepth) + 1);
  EXPECT_EQ((*order)[0], input);
  EXPECT_EQ(order->back(), v->producer());
  absl::StatusOr<std::vector<std::vector<Op *>>> levels = levelOrder(g);
  ASSERT_TRUE(levels.ok());
  EXPECT_EQ(levels->size(), size_t(kDepth) + 1);
}

} // namespace
} // namespace remat

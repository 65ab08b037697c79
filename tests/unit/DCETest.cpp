//===- DCETest.cpp - Dead code elimination ----------------------------------===//

#include "PassTestSupport.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Passes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace remat {
namespace {

using ::testing::ElementsAre;
using test::floatTensor;
using test::scheduleNames;

/// x, w -> h = matmul -> a = relu -> output; `u` is an unused input and
/// d1 = exp(h), d2 = neg(d1) lead nowhere.
class DCETest : public ::testing::Test {
protected:
  void SetUp() override {
    x = b.input("x", floatTensor({4, 8}));
    u = b.input("u", floatTensor({4}));
    w = b.param("w", floatTensor({8, 2}));
    h = b.op("matmul", {x, w}, {}, "h");
    a = b.op("relu", {h}, {}, "a");
    d1 = b.op("exp", {h}, {}, "d1");
    d2 = b.op("neg", {d1}, {}, "d2");
    g.addOutput(a);
    ASSERT_TRUE(b.status().ok()) << b.status();
  }

  Graph g{"dce"};
  Builder b{g};
  Value *x, *u, *w, *h, *a, *d1, *d2;
};

TEST_F(DCETest, RemovesOpsThatReachNoOutputAndKeepsLeaves) {
  absl::StatusOr<bool> changed = createDCEPass()->run(g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "u", "w", "h", "a"));
  EXPECT_EQ(g.inputs().size(), 2u);
  EXPECT_TRUE(verify(g).ok()) << verify(g);

  changed = createDCEPass()->run(g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed) << "a second run finds nothing dead";
}

TEST_F(DCETest, DropsUnusedLeavesOnRequest) {
  DCEPassOptions options;
  options.keepUnusedLeaves = false;
  ASSERT_TRUE(createDCEPass(options)->run(g).ok());
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "w", "h", "a"));
  EXPECT_EQ(g.inputs().size(), 1u);
  EXPECT_TRUE(verify(g).ok()) << verify(g);
}

TEST_F(DCETest, CollectionMembersAreLive) {
  g.addToCollection("checkpoints", d1);
  ASSERT_TRUE(createDCEPass()->run(g).ok());
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "u", "w", "h", "a", "d1"));
}

TEST_F(DCETest, ControlDependenciesOfLiveOpsAreLive) {
  // d2 has no data reader, but `a` must run after it, so d2 and (through its
  // operand) d1 stay.
  a->producer()->addControlDep(d2->producer());
  // `a` moves after d2 to keep the schedule topological.
  g.moveBefore(a->producer(), nullptr);
  ASSERT_TRUE(verify(g).ok()) << verify(g);
  ASSERT_TRUE(createDCEPass()->run(g).ok());
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "u", "w", "h", "d1", "d2", "a"));
}

TEST_F(DCETest, DeadOpsWithControlEdgesBetweenThemAreRemoved) {
  Op *late = b.create("tanh", {d2}, {}, {"late"});
  late->addControlDep(d1->producer());
  absl::StatusOr<bool> changed = createDCEPass()->run(g);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "u", "w", "h", "a"));
  EXPECT_TRUE(h->producer()->controlUsers().empty());
  EXPECT_TRUE(verify(g).ok()) << verify(g);
}

TEST(DCEScaleTest, DeepChainsGoWithoutRecursion) {
  // x then 200000 chained relus; the 100000th relu is the output. The live
  // walk runs 100000 producers deep and the other 100000 relus are erased:
  // 1 + 100000 ops remain. A recursive walk would overflow the stack.
  Graph g("chain");
  Builder b(g);
  Value *v = b.input("x", floatTensor({1}));
  for (int i = 1; i <= 200000; ++i) {
    v = b.op("relu", {v});
    if (i == 100000)
      g.addOutput(v);
  }
  ASSERT_TRUE(b.status().ok());
  ASSERT_TRUE(createDCEPass()->run(g).ok());
  EXPECT_EQ(g.numOps(), 100001u);
}

} // namespace
} // namespace remat

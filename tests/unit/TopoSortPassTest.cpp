//===- TopoSortPassTest.cpp - The toposort pass ------------------------------===//

#include "PassTestSupport.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/Passes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::floatTensor;
using test::scheduleNames;

/// x, w -> h = matmul -> a = relu; e = exp(x) on the side.
class TopoSortPassTest : public ::testing::Test {
protected:
  void SetUp() override {
    x = b.input("x", floatTensor({4, 8}));
    w = b.param("w", floatTensor({8, 2}));
    h = b.op("matmul", {x, w}, {}, "h");
    a = b.op("relu", {h}, {}, "a");
    e = b.op("exp", {x}, {}, "e");
    g.addOutput(a);
    g.addOutput(e);
    ASSERT_TRUE(b.status().ok()) << b.status();
  }

  Graph g{"topo"};
  Builder b{g};
  Value *x, *w, *h, *a, *e;
};

TEST_F(TopoSortPassTest, KeepsATopologicalScheduleAndSaysUnchanged) {
  absl::StatusOr<bool> changed = createTopoSortPass()->run(g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "w", "h", "a", "e"));
}

TEST_F(TopoSortPassTest, RepairsAScheduleThatRunsAnOpTooEarly) {
  // Schedule e, x, w, h, a: e reads x before x runs. Among ready ops the one
  // earlier in this schedule goes first: x (w is later), then e becomes ready
  // and precedes w, then w, h, a.
  g.moveBefore(e->producer(), x->producer());
  ASSERT_FALSE(verify(g).ok());
  absl::StatusOr<bool> changed = createTopoSortPass()->run(g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "e", "w", "h", "a"));
  EXPECT_TRUE(verify(g).ok()) << verify(g);
}

TEST_F(TopoSortPassTest, FollowsControlDependencies) {
  // `h` must now run after `e`, which is scheduled last.
  h->producer()->addControlDep(e->producer());
  absl::StatusOr<bool> changed = createTopoSortPass()->run(g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "w", "e", "h", "a"));
  EXPECT_TRUE(verify(g).ok()) << verify(g);
}

TEST_F(TopoSortPassTest, FailsOnACycleAndLeavesTheScheduleAlone) {
  // a reads h, and h now waits for a: the cycle h -> a -> h.
  h->producer()->addControlDep(a->producer());
  absl::StatusOr<bool> changed = createTopoSortPass()->run(g);
  ASSERT_FALSE(changed.ok());
  EXPECT_THAT(std::string(changed.status().message()), HasSubstr("cycle"));
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "w", "h", "a", "e"));
}

} // namespace
} // namespace remat

//===- CSETest.cpp - Common subexpression elimination -----------------------===//

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

/// Runs CSE, expecting success and a verified result; returns "changed".
bool runCSE(Graph &g) {
  absl::StatusOr<bool> changed = createCSEPass()->run(g);
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(verify(g).ok()) << verify(g);
  return changed.ok() && *changed;
}

TEST(CSETest, MergesDuplicatesAndTheirUsersInCascade) {
  Graph g("cse");
  Builder b(g);
  Value *x = b.input("x", floatTensor({4}));
  Value *a1 = b.op("relu", {x}, {}, "a1");
  Value *a2 = b.op("relu", {x}, {}, "a2");
  // e2 reads a2, so it matches e1 only once a2 has been replaced by a1.
  Value *e1 = b.op("exp", {a1}, {}, "e1");
  Value *e2 = b.op("exp", {a2}, {}, "e2");
  Value *s = b.op("add", {e1, e2}, {}, "s");
  g.addOutput(s);
  g.addToCollection("checkpoints", a2);
  ASSERT_TRUE(b.status().ok());

  EXPECT_TRUE(runCSE(g));
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "a1", "e1", "s"));
  EXPECT_EQ(s->producer()->operand(0), e1);
  EXPECT_EQ(s->producer()->operand(1), e1);
  EXPECT_THAT(g.collection("checkpoints"), ElementsAre(a1));
  EXPECT_FALSE(runCSE(g)) << "nothing left to merge";
}

TEST(CSETest, OperandOrderAndAttributesMatter) {
  Graph g("cse");
  Builder b(g);
  Value *x = b.input("x", floatTensor({4}));
  Value *y = b.input("y", floatTensor({4}));
  Value *s1 = b.op("sub", {x, y}, {}, "s1");
  Value *s2 = b.op("sub", {y, x}, {}, "s2");
  auto constant = [&](double value, llvm::StringRef name) {
    return b.op("constant", {},
                {{"value", value}, {"shape", std::vector<int64_t>{4}}}, name);
  };
  Value *c1 = constant(1.0, "c1");
  Value *c2 = constant(2.0, "c2");
  Value *c3 = constant(1.0, "c3");
  for (Value *v : {s1, s2, c1, c2, c3})
    g.addOutput(b.op("neg", {v}));
  ASSERT_TRUE(b.status().ok());

  EXPECT_TRUE(runCSE(g));
  // Only c3 (same attributes as c1) goes; its neg then matches c1's neg.
  EXPECT_EQ(g.lookupValue("c3"), nullptr);
  EXPECT_NE(g.lookupValue("s2"), nullptr);
  EXPECT_NE(g.lookupValue("c2"), nullptr);
}

TEST(CSETest, RandomOpsMergeOnlyWithTheSameSeed) {
  Graph g("cse");
  Builder b(g);
  Value *x = b.input("x", floatTensor({4}));
  Value *d1 = b.op("dropout", {x}, {{"rate", 0.5}, {"seed", 1}}, "d1");
  Value *d2 = b.op("dropout", {x}, {{"rate", 0.5}, {"seed", 2}}, "d2");
  Value *d3 = b.op("dropout", {x}, {{"rate", 0.5}, {"seed", 1}}, "d3");
  g.addOutput(b.op("add_n", {d1, d2, d3}, {}, "sum"));
  ASSERT_TRUE(b.status().ok());

  EXPECT_TRUE(runCSE(g));
  // d3 replays d1's mask (same key), d2 draws another one.
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "d1", "d2", "sum"));
  EXPECT_THAT(g.lookupValue("sum")->producer()->operands(),
              ElementsAre(d1, d2, d1));
}

TEST(CSETest, ControlDependenciesRegionAndDeviceKeepCopiesApart) {
  // The shape of a recompute rewrite: `r` copies `a` in its own region and
  // runs after `late`. CSE must not fold the copy back into the original.
  Graph g("cse");
  Builder b(g);
  Value *x = b.input("x", floatTensor({4}));
  Value *a = b.op("tanh", {x}, {}, "a");
  Value *late = b.op("exp", {x}, {}, "late");
  Value *ordered = b.op("tanh", {x}, {}, "ordered");
  ordered->producer()->addControlDep(late->producer());
  b.setRegion("recompute/a");
  Value *tagged = b.op("tanh", {x}, {}, "tagged");
  b.setRegion("");
  b.setDevice("gpu:1");
  Value *placed = b.op("tanh", {x}, {}, "placed");
  b.setDevice("");
  g.addOutput(b.op("add_n", {a, ordered, tagged, placed, late}, {}, "sum"));
  ASSERT_TRUE(b.status().ok());

  EXPECT_FALSE(runCSE(g));
  EXPECT_EQ(g.numOps(), 7u);
}

TEST(CSETest, ControlDependencySetsCompareWithoutOrder) {
  Graph g("cse");
  Builder b(g);
  Value *x = b.input("x", floatTensor({4}));
  Op *p = b.create("exp", {x}, {}, {"p"});
  Op *q = b.create("log", {x}, {}, {"q"});
  Op *r1 = b.create("tanh", {x}, {}, {"r1"});
  Op *r2 = b.create("tanh", {x}, {}, {"r2"});
  r1->addControlDep(p);
  r1->addControlDep(q);
  r2->addControlDep(q);
  r2->addControlDep(p);
  // `z` must run after r2; after the merge it runs after r1.
  Op *z = b.create("neg", {x}, {}, {"z"});
  z->addControlDep(r2);
  g.addOutput(b.op("add_n", {r1->result(), r2->result(), z->result()}));
  ASSERT_TRUE(b.status().ok());

  EXPECT_TRUE(runCSE(g));
  EXPECT_EQ(g.lookupValue("r2"), nullptr);
  EXPECT_THAT(z->controlDeps(), ElementsAre(r1));
}

TEST(CSETest, KeepsLeavesAndDuplicatesThatAreOutputs) {
  Graph g("cse");
  Builder b(g);
  Value *x1 = b.input("x1", floatTensor({4}));
  Value *x2 = b.input("x2", floatTensor({4}));
  Value *w1 = b.param("w1", floatTensor({4}));
  Value *w2 = b.param("w2", floatTensor({4}));
  Value *n1 = b.op("neg", {x1}, {}, "n1");
  Value *n2 = b.op("neg", {x1}, {}, "w1.grad");
  g.addOutput(b.op("add_n", {x1, x2, w1, w2, n1}, {}, "sum"));
  g.addOutput(n2);
  ASSERT_TRUE(b.status().ok());

  // Identical declarations are distinct tensors; `w1.grad` names an output.
  EXPECT_FALSE(runCSE(g));
  EXPECT_EQ(g.numOps(), 7u);
}

TEST(CSETest, KeptOpMayBeAnOutput) {
  Graph g("cse");
  Builder b(g);
  Value *x = b.input("x", floatTensor({4}));
  Value *a1 = b.op("relu", {x}, {}, "a1");
  g.addOutput(a1);
  Value *a2 = b.op("relu", {x}, {}, "a2");
  g.addOutput(b.op("neg", {a2}, {}, "n"));
  ASSERT_TRUE(b.status().ok());

  EXPECT_TRUE(runCSE(g));
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "a1", "n"));
  EXPECT_THAT(g.outputs(), ElementsAre(a1, g.lookupValue("n")));
}

TEST(CSETest, MergesMultiResultOps) {
  Graph g("cse");
  Builder b(g);
  Value *x = b.input("x", floatTensor({4, 6}));
  AttrList attrs = {{"axis", 1}, {"sizes", std::vector<int64_t>{3, 3}}};
  Op *s1 = b.create("split", {x}, attrs, {"p1", "q1"});
  Op *s2 = b.create("split", {x}, attrs, {"p2", "q2"});
  ASSERT_TRUE(b.status().ok()) << b.status();
  g.addOutput(b.op("add_n", {s1->result(0), s2->result(0), s2->result(1)},
                   {}, "sum"));
  ASSERT_TRUE(b.status().ok()) << b.status();

  EXPECT_TRUE(runCSE(g));
  EXPECT_THAT(g.lookupValue("sum")->producer()->operands(),
              ElementsAre(s1->result(0), s1->result(0), s1->result(1)));
}

TEST(CSEScaleTest, ManyDuplicatesInLinearTime) {
  // 100000 relu(x) copies collapse into one; each copy has its own reader
  // (neg), and those negs then collapse too: x, relu, neg, and the 1 output.
  Graph g("wide");
  Builder b(g);
  Value *x = b.input("x", floatTensor({1}));
  std::vector<Value *> negs;
  for (int i = 0; i < 100000; ++i)
    negs.push_back(b.op("neg", {b.op("relu", {x})}));
  g.addOutput(b.op("add_n", negs, {}, "sum"));
  ASSERT_TRUE(b.status().ok());
  ASSERT_TRUE(createCSEPass()->run(g).ok());
  EXPECT_EQ(g.numOps(), 4u);
}

} // namespace
} // namespace remat

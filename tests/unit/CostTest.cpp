//===- CostTest.cpp - FLOP costs from the registry ------------------------===//

#include "remat/Analysis/Cost.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

TEST(CostTest, RegistryRulesAndCostAttribute) {
  Graph g("cost");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {4, 3}));
  Value *bias = b.param("bias", Type(DType::F32, {3}));
  Value *r = b.op("relu", {x}, {}, "r");
  Value *s = b.op("add", {r, bias}, {}, "s");
  Value *v = b.op("identity", {s}, {}, "v");
  Value *n = b.op("add_n", {v, v, v}, {}, "n");
  Value *p = b.op("neg", {n}, {{"cost", Attribute(int64_t(1000))}}, "p");
  ASSERT_TRUE(b.status().ok()) << b.status();

  // Declarations and views compute nothing.
  EXPECT_EQ(opFlops(*x->producer()), 0);
  EXPECT_EQ(opFlops(*bias->producer()), 0);
  EXPECT_EQ(opFlops(*v->producer()), 0);
  // Elementwise: one FLOP per result element, 4 x 3 = 12, after
  // broadcasting [4,3] + [3] -> [4,3] for the add.
  EXPECT_EQ(opFlops(*r->producer()), 12);
  EXPECT_EQ(opFlops(*s->producer()), 12);
  // add_n of 3 operands: 2 additions per element, 2 x 12 = 24.
  EXPECT_EQ(opFlops(*n->producer()), 24);
  // The attribute overrides the rule (12).
  EXPECT_EQ(opFlops(*p->producer()), 1000);
  // 0 + 0 + 12 + 12 + 0 + 24 + 1000.
  EXPECT_EQ(graphFlops(g), 1048);
}

TEST(CostTest, ExpensiveOpsAreFlaggedOrExternOnesOverFourFlopsPerByte) {
  Graph g("expensive");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {8, 8}));
  Value *w = b.param("w", Type(DType::F32, {8, 8}));
  Value *mm = b.op("matmul", {x, w}, {}, "mm");
  // A cheap kind stays cheap whatever its cost attribute says.
  Value *relu = b.op("relu", {mm}, {{"cost", Attribute(int64_t(1 << 20))}},
                     "relu");
  auto external = [&](int64_t flops, const char *types, const char *name,
                      int64_t cost = 0) {
    AttrList attrs = {{"fn", Attribute(std::string("aten.f"))},
                      {"types", Attribute(std::string(types))},
                      {"flops", Attribute(flops)}};
    if (cost > 0)
      attrs.push_back({"cost", Attribute(cost)});
    return b.op("extern", {relu}, std::move(attrs), name);
  };
  // Result bytes: 8 x 8 x 4 = 256, so up to 1024 FLOPs is cheap.
  Value *atLimit = external(1024, "f32[8,8]", "at_limit");
  Value *overLimit = external(1025, "f32[8,8]", "over_limit");
  // Every result counts: 256 + 4 bytes allow 1040 FLOPs.
  Value *twoResults = external(1040, "f32[8,8] f32[]", "two_results");
  // A reduction to one float: 256 FLOPs for 4 bytes.
  Value *reduction = external(256, "f32[]", "reduction");
  // A measured time (`cost`, nanoseconds) says nothing of FLOPs per byte.
  Value *timed = external(256, "f32[8,8]", "timed", /*cost=*/1 << 20);
  ASSERT_TRUE(b.status().ok()) << b.status();

  EXPECT_TRUE(isExpensive(*mm->producer()));
  EXPECT_FALSE(isExpensive(*relu->producer()));
  EXPECT_FALSE(isExpensive(*atLimit->producer()));
  EXPECT_TRUE(isExpensive(*overLimit->producer()));
  EXPECT_FALSE(isExpensive(*twoResults->producer()));
  EXPECT_TRUE(isExpensive(*reduction->producer()));
  EXPECT_FALSE(isExpensive(*timed->producer()));
  EXPECT_EQ(opFlops(*timed->producer()), 1 << 20);
}

TEST(CostTest, EmptyGraphCostsNothing) {
  Graph g("empty");
  EXPECT_EQ(graphFlops(g), 0);
}

} // namespace
} // namespace remat

//===- BottlenecksTest.cpp - Values every path to the loss runs through ---===//

#include "remat/Analysis/Bottlenecks.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> names(const std::vector<Value *> &values) {
  std::vector<std::string> result;
  for (const Value *value : values)
    result.push_back(value->name().str());
  return result;
}

const Type kT(DType::F32, {8});

TEST(BottlenecksTest, EveryIntermediateOfAChain) {
  // x -> r1 -> r2 -> r3 -> loss: each r cuts the only path. x is the source
  // and loss the target, both left out.
  Graph g("chain");
  Builder b(g);
  Value *v = b.input("x", kT);
  for (const char *name : {"r1", "r2", "r3", "loss"})
    v = b.op("relu", {v}, {}, name);
  g.addOutput(v);
  ASSERT_TRUE(b.status().ok());
  EXPECT_THAT(names(findBottlenecks(g)), ElementsAre("r1", "r2", "r3"));

  BottleneckOptions options;
  options.exclude = [](const Value &value) { return value.name() == "r2"; };
  EXPECT_THAT(names(findBottlenecks(g, options)), ElementsAre("r1", "r3"));

  options = {};
  options.target = g.lookupValue("r3");
  EXPECT_THAT(names(findBottlenecks(g, options)), ElementsAre("r1", "r2"));
}

TEST(BottlenecksTest, ResidualBlock) {
  // x -> a -> [ b -> c ] -> s = a + c -> t -> loss
  //           └──── skip ────┘
  // b and c can be bypassed through the skip; a feeds both branches and s
  // joins them.
  Graph g("residual");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *bv = b.op("neg", {a}, {}, "b");
  Value *c = b.op("relu", {bv}, {}, "c");
  Value *s = b.op("add", {a, c}, {}, "s");
  Value *t = b.op("neg", {s}, {}, "t");
  g.addOutput(b.op("relu", {t}, {}, "loss"));
  ASSERT_TRUE(b.status().ok());
  EXPECT_THAT(names(findBottlenecks(g)), ElementsAre("a", "s", "t"));
}

TEST(BottlenecksTest, Diamond) {
  // x -> a -> {b, c} -> d -> loss.
  Graph g("diamond");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Value *bv = b.op("neg", {a}, {}, "b");
  Value *c = b.op("relu", {a}, {}, "c");
  Value *d = b.op("add", {bv, c}, {}, "d");
  g.addOutput(b.op("neg", {d}, {}, "loss"));
  ASSERT_TRUE(b.status().ok());
  EXPECT_THAT(names(findBottlenecks(g)), ElementsAre("a", "d"));
}

TEST(BottlenecksTest, IndependentInputsMergeLate) {
  // x1 -> a1 -> b1 ┐
  // x2 -> a2 ──────┴─► m -> n -> loss
  // Neither branch alone disconnects the other source.
  Graph g("merge");
  Builder b(g);
  Value *x1 = b.input("x1", kT);
  Value *x2 = b.input("x2", kT);
  Value *a1 = b.op("relu", {x1}, {}, "a1");
  Value *b1 = b.op("neg", {a1}, {}, "b1");
  Value *a2 = b.op("relu", {x2}, {}, "a2");
  Value *m = b.op("add", {b1, a2}, {}, "m");
  Value *n = b.op("neg", {m}, {}, "n");
  g.addOutput(b.op("relu", {n}, {}, "loss"));
  ASSERT_TRUE(b.status().ok());
  EXPECT_THAT(names(findBottlenecks(g)), ElementsAre("m", "n"));
}

/// An op with two results of its operand's type, standing in for split.
const OpDef &twoResultDef() {
  static const OpDef def{
      .name = "two_results",
      .minOperands = 1,
      .maxOperands = 1,
      .inferTypes = [](const OpSignature &sig)
          -> absl::StatusOr<llvm::SmallVector<Type, 1>> {
        return llvm::SmallVector<Type, 1>{sig.operand(0), sig.operand(0)};
      },
      .flops = [](const OpSignature &,
                  llvm::ArrayRef<Type>) { return int64_t(0); }};
  return def;
}

TEST(BottlenecksTest, ResultsOfAMultiResultOp) {
  // x -> a -> (p, q) -> s = p + q -> loss. The op node dominates s but
  // neither result alone does.
  Graph g("split");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *a = b.op("relu", {x}, {}, "a");
  Op *split = g.createOp(twoResultDef(), {a}, {}, {kT, kT}, {"p", "q"});
  Value *s = b.op("add", {split->result(0), split->result(1)}, {}, "s");
  g.addOutput(b.op("neg", {s}, {}, "loss"));
  ASSERT_TRUE(b.status().ok());
  EXPECT_THAT(names(findBottlenecks(g)), ElementsAre("a", "s"));

  // When only p leads to the loss, p is a bottleneck.
  Graph h("split-one");
  Builder hb(h);
  Value *hx = hb.input("x", kT);
  Value *ha = hb.op("relu", {hx}, {}, "a");
  Op *hsplit = h.createOp(twoResultDef(), {ha}, {}, {kT, kT}, {"p", "q"});
  Value *y = hb.op("relu", {hsplit->result(0)}, {}, "y");
  h.addOutput(hb.op("neg", {y}, {}, "loss"));
  ASSERT_TRUE(hb.status().ok());
  EXPECT_THAT(names(findBottlenecks(h)), ElementsAre("a", "p", "y"));
}

TEST(BottlenecksTest, LateParamsCountOnlyAsLeafSources) {
  // x*w1 -> h -> a -> a*w2 -> l -> loss. As a source, w2 opens a path to l
  // around h and a; from the entry op (h's producer reads only leaves) every
  // path runs through h, a and l.
  Graph g("mlp");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *w1 = b.param("w1", kT);
  Value *h = b.op("mul", {x, w1}, {}, "h");
  Value *a = b.op("relu", {h}, {}, "a");
  Value *w2 = b.param("w2", kT);
  Value *l = b.op("mul", {a, w2}, {}, "l");
  g.addOutput(b.op("neg", {l}, {}, "loss"));
  ASSERT_TRUE(b.status().ok());
  EXPECT_THAT(names(findBottlenecks(g)), ElementsAre("l"));
  BottleneckOptions options;
  options.sources = BottleneckSourceKind::EntryOps;
  EXPECT_THAT(names(findBottlenecks(g, options)), ElementsAre("h", "a", "l"));
}

TEST(BottlenecksTest, ConstantsOpenNoPath) {
  // A constant joins at m; it is no source, so r1 stays a bottleneck.
  Graph g("const");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *r1 = b.op("relu", {x}, {}, "r1");
  Value *k = b.op("constant", {}, {{"value", 2.0}, {"shape", {8}}}, "k");
  Value *m = b.op("mul", {r1, k}, {}, "m");
  g.addOutput(b.op("neg", {m}, {}, "loss"));
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_THAT(names(findBottlenecks(g)), ElementsAre("r1", "m"));
  BottleneckOptions options;
  options.sources = BottleneckSourceKind::EntryOps;
  EXPECT_THAT(names(findBottlenecks(g, options)), ElementsAre("r1", "m"));
}

TEST(BottlenecksTest, NothingToFind) {
  Graph empty("empty");
  EXPECT_THAT(findBottlenecks(empty), IsEmpty());

  // The loss depends on a constant only: no source reaches it.
  Graph g("unreached");
  Builder b(g);
  b.input("x", kT);
  Value *k = b.op("constant", {}, {{"value", 1.0}, {"shape", {8}}}, "k");
  Value *r = b.op("relu", {k}, {}, "r");
  g.addOutput(b.op("neg", {r}, {}, "loss"));
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_THAT(findBottlenecks(g), IsEmpty());
}

/// Whether `target` is reached from the sources when `cut` carries no path,
/// by one sweep over the schedule: the definition, without dominators.
bool reachesTarget(const Graph &g, BottleneckSourceKind sources,
                   const Value *cut, const Value *target) {
  std::vector<bool> reached(g.valueIdBound(), false);
  for (const Op &op : g.ops()) {
    bool isReached = false;
    if (op.numOperands() == 0) {
      isReached =
          sources == BottleneckSourceKind::LeafValues && op.hasFlag(OpFlagLeaf);
    } else {
      bool allFree = true;
      for (const Value *operand : op.operands()) {
        isReached = isReached || reached[operand->id()];
        allFree = allFree && operand->producer()->numOperands() == 0;
      }
      isReached =
          isReached || (sources == BottleneckSourceKind::EntryOps && allFree);
    }
    for (unsigned i = 0; i < op.numResults(); ++i)
      reached[op.result(i)->id()] = isReached && op.result(i) != cut;
  }
  return reached[target->id()];
}

TEST(BottlenecksTest, AgreesWithCuttingEachValueOnRandomGraphs) {
  std::mt19937 random(20240607);
  int roundsWithSeveral = 0;
  for (int round = 0; round < 300; ++round) {
    Graph g("random");
    Builder b(g);
    std::vector<Value *> values;
    for (int i = 0, e = 20; i < e; ++i) {
      unsigned pick = random() % 8;
      if (values.empty() || pick == 0) {
        values.push_back(pick % 2 ? b.param("w", kT) : b.input("x", kT));
        continue;
      }
      // Bias the operands towards recent values so that long paths appear.
      auto operand = [&] {
        size_t back = std::min<size_t>(values.size(), 1 + random() % 4);
        return random() % 5 ? values[values.size() - back]
                            : values[random() % values.size()];
      };
      if (pick < 5)
        values.push_back(b.op(pick < 3 ? "relu" : "neg", {operand()}));
      else
        values.push_back(b.op("add", {operand(), operand()}));
    }
    ASSERT_TRUE(b.status().ok()) << b.status();
    const Value *target = values.back();
    g.addOutput(values.back());

    for (BottleneckSourceKind sources :
         {BottleneckSourceKind::LeafValues, BottleneckSourceKind::EntryOps}) {
      std::vector<std::string> expected;
      if (reachesTarget(g, sources, nullptr, target))
        for (const Op &op : g.ops())
          for (unsigned i = 0; i < op.numResults(); ++i) {
            const Value *v = op.result(i);
            bool isSource = sources == BottleneckSourceKind::LeafValues &&
                            op.hasFlag(OpFlagLeaf);
            if (v != target && !isSource &&
                !reachesTarget(g, sources, v, target))
              expected.push_back(v->name().str());
          }
      roundsWithSeveral += expected.size() >= 2;
      BottleneckOptions options;
      options.sources = sources;
      EXPECT_EQ(names(findBottlenecks(g, options)), expected)
          << "round " << round << " sources " << int(sources);
    }
  }
  // The generator must produce graphs where the answer is not trivial.
  EXPECT_GT(roundsWithSeveral, 100);
}

TEST(BottlenecksScaleTest, LongChainIsNotQuadratic) {
  // 100k relus after x: all but the last (the loss) are bottlenecks. One walk
  // per candidate would take ~10^10 steps.
  Graph g("long");
  Builder b(g);
  Value *v = b.input("x", kT);
  constexpr int kLength = 100000;
  for (int i = 0; i < kLength; ++i)
    v = b.op("relu", {v});
  g.addOutput(v);
  ASSERT_TRUE(b.status().ok());
  std::vector<Value *> found = findBottlenecks(g);
  ASSERT_EQ(found.size(), size_t(kLength) - 1);
  EXPECT_EQ(found.front()->producer(), &*std::next(g.ops().begin()));
}

TEST(BottlenecksScaleTest, DeepCommonAncestorsAreNotQuadratic) {
  // c1 -> ... -> cn by relu, then d_i = cn + c_i and loss = add_n(d_1..d_n).
  // d_i's dominator is c_i, n - i levels above cn: walking up the tree would
  // cost ~n^2/2 steps in all. Every d_i descends from c1, and only c1 cuts
  // them all from x.
  Graph g("deep-lca");
  Builder b(g);
  Value *x = b.input("x", kT);
  constexpr int kLength = 50000;
  std::vector<Value *> chain;
  Value *v = x;
  for (int i = 0; i < kLength; ++i)
    chain.push_back(v = b.op("relu", {v}, {}, "c"));
  std::vector<Value *> sums;
  for (Value *c : chain)
    sums.push_back(b.op("add", {chain.back(), c}, {}, "d"));
  g.addOutput(b.op("add_n", sums, {}, "loss"));
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_THAT(names(findBottlenecks(g)), ElementsAre("c"));
}

} // namespace
} // namespace remat

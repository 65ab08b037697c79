//===- CloneTest.cpp - Graph::clone, Graph::swap, Graph::createCopyOf -------===//

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace remat {
namespace {

Type f32(std::initializer_list<int64_t> shape) { return Type(DType::F32, shape); }

/// The names of the ops reading `value`, in use-list order.
std::vector<std::string> userNames(const Value *value) {
  std::vector<std::string> names;
  for (const Use &use : value->uses())
    names.push_back(use.user->result()->name().str());
  return names;
}

/// A value named `a` three times (`a`, `a.1`, `a.2`), then `a.1` erased: the
/// original's next `a` is `a.3`, the suffix counter never goes back.
std::unique_ptr<Graph> graphWithErasedSuffix() {
  auto g = std::make_unique<Graph>("t");
  Builder b(*g);
  Value *x = b.input("x", f32({2}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *a1 = b.op("neg", {x}, {}, "a");
  Value *a2 = b.op("neg", {a}, {}, "a");
  g->addOutput(a2);
  EXPECT_EQ(a1->name(), "a.1");
  EXPECT_EQ(a2->name(), "a.2");
  g->erase(a1->producer());
  EXPECT_TRUE(b.status().ok()) << b.status();
  return g;
}

TEST(CloneTest, CloneNamesNewValuesAsTheOriginalWould) {
  for (Graph::CloneIds ids : {Graph::CloneIds::Renumber, Graph::CloneIds::Keep}) {
    std::unique_ptr<Graph> original = graphWithErasedSuffix();
    std::unique_ptr<Graph> copy = original->clone(ids);
    Value *fromOriginal =
        Builder(*original).op("relu", {original->inputs()[0]}, {}, "a");
    Value *fromCopy = Builder(*copy).op("relu", {copy->inputs()[0]}, {}, "a");
    EXPECT_EQ(fromOriginal->name(), "a.3");
    EXPECT_EQ(fromCopy->name(), "a.3");
  }
}

TEST(CloneTest, KeptIdsAndUseOrderMatchTheOriginal) {
  std::unique_ptr<Graph> g = graphWithErasedSuffix();
  Builder b(*g);
  Value *x = g->inputs()[0];
  Value *u = b.op("relu", {x}, {}, "u");
  Value *v = b.op("relu", {x}, {}, "v");
  Value *w = b.op("relu", {x}, {}, "w");
  (void)v;
  (void)w;
  // Removing u's use moves the last use (w's) into its slot.
  u->producer()->setOperand(0, g->lookupValue("a"));
  ASSERT_EQ(userNames(x), (std::vector<std::string>{"a", "w", "v"}));
  // The op `a.1` was erased: ids 0..5 with 2 missing.
  std::unique_ptr<Graph> kept = g->clone(Graph::CloneIds::Keep);
  std::unique_ptr<Graph> renumbered = g->clone(Graph::CloneIds::Renumber);
  EXPECT_EQ(kept->opIdBound(), g->opIdBound());
  EXPECT_EQ(kept->valueIdBound(), g->valueIdBound());
  EXPECT_EQ(renumbered->opIdBound(), g->numOps());
  std::vector<unsigned> originalIds, keptIds, renumberedIds;
  for (const Op &op : g->ops())
    originalIds.push_back(op.id());
  for (const Op &op : kept->ops())
    keptIds.push_back(op.id());
  for (const Op &op : renumbered->ops())
    renumberedIds.push_back(op.id());
  EXPECT_EQ(originalIds, (std::vector<unsigned>{0, 1, 3, 4, 5, 6}));
  EXPECT_EQ(keptIds, originalIds);
  EXPECT_EQ(renumberedIds, (std::vector<unsigned>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(userNames(kept->inputs()[0]), userNames(x));
  // A renumbered copy lists uses in schedule order.
  EXPECT_EQ(userNames(renumbered->inputs()[0]),
            (std::vector<std::string>{"a", "v", "w"}));
  // Use lists stay exact in the copy: rewiring every reader empties it.
  Value *keptX = kept->inputs()[0];
  Value *z = Builder(*kept).input("z", f32({2}));
  kept->moveBefore(z->producer(), &kept->ops().front());
  kept->replaceAllUsesWith(keptX, z);
  EXPECT_FALSE(keptX->hasUses());
  EXPECT_TRUE(verify(*kept).ok()) << verify(*kept);
}

TEST(CloneTest, SwapExchangesContentsAndOwnership) {
  std::unique_ptr<Graph> first = graphWithErasedSuffix();
  Graph second("other");
  Builder b(second);
  Value *y = b.input("y", f32({3}));
  second.addOutput(b.op("relu", {y}, {}, "r"));
  unsigned firstOps = first->numOps();

  first->swap(second);
  EXPECT_EQ(first->name(), "other");
  EXPECT_EQ(second.name(), "t");
  EXPECT_EQ(first->numOps(), 2u);
  EXPECT_EQ(second.numOps(), firstOps);
  for (const Op &op : first->ops())
    EXPECT_EQ(op.graph(), first.get());
  for (const Op &op : second.ops())
    EXPECT_EQ(op.graph(), &second);
  EXPECT_NE(first->lookupValue("r"), nullptr);
  EXPECT_EQ(first->lookupValue("a"), nullptr);
  ASSERT_NE(second.lookupValue("a"), nullptr);
  EXPECT_EQ(second.outputs()[0]->name(), "a.2");
  // Names and ids go on from the swapped-in contents.
  Value *next = Builder(second).op("relu", {second.inputs()[0]}, {}, "a");
  EXPECT_EQ(next->name(), "a.3");
  EXPECT_EQ(next->producer()->id(), 4u);
  EXPECT_TRUE(verify(*first).ok()) << verify(*first);
  EXPECT_TRUE(verify(second).ok()) << verify(second);
}

TEST(CloneTest, CreateCopyOfKeepsAllButOperandsAndNames) {
  // A copy of `a = split(x)` reading `y`, made twice under the names the
  // original's results get `.re` added to: the second is suffixed, as
  // `createOp` suffixes a taken name.
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({4, 6}));
  Value *y = b.input("y", f32({4, 6}));
  b.setRegion("stage/1");
  b.setDevice("gpu:1");
  AttrList attrs = {{"axis", 1}, {"sizes", std::vector<int64_t>{2, 4}}};
  Op *original = b.create("split", {x}, attrs, {"p", "q"});
  ASSERT_TRUE(b.status().ok()) << b.status();
  original->setLoc({7, 3});
  std::vector<std::string> names = {"p.re", "q.re"};
  Op *first = g.createCopyOf(*original, {y}, names, original);
  Op *second = g.createCopyOf(*original, {y}, names);
  for (Op *copy : {first, second}) {
    EXPECT_EQ(copy->kind(), "split");
    EXPECT_EQ(&copy->attrs(), &original->attrs());
    EXPECT_EQ(copy->resultTypes(), original->resultTypes());
    EXPECT_EQ(copy->region(), "stage/1");
    EXPECT_EQ(copy->device(), "gpu:1");
    EXPECT_EQ(copy->loc().line, 7u);
    EXPECT_EQ(copy->loc().column, 3u);
    EXPECT_EQ(copy->operand(0), y);
  }
  EXPECT_EQ(first->result(0)->name(), "p.re");
  EXPECT_EQ(first->result(1)->name(), "q.re");
  EXPECT_EQ(second->result(0)->name(), "p.re.1");
  EXPECT_EQ(second->result(1)->name(), "q.re.1");
  EXPECT_EQ(&*std::next(first->getIterator()), original);
  EXPECT_EQ(&g.ops().back(), second);
  g.addOutput(second->result(1));
  EXPECT_TRUE(verify(g).ok()) << verify(g);
}

TEST(CloneTest, CopiesOwnTheirNames) {
  // Names live in each graph's name table: renaming and erasing in the copy
  // leaves the original's names, and the copy outlives its original.
  std::unique_ptr<Graph> original = graphWithErasedSuffix();
  std::unique_ptr<Graph> copy = original->clone(Graph::CloneIds::Keep);
  Value *copiedA = copy->lookupValue("a");
  ASSERT_NE(copiedA, nullptr);
  EXPECT_NE(copiedA, original->lookupValue("a"));
  EXPECT_TRUE(copy->holdsName(copiedA));
  EXPECT_FALSE(original->holdsName(copiedA));
  EXPECT_TRUE(copy->renameValue(copiedA, "renamed"));
  EXPECT_FALSE(copy->renameValue(copiedA, "a.2"));
  EXPECT_EQ(copiedA->name(), "renamed");
  EXPECT_EQ(copy->lookupValue("a"), nullptr);
  EXPECT_EQ(copy->lookupValue("renamed"), copiedA);
  EXPECT_EQ(original->lookupValue("a")->name(), "a");
  EXPECT_EQ(original->lookupValue("renamed"), nullptr);
  original.reset();
  EXPECT_EQ(copiedA->name(), "renamed");
  EXPECT_EQ(copy->outputs()[0]->name(), "a.2");
  EXPECT_TRUE(verify(*copy).ok()) << verify(*copy);
}

TEST(CloneTest, GraphOutlivesManyErasuresAndClones) {
  // A chain grown and cut back repeatedly, cloned between rounds: every
  // clone and the original stay verifiable, and erased names are free again.
  auto g = std::make_unique<Graph>("churn");
  Builder b(*g);
  Value *x = b.input("x", f32({4}));
  std::vector<std::unique_ptr<Graph>> copies;
  for (int round = 0; round < 20; ++round) {
    std::vector<Value *> chain;
    Value *last = x;
    for (int i = 0; i < 50; ++i) {
      last = b.op(i % 2 ? "relu" : "neg", {last}, {}, "v");
      chain.push_back(last);
    }
    // The first round's chain is kept as the output; later ones are erased
    // from the end, half of them after a clone has copied them.
    if (round == 0) {
      g->addOutput(last);
      continue;
    }
    if (round % 2)
      copies.push_back(g->clone(round % 4 == 1 ? Graph::CloneIds::Keep
                                               : Graph::CloneIds::Renumber));
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      g->erase((*it)->producer());
  }
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_EQ(g->numOps(), 51u);
  EXPECT_TRUE(verify(*g).ok()) << verify(*g);
  for (const std::unique_ptr<Graph> &copy : copies) {
    EXPECT_EQ(copy->numOps(), 101u);
    EXPECT_TRUE(verify(*copy).ok()) << verify(*copy);
  }
  // Erased values' names are gone from the table.
  unsigned named = 0;
  for (const Op &op : g->ops())
    named += g->lookupValue(op.result()->name()) == op.result();
  EXPECT_EQ(named, 51u);
  g.reset();
  for (const std::unique_ptr<Graph> &copy : copies)
    EXPECT_EQ(copy->outputs()[0]->name(), "v.49");
}

} // namespace
} // namespace remat

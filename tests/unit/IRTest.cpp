//===- IRTest.cpp - Graph, Builder and Verifier -----------------------------===//

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace remat {
namespace {

using ::testing::HasSubstr;

Type f32(std::initializer_list<int64_t> shape) { return Type(DType::F32, shape); }

TEST(TypeTest, SizesAndOverflow) {
  EXPECT_EQ(f32({32, 784}).byteSize(), 32 * 784 * 4);
  EXPECT_EQ(Type::scalar(DType::I64).byteSize(), 8);
  EXPECT_EQ(f32({32, 784}).str(), "f32[32,784]");
  EXPECT_FALSE(f32({int64_t(1) << 40, int64_t(1) << 30}).checkedByteSize());
  EXPECT_FALSE(f32({-1}).checkedNumElements());
}

TEST(AttributeTest, FloatsStayFloatsWhenPrinted) {
  EXPECT_EQ(Attribute(1.0).str(), "1.0");
  EXPECT_EQ(Attribute(0.1).str(), "0.1");
  EXPECT_EQ(Attribute(int64_t(3)).str(), "3");
  EXPECT_EQ(Attribute({1, 2}).str(), "[1, 2]");
  EXPECT_EQ(Attribute("a\"b").str(), "\"a\\\"b\"");
}

// Types, attribute lists and tags are interned: equal ones share storage,
// and a change to one op's attributes leaves every other op's as it was.
TEST(InternedTest, EqualTypesShareStorageAndKeepTheirShape) {
  Type a = f32({2, 3}), b = f32({2, 3});
  EXPECT_EQ(a.shape().data(), b.shape().data());
  EXPECT_NE(a, f32({3, 2}));
  EXPECT_NE(a, a.withDType(DType::F64));
  EXPECT_EQ(a.withDType(DType::F64).withDType(DType::F32), a);
  EXPECT_EQ(Type(), Type::scalar(DType::F32));
}

TEST(InternedTest, SetAttrChangesOneOpOnly) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({4, 3}));
  Value *s1 = b.op("reduce_sum", {x}, {{"axes", {0}}});
  Value *s2 = b.op("reduce_sum", {x}, {{"axes", {0}}});
  ASSERT_TRUE(b.status().ok()) << b.status();
  Op *first = s1->producer(), *second = s2->producer();
  EXPECT_EQ(&first->attrs(), &second->attrs());
  first->setAttr("axes", Attribute({1}));
  first->setAttr("keepdims", Attribute(true));
  EXPECT_EQ(first->findAttr("axes")->asIntList(), llvm::ArrayRef<int64_t>({1}));
  EXPECT_TRUE(first->findAttr("keepdims")->asBool());
  EXPECT_EQ(second->findAttr("axes")->asIntList(),
            llvm::ArrayRef<int64_t>({0}));
  EXPECT_EQ(second->findAttr("keepdims"), nullptr);
  EXPECT_EQ(second->attrs().size(), 1u);
}

// -0.0 == 0.0 as attribute values, but an op keeps the float it was given.
TEST(InternedTest, ListsDifferingInAFloatsSignStayApart) {
  const AttrList *positive = internAttrList({{"value", Attribute(0.0)}});
  const AttrList *negative = internAttrList({{"value", Attribute(-0.0)}});
  EXPECT_NE(positive, negative);
  EXPECT_EQ((*negative)[0].value.str(), "-0.0");
  EXPECT_EQ(positive, internAttrList({{"value", Attribute(0.0)}}));
  EXPECT_EQ(internAttrList({}), internAttrList({}));
}

TEST(InternedTest, TagsAreStoredOnce) {
  std::string region = "block3/attn";
  llvm::StringRef tag = internTag(region);
  region = "changed";
  EXPECT_EQ(tag, "block3/attn");
  EXPECT_EQ(tag.data(), internTag("block3/attn").data());
  EXPECT_TRUE(internTag("").empty());
}

TEST(BuilderTest, InfersBroadcastTypesAndTracksUses) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({4, 3}));
  Value *bias = b.param("bias", f32({3}));
  Value *y = b.op("add", {x, bias}, {}, "y");
  Value *z = b.op("add", {y, y});
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_EQ(y->type(), f32({4, 3}));
  EXPECT_EQ(z->name(), "add");
  EXPECT_EQ(y->uses().size(), 2u);
  EXPECT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.params().size(), 1u);
  EXPECT_TRUE(verify(g).ok());
}

TEST(BuilderTest, StickyErrorNamesTheProblem) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({4, 3}));
  Value *w = b.input("w", f32({5}));
  Value *bad = b.op("add", {x, w});
  EXPECT_EQ(bad, nullptr);
  EXPECT_EQ(b.op("relu", {bad}), nullptr);
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("shapes [4,3] and [5] do not broadcast"));
  EXPECT_FALSE(b.tryCreate("nope", {x}).ok());
  EXPECT_THAT(std::string(b.tryCreate("relu", {x, x}).status().message()),
              HasSubstr("'relu' takes 1 operand, got 2"));
}

TEST(GraphTest, UniqueNamesAndReplaceAllUses) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({2}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *a1 = b.op("neg", {x}, {}, "a");
  EXPECT_EQ(a1->name(), "a.1");
  Value *c = b.op("add", {a, a});
  g.addOutput(c);
  g.addToCollection("checkpoints", a);
  g.replaceAllUsesWith(a, a1);
  EXPECT_FALSE(a->hasUses());
  EXPECT_EQ(a1->uses().size(), 2u);
  EXPECT_EQ(g.collection("checkpoints")[0], a1);
  g.erase(a->producer());
  EXPECT_EQ(g.lookupValue("a"), nullptr);
  EXPECT_TRUE(verify(g).ok()) << verify(g);
}

TEST(VerifierTest, RejectsScheduleThatIsNotTopological) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({2}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *c = b.op("neg", {a}, {}, "c");
  g.moveBefore(c->producer(), a->producer());
  absl::Status status = verify(g);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("'%c = neg': operand 0 (%a) is not defined before"));
}

TEST(VerifierTest, RejectsControlDependencyThatRunsLater) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({2}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *c = b.op("neg", {x}, {}, "c");
  a->producer()->addControlDep(c->producer());
  EXPECT_THAT(std::string(verify(g).message()),
              HasSubstr("control dependency '%c = neg' does not run before"));
}

TEST(VerifierTest, RejectsResultTypeThatDisagreesWithInference) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({2}));
  Value *a = b.op("relu", {x}, {}, "a");
  a->setType(f32({3}));
  EXPECT_THAT(std::string(verify(g).message()),
              HasSubstr("result 0 has type f32[3], shape inference gives f32[2]"));
}

TEST(BuilderTest, RegionScopesNest) {
  Graph g("t");
  Builder b(g);
  Value *x = b.input("x", f32({2}));
  Value *inner;
  {
    Builder::RegionScope block(b, "block3");
    Builder::RegionScope attn(b, "attn");
    inner = b.op("relu", {x});
  }
  Value *outer = b.op("relu", {x});
  EXPECT_EQ(inner->producer()->region(), "block3/attn");
  EXPECT_EQ(outer->producer()->region(), "");
}

} // namespace
} // namespace remat

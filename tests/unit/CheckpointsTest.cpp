//===- CheckpointsTest.cpp - Checkpoint selection strategies --------------===//

#include "remat/Pass/Planner.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/Zoo/Zoo.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

std::unique_ptr<Graph> parse(llvm::StringRef text,
                             llvm::StringRef file = "test.remat") {
  auto graph = parseGraph(text, file);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : std::make_unique<Graph>();
}

absl::StatusOr<RematPlan> select(const Graph &graph,
                                 llvm::StringRef spelling) {
  return planRematerialization(graph, spelling);
}

/// The kept names of a strategy that must succeed.
std::vector<std::string> kept(const Graph &graph, llvm::StringRef spelling) {
  absl::StatusOr<RematPlan> plan = select(graph, spelling);
  EXPECT_TRUE(plan.ok()) << spelling.str() << ": " << plan.status();
  return plan.ok() ? names(plan->kept) : std::vector<std::string>{};
}

std::string errorOf(const Graph &graph, llvm::StringRef spelling) {
  absl::StatusOr<RematPlan> plan = select(graph, spelling);
  EXPECT_FALSE(plan.ok()) << spelling.str() << " should fail";
  return plan.ok() ? "" : std::string(plan.status().message());
}

std::string parseError(llvm::StringRef spelling) {
  absl::StatusOr<std::unique_ptr<Planner>> planner =
      PlannerRegistry::global().create(spelling);
  EXPECT_FALSE(planner.ok()) << spelling.str() << " should not parse";
  return planner.ok() ? "" : std::string(planner.status().message());
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

TEST(CheckpointsParseTest, EverySpellingCreatesAPlanner) {
  for (const char *text :
       {"none", "all", "collection", "speed", "memory", "sqrtn", "sqrtn=3",
        "regions", "names=conv", "names=a,b.c,d/e", "regions=h0",
        "regions=h0/attn,h1"}) {
    absl::StatusOr<std::unique_ptr<Planner>> planner =
        PlannerRegistry::global().create(text);
    EXPECT_TRUE(planner.ok()) << text << ": " << planner.status();
  }
  absl::StatusOr<std::vector<std::string>> items =
      splitPlannerList("names", "a,b");
  ASSERT_TRUE(items.ok());
  EXPECT_THAT(*items, ElementsAre("a", "b"));
}

TEST(CheckpointsParseTest, Spellings) {
  // A planner is spelled bare unless it needs an argument, and with its
  // placeholder when it takes one; the list is the registry's, in its order
  // (docs/planners.md's table is checked against it by PlannerDocsTest).
  std::vector<std::string> spellings = PlannerRegistry::global().spellings();
  EXPECT_THAT(llvm::makeArrayRef(spellings).take_front(8),
              ElementsAre("none", "all", "collection", "names=SUBSTR,...",
                          "speed", "memory", "sqrtn", "sqrtn=SEGMENTS"));
  for (const char *spelling : {"schedule=B:V+W,...", "chain", "chain=STAGES",
                               "mincut"})
    EXPECT_TRUE(llvm::is_contained(spellings, spelling)) << spelling;
  for (const char *spelling : {"names", "schedule", "mincut=", "none="})
    EXPECT_FALSE(llvm::is_contained(spellings, spelling)) << spelling;
}

TEST(CheckpointsParseTest, Errors) {
  std::string known =
      fmt::format("{}", fmt::join(PlannerRegistry::global().spellings(), ", "));
  EXPECT_EQ(parseError("fast"),
            fmt::format("unknown planner 'fast' (known: {})", known));
  EXPECT_EQ(parseError(""), fmt::format("unknown planner '' (known: {})", known));
  EXPECT_EQ(parseError("names"),
            "planner 'names' needs a list: names=SUBSTR,...");
  EXPECT_EQ(parseError("names="),
            "planner 'names' has an empty item in 'names='");
  EXPECT_EQ(parseError("regions=a,,b"),
            "planner 'regions' has an empty item in 'regions=a,,b'");
  EXPECT_EQ(parseError("speed=conv"),
            "planner 'speed' takes no list, got 'speed=conv'");
}

//===----------------------------------------------------------------------===//
// Candidates, none, all
//===----------------------------------------------------------------------===//

// Only h and logits lie on a path from a leaf to the loss through data edges:
// cc descends from a constant alone, dead does not reach the loss, z reaches
// it through a control edge only, li is an integer, and c has no operands.
constexpr llvm::StringLiteral kCandidatesGraph = R"(graph @candidates {
  input %x : f32[4,3]
  input %labels : i32[4]
  param %w : f32[3,3]
  %c = constant() {value = 2.0, shape = [4,3]}
  %cc = exp(%c)
  %z = relu(%x)
  %h = matmul(%x, %w)
  %logits = add(%h, %cc) after(%z)
  %dead = neg(%h)
  %li = neg(%labels)
  %loss = softmax_cross_entropy(%logits, %li)
  output %loss
  output %dead
}
)";

TEST(CheckpointsTest, NoneKeepsEveryCandidate) {
  std::unique_ptr<Graph> graph = parse(kCandidatesGraph);
  EXPECT_THAT(kept(*graph, "none"), ElementsAre("h", "logits"));
  EXPECT_THAT(kept(*graph, "all"), IsEmpty());
}

//===----------------------------------------------------------------------===//
// collection, names, speed
//===----------------------------------------------------------------------===//

TEST(CheckpointsTest, Collection) {
  // The collection lists d, the param w, the loss and a; the checkpoint op
  // adds bk (its own result, not b). w and the loss are not candidates and
  // are dropped; the rest comes back in schedule order.
  std::unique_ptr<Graph> graph = parse(R"(graph @collection {
  input %x : f32[4]
  param %w : f32[4]
  %a = mul(%x, %w)
  %b = relu(%a)
  %bk = checkpoint(%b)
  %c = tanh(%bk)
  %d = exp(%c)
  %loss = reduce_sum(%d)
  output %loss
  collection checkpoints = %d, %w, %loss, %a, %bk
}
)");
  EXPECT_THAT(kept(*graph, "collection"), ElementsAre("a", "bk", "d"));

  // Without a collection or checkpoint ops nothing is kept, as with `all`.
  std::unique_ptr<Graph> plain = parse(kCandidatesGraph);
  EXPECT_THAT(kept(*plain, "collection"), IsEmpty());
}

constexpr llvm::StringLiteral kNamesGraph = R"(graph @names {
  input %x : f32[4]
  param %block3.w : f32[4]
  %block1.conv = mul(%x, %block3.w)
  %block1.relu = relu(%block1.conv)
  %block2.conv = tanh(%block1.relu)
  %loss = reduce_sum(%block2.conv)
  output %loss
}
)";

TEST(CheckpointsTest, Names) {
  std::unique_ptr<Graph> graph = parse(kNamesGraph);
  EXPECT_THAT(kept(*graph, "names=conv"),
              ElementsAre("block1.conv", "block2.conv"));
  // A value matching two substrings is listed once.
  EXPECT_THAT(kept(*graph, "names=block1,conv"),
              ElementsAre("block1.conv", "block1.relu", "block2.conv"));
  // `block3` names only a param: no error, nothing to keep.
  EXPECT_THAT(kept(*graph, "names=block3"), IsEmpty());
  // The loss matches `loss` but is never kept.
  EXPECT_THAT(kept(*graph, "names=loss"), IsEmpty());
}

TEST(CheckpointsTest, NamesThatMatchNothing) {
  std::unique_ptr<Graph> graph = parse(kNamesGraph);
  EXPECT_EQ(errorOf(*graph, "names=conv,attn"),
            "planner 'names': 'attn' matches no value");
}

TEST(CheckpointsTest, Speed) {
  // conv [1,1,2,2] -> flat [1,4] -> mm [1,2] -> act: only the results of
  // conv2d and matmul are kept.
  std::unique_ptr<Graph> graph = parse(R"(graph @speed {
  input %x : f32[1,1,4,4]
  input %t : f32[1,2]
  param %k : f32[1,1,3,3]
  param %w : f32[4,2]
  %conv = conv2d(%x, %k)
  %flat = reshape(%conv) {shape = [1,4]}
  %mm = matmul(%flat, %w)
  %act = relu(%mm)
  %loss = mse_loss(%act, %t)
  output %loss
}
)");
  EXPECT_THAT(kept(*graph, "speed"), ElementsAre("conv", "mm"));
}

//===----------------------------------------------------------------------===//
// memory
//===----------------------------------------------------------------------===//

const Type kBig(DType::F32, {64, 32}); // 2048 elements: above the minimum

TEST(CheckpointsTest, MemorySpreadsBottlenecksEvenly) {
  // x -> r1 -> ... -> r20 -> loss: every r is a bottleneck and eligible, so
  // N = 20 and 20 > ceil(sqrt(20)) = 5. step = ceil(20 / 4.47) = 5, and the
  // kept ones are indices 4, 9, 14, 19: r5, r10, r15, r20.
  Graph graph("chain");
  Builder b(graph);
  Value *v = b.input("x", kBig);
  for (int i = 1; i <= 20; ++i)
    v = b.op("relu", {v}, {}, fmt::format("r{}", i));
  graph.addOutput(b.op("reduce_sum", {v}, {}, "loss"));
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_THAT(kept(graph, "memory"), ElementsAre("r5", "r10", "r15", "r20"));
}

TEST(CheckpointsTest, MemoryLeavesOutSmallAndExcludedKinds) {
  // x -> a -> t (64 elements) -> b = t + w -> d = dropout(b) -> y = bn(d)
  //   -> f -> {g1 ... g7} -> gs = add_n(g...) -> loss
  // Eligible: a, b, f, g1..g7, gs (N = 11; t is small, d and y are of
  // excluded kinds). Of the values every path crosses (a, t, b, d, y, f,
  // gs) the eligible ones are a, b, f, gs: 4 <= ceil(sqrt(11)) = 4, so all
  // four are kept.
  Graph graph("excluded");
  Builder b(graph);
  Value *x = b.input("x", kBig);
  Value *w = b.param("w", kBig);
  Value *gamma = b.param("gamma", Type(DType::F32, {32}));
  Value *beta = b.param("beta", Type(DType::F32, {32}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *t =
      b.op("reduce_sum", {a},
           {{"axes", Attribute({1})}, {"keepdims", Attribute(true)}}, "t");
  Value *bv = b.op("add", {t, w}, {}, "b");
  Value *d =
      b.op("dropout", {bv},
           {{"rate", Attribute(0.5)}, {"seed", Attribute(int64_t(1))}}, "d");
  Op *bn = b.create("batch_norm", {d, gamma, beta}, {}, {"y", "mean", "var"});
  Value *f = b.op("tanh", {bn ? bn->result(0) : nullptr}, {}, "f");
  std::vector<Value *> branches;
  for (int i = 1; i <= 7; ++i)
    branches.push_back(b.op("exp", {f}, {}, fmt::format("g{}", i)));
  Value *gs = b.op("add_n", branches, {}, "gs");
  graph.addOutput(b.op("reduce_sum", {gs}, {}, "loss"));
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_THAT(kept(graph, "memory"), ElementsAre("a", "b", "f", "gs"));
}

TEST(CheckpointsTest, MemoryWithoutBottleneck) {
  // Every value has 8 elements, below the minimum.
  std::unique_ptr<Graph> graph = parse(R"(graph @tiny {
  input %x : f32[8]
  %a = relu(%x)
  %b = tanh(%a)
  %loss = reduce_sum(%b)
  output %loss
}
)");
  EXPECT_EQ(errorOf(*graph, "memory"),
            "planner 'memory' found no bottleneck tensor; name checkpoints "
            "with --strategy=names=..., or use --strategy=speed or "
            "--strategy=sqrtn");
}

//===----------------------------------------------------------------------===//
// sqrtn
//===----------------------------------------------------------------------===//

TEST(CheckpointsTest, SqrtNBalancesBytes) {
  // Nine candidates v1..v9 of 400 bytes, v2 a view (0 bytes): T = 3200,
  // k = ceil(sqrt(9)) = 3, a segment closes at 3200 / 3 = 1066.7 bytes, that
  // is after three non-view values: v1 v2 v3 v4 | v5 v6 v7 | v8 v9.
  std::unique_ptr<Graph> graph = parse(R"(graph @sqrtn {
  input %x : f32[100]
  %v1 = relu(%x)
  %v2 = reshape(%v1) {shape = [10,10]}
  %v3 = tanh(%v2)
  %v4 = exp(%v3)
  %v5 = sin(%v4)
  %v6 = cos(%v5)
  %v7 = relu(%v6)
  %v8 = tanh(%v7)
  %v9 = exp(%v8)
  %loss = reduce_sum(%v9)
  output %loss
}
)");
  EXPECT_THAT(kept(*graph, "sqrtn"), ElementsAre("v4", "v7"));
}

TEST(CheckpointsTest, SqrtNOnAnMlp) {
  // Each layer i gives three 8192x64 f32 candidates (2 MiB each) in this
  // order: layer<i>.fc.mm, layer<i>.fc, layer<i>; the head adds logits.mm
  // and logits of 8192x10 (320 KiB). N = 302, k = ceil(sqrt(302)) = 18,
  // T / k = (300 * 2 MiB + 640 KiB) / 18 = 16.68 layers' values, so every
  // 17th candidate closes a segment: indices 16, 33, ..., 288 (17 kept); the
  // 11 layer values and the head after index 288 do not fill another one.
  auto graph = buildZooModel(
      "mlp", {{"layers", "100"}, {"width", "64"}, {"batch", "8192"}});
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<std::string> expected;
  for (int index = 16; index < 300; index += 17) {
    std::string layer = fmt::format("layer{}", index / 3);
    const char *suffix[] = {".fc.mm", ".fc", ""};
    expected.push_back(layer + suffix[index % 3]);
  }
  ASSERT_EQ(expected.size(), 17u);
  EXPECT_EQ(kept(**graph, "sqrtn"), expected);
}

//===----------------------------------------------------------------------===//
// regions
//===----------------------------------------------------------------------===//

constexpr llvm::StringLiteral kRegionsGraph = R"(graph @regions {
  input %x : f32[4]
  param %w : f32[4]
  %a = mul(%x, %w) region "blk"
  %b = relu(%a) region "blk/inner"
  %c = tanh(%b) region "blk/inner"
  %d = add(%c, %a) region "blk"
  %e = exp(%d)
  %f = sin(%e) region "head"
  %g = mul(%f, %e) region "head"
  %loss = reduce_sum(%g)
  output %loss
}
)";

std::vector<std::string> regionList(const Graph &graph,
                                    llvm::StringRef spelling) {
  absl::StatusOr<RematPlan> plan = select(graph, spelling);
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<std::string> result;
  if (plan.ok())
    for (const RegionSpan &region : plan->regions)
      result.push_back(fmt::format("{}:{}", region.depth, region.path));
  return result;
}

TEST(CheckpointsTest, EveryRegion) {
  // Selected: blk, blk/inner, head. Outside them only e; head reads e from
  // outside, blk reads only leaves. d leaves blk but is recomputed with it.
  std::unique_ptr<Graph> graph = parse(kRegionsGraph);
  EXPECT_THAT(kept(*graph, "regions"), ElementsAre("e"));
  EXPECT_THAT(regionList(*graph, "regions"),
              ElementsAre("0:blk", "0:head", "1:blk/inner"));
}

TEST(CheckpointsTest, GivenRegions) {
  std::unique_ptr<Graph> graph = parse(kRegionsGraph);
  // Only blk/inner: everything outside it, and a, which flows into it.
  EXPECT_THAT(kept(*graph, "regions=blk/inner"),
              ElementsAre("a", "d", "e", "f", "g"));
  EXPECT_THAT(regionList(*graph, "regions=blk/inner"),
              ElementsAre("0:blk/inner"));
  // A path selects its descendants too; repeats are ignored.
  EXPECT_THAT(kept(*graph, "regions=head,blk,head"), ElementsAre("e"));
  EXPECT_THAT(regionList(*graph, "regions=head,blk,head"),
              ElementsAre("0:blk", "0:head"));
  EXPECT_THAT(regionList(*graph, "regions=blk,blk/inner"),
              ElementsAre("0:blk", "1:blk/inner"));
}

TEST(CheckpointsTest, RegionThatTagsNoOp) {
  std::unique_ptr<Graph> graph = parse(kRegionsGraph);
  EXPECT_EQ(errorOf(*graph, "regions=head,tail"),
            "planner 'regions': no op is in region 'tail'");
  // Paths nest by '/' components, not by characters.
  EXPECT_EQ(errorOf(*graph, "regions=bl"),
            "planner 'regions': no op is in region 'bl'");
}

TEST(CheckpointsTest, OverlappingRegions) {
  // p spans lines 3-5 and q lines 4-6. q's first op (line 4) is inside p's
  // span, and p's first op from there on is on line 5.
  std::unique_ptr<Graph> graph = parse(R"(graph @overlap {
  input %x : f32[4]
  %a = relu(%x) region "p"
  %b = tanh(%a) region "q"
  %c = exp(%b) region "p"
  %d = sin(%c) region "q"
  %loss = reduce_sum(%d)
  output %loss
}
)",
                                       "overlap.remat");
  EXPECT_EQ(errorOf(*graph, "regions"),
            "regions 'p' and 'q' overlap in the schedule but do not nest (ops "
            "at overlap.remat:5:3 and overlap.remat:4:3)");
}

TEST(CheckpointsTest, InterleavedChildrenOfOneSelectedRegion) {
  // s/x and s/y interleave: selecting both is an error, selecting only s is
  // not (its children are recomputed as part of it).
  std::unique_ptr<Graph> graph = parse(R"(graph @siblings {
  input %x : f32[4]
  %a = relu(%x) region "s/x"
  %b = tanh(%a) region "s/y"
  %c = exp(%b) region "s/x"
  %d = sin(%c)
  %loss = reduce_sum(%d)
  output %loss
}
)",
                                       "siblings.remat");
  EXPECT_EQ(errorOf(*graph, "regions"),
            "regions 's/x' and 's/y' overlap in the schedule but do not nest "
            "(ops at siblings.remat:5:3 and siblings.remat:4:3)");
  EXPECT_THAT(kept(*graph, "regions=s"), ElementsAre("d"));
}

TEST(CheckpointsTest, OverlapInABuiltGraphNamesTheOps) {
  // Ops built in memory have no location: the message names them. p = {a, c}
  // encloses q = {b} in the schedule.
  Graph graph("built");
  Builder b(graph);
  Value *x = b.input("x", Type(DType::F32, {4}));
  b.setRegion("p");
  Value *a = b.op("relu", {x}, {}, "a");
  b.setRegion("q");
  Value *bv = b.op("tanh", {a}, {}, "b");
  b.setRegion("p");
  Value *c = b.op("exp", {bv}, {}, "c");
  b.setRegion("");
  graph.addOutput(b.op("reduce_sum", {c}, {}, "loss"));
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_EQ(errorOf(graph, "regions"),
            "regions 'p' and 'q' overlap in the schedule but do not nest (ops "
            "at '%c = exp' and '%b = tanh')");
}

//===----------------------------------------------------------------------===//
// Zoo models
//===----------------------------------------------------------------------===//

struct ZooCase {
  const char *model;
  ZooOptions options;
};

std::vector<ZooCase> zooCases() {
  return {{"resnet", {{"depth", "18"}, {"image", "32"}, {"batch", "2"}}},
          {"transformer",
           {{"layers", "2"},
            {"d-model", "64"},
            {"heads", "4"},
            {"seq", "32"},
            {"vocab", "100"},
            {"batch", "2"}}},
          {"mlp", {}}};
}

TEST(CheckpointsZooTest, PlansAreNonEmptySubsetsInScheduleOrder) {
  for (const ZooCase &zoo : zooCases()) {
    auto graph = buildZooModel(zoo.model, zoo.options);
    ASSERT_TRUE(graph.ok()) << graph.status();
    absl::StatusOr<RematPlan> none = select(**graph, "none");
    ASSERT_TRUE(none.ok()) << none.status();
    std::vector<unsigned> position((*graph)->valueIdBound(), ~0u);
    for (unsigned i = 0; i < none->kept.size(); ++i)
      position[none->kept[i]->id()] = i;
    for (const char *spelling : {"speed", "memory", "sqrtn", "regions"}) {
      SCOPED_TRACE(fmt::format("{} --strategy={}", zoo.model, spelling));
      absl::StatusOr<RematPlan> plan = select(**graph, spelling);
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_FALSE(plan->kept.empty());
      EXPECT_LT(plan->kept.size(), none->kept.size());
      // Candidates only, strictly increasing in the schedule: no repeats.
      unsigned previous = 0;
      for (size_t i = 0; i < plan->kept.size(); ++i) {
        unsigned at = position[plan->kept[i]->id()];
        ASSERT_NE(at, ~0u) << plan->kept[i]->name().str();
        if (i) {
          EXPECT_GT(at, previous);
        }
        previous = at;
      }
    }
  }
}

TEST(CheckpointsZooTest, Deterministic) {
  for (const ZooCase &zoo : zooCases()) {
    auto first = buildZooModel(zoo.model, zoo.options);
    auto second = buildZooModel(zoo.model, zoo.options);
    ASSERT_TRUE(first.ok() && second.ok());
    for (const char *spelling :
         {"none", "speed", "memory", "sqrtn", "regions"}) {
      SCOPED_TRACE(fmt::format("{} --strategy={}", zoo.model, spelling));
      std::vector<std::string> once = kept(**first, spelling);
      EXPECT_EQ(kept(**first, spelling), once);
      EXPECT_EQ(kept(**second, spelling), once);
      EXPECT_EQ(regionList(**first, spelling), regionList(**second, spelling));
    }
  }
}

TEST(CheckpointsZooTest, TransformerRegionsKeepTheResidualStream) {
  // Every block h<i> (with h<i>/attn and h<i>/mlp inside), embed and head are
  // selected; what flows between outermost regions is the residual stream.
  auto graph = buildZooModel("transformer", zooCases()[1].options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_THAT(kept(**graph, "regions"),
              ElementsAre("embed", "h0.mlp.residual", "h1.mlp.residual"));
  EXPECT_THAT(regionList(**graph, "regions"),
              ElementsAre("0:embed", "0:h0", "0:h1", "0:head", "1:h0/attn",
                          "1:h0/mlp", "1:h1/attn", "1:h1/mlp"));
}

TEST(CheckpointsZooTest, EveryStrategyOnA200kOpMlp) {
  // 40000 layers of 5 ops (w, matmul, b, add, relu): 200k ops. 2x1024
  // activations have 2048 elements, above memory's minimum.
  auto graph = buildZooModel(
      "mlp", {{"layers", "40000"}, {"width", "1024"}, {"batch", "2"}});
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_GE((*graph)->numOps(), 200000u);
  for (const char *spelling :
       {"none", "all", "collection", "names=layer7.", "speed", "memory",
        "sqrtn", "regions", "regions=layer1,layer39999"}) {
    SCOPED_TRACE(spelling);
    absl::StatusOr<RematPlan> plan = select(**graph, spelling);
    EXPECT_TRUE(plan.ok()) << plan.status();
  }
}

TEST(CheckpointsTest, SqrtNTakesASegmentCount) {
  // Four tanh values of 16 bytes each: 64 bytes of candidates. One segment
  // closes only at the last (16 * 4 * 1 >= 64); two close at b (32 * 2 >= 64)
  // and at d; four keep every value.
  std::unique_ptr<Graph> graph = parse(R"(
graph @chain {
  param %x : f32[4]
  %a = tanh(%x)
  %b = tanh(%a)
  %c = tanh(%b)
  %d = tanh(%c)
  %loss = reduce_sum(%d) {axes = [0]}
  output %loss
}
)");
  EXPECT_THAT(kept(*graph, "sqrtn=1"), ElementsAre("d"));
  EXPECT_THAT(kept(*graph, "sqrtn=2"), ElementsAre("b", "d"));
  EXPECT_THAT(kept(*graph, "sqrtn=4"), ElementsAre("a", "b", "c", "d"));
  // ceil(sqrt(4)) = 2 segments by default.
  EXPECT_EQ(kept(*graph, "sqrtn"), kept(*graph, "sqrtn=2"));
  for (const char *bad : {"sqrtn=0", "sqrtn=-1", "sqrtn=two", "sqrtn=1,2"})
    EXPECT_EQ(errorOf(*graph, bad),
              fmt::format("planner 'sqrtn' takes one segment count of at "
                          "least 1, got '{}'",
                          bad));
}

} // namespace
} // namespace remat

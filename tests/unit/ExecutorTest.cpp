//===- ExecutorTest.cpp - The reference executor --------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The tracking allocator, runGraph on small graphs whose results and peaks
/// are worked out by hand (docs/memory-model.md), the feed rules, output
/// comparison and the executor's errors.
///
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Executor.h"

#include "remat/Analysis/Memory.h"
#include "remat/IO/TextFormat.h"
#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/IR/OpRegistry.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Runtime/Allocator.h"
#include "remat/Zoo/Zoo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <limits>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

HostTensor tensor(DType dtype, std::vector<int64_t> shape,
                  std::vector<double> values) {
  HostTensor result(Type(dtype, shape));
  EXPECT_EQ(int64_t(values.size()), result.numel());
  for (size_t i = 0; i < values.size(); ++i)
    setElementFromDouble(result.view(), int64_t(i), values[i]);
  return result;
}

std::vector<double> elements(const HostTensor &t) {
  std::vector<double> values;
  for (int64_t i = 0; i < t.numel(); ++i)
    values.push_back(t.at(i));
  return values;
}

bool sameBytes(const HostTensor &a, const HostTensor &b) {
  return a.type() == b.type() &&
         std::memcmp(a.view().raw(), b.view().raw(),
                     size_t(a.view().byteSize())) == 0;
}

RunResult runOk(const Graph &graph, const RunOptions &options = {}) {
  absl::StatusOr<RunResult> result = runGraph(graph, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(*result) : RunResult();
}

std::string runError(const Graph &graph, const RunOptions &options = {}) {
  absl::StatusOr<RunResult> result = runGraph(graph, options);
  EXPECT_FALSE(result.ok()) << "the run succeeded";
  return result.ok() ? "" : std::string(result.status().message());
}

//===----------------------------------------------------------------------===//
// TrackingAllocator
//===----------------------------------------------------------------------===//

TEST(TrackingAllocatorTest, CountsExactBytesAndThePeak) {
  TrackingAllocator allocator;
  void *a = allocator.allocate(100);
  void *b = allocator.allocate(28);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
  // 100 + 28, not rounded up to the alignment.
  EXPECT_EQ(allocator.currentBytes(), 128);
  allocator.deallocate(a, 100);
  EXPECT_EQ(allocator.currentBytes(), 28);
  void *c = allocator.allocate(50);
  // 28 + 50 = 78 never exceeds the earlier 128.
  EXPECT_EQ(allocator.currentBytes(), 78);
  EXPECT_EQ(allocator.peakBytes(), 128);
  EXPECT_EQ(allocator.numAllocations(), 3);
  allocator.deallocate(b, 28);
  allocator.deallocate(c, 50);
  EXPECT_EQ(allocator.currentBytes(), 0);
  EXPECT_EQ(allocator.peakBytes(), 128);
}

TEST(TrackingAllocatorTest, ZeroBytesIsNullAndUncounted) {
  TrackingAllocator allocator;
  EXPECT_EQ(allocator.allocate(0), nullptr);
  EXPECT_EQ(allocator.numAllocations(), 0);
  allocator.deallocate(nullptr, 0);
  EXPECT_EQ(allocator.currentBytes(), 0);
  EXPECT_EQ(allocator.peakBytes(), 0);
}

TEST(TrackingAllocatorTest, ChargedBytesCountTowardsThePeak) {
  TrackingAllocator allocator;
  void *a = allocator.allocate(10);
  allocator.charge(30);
  EXPECT_EQ(allocator.currentBytes(), 40);
  allocator.refund(30);
  allocator.deallocate(a, 10);
  EXPECT_EQ(allocator.currentBytes(), 0);
  EXPECT_EQ(allocator.peakBytes(), 40);
  // Charges are not allocations.
  EXPECT_EQ(allocator.numAllocations(), 1);
}

//===----------------------------------------------------------------------===//
// Running small graphs
//===----------------------------------------------------------------------===//

TEST(ExecutorTest, ChainOfRelusMatchesTheWorkedExample) {
  // docs/memory-model.md's example: three relus on f32[1024] (4096 bytes).
  // Step 2 holds x, a and b: 12288 bytes, the peak.
  Graph g("chain");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {1024}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *bv = b.op("relu", {a}, {}, "b");
  g.addOutput(b.op("relu", {bv}, {}, "c"));
  ASSERT_TRUE(b.status().ok());

  std::vector<double> data;
  for (int i = 0; i < 1024; ++i)
    data.push_back(i - 512);
  TensorMap feeds;
  feeds.emplace("x", tensor(DType::F32, {1024}, data));
  RunOptions options;
  options.feeds = &feeds;
  RunResult result = runOk(g, options);
  EXPECT_EQ(result.peakBytes, 12288);
  EXPECT_EQ(result.peakBytes, simulateMemory(g).peakBytes);
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0].first, "c");
  const HostTensor &c = result.outputs[0].second;
  EXPECT_EQ(c.type(), Type(DType::F32, {1024}));
  for (int i = 0; i < 1024; ++i)
    ASSERT_EQ(c.at(i), std::max(i - 512, 0)) << i;
}

TEST(ExecutorTest, MatmulBiasAndSum) {
  // x = [[1,2,3],[4,5,6]], w = [[1,0],[0,1],[1,1]]:
  //   h = x @ w = [[1+3, 2+3], [4+6, 5+6]] = [[4,5],[10,11]]
  //   y = h + [0.5, -1] = [[4.5,4],[10.5,10]];  s = sum(y) = 29.
  // Bytes: x 24, w 24, b 8 (leaves, 56 throughout), h 16, y 16, s 4.
  //   step 2 (h): 56 + 16 = 72; step 4 (y reads h): 56 + 16 + 16 = 88;
  //   step 5 (s reads y): 56 + 16 + 4 = 76. Peak 88.
  Graph g("affine");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {2, 3}));
  Value *w = b.param("w", Type(DType::F32, {3, 2}));
  Value *h = b.op("matmul", {x, w}, {}, "h");
  Value *bias = b.param("b", Type(DType::F32, {2}));
  Value *y = b.op("add", {h, bias}, {}, "y");
  g.addOutput(b.op("reduce_sum", {y}, {}, "s"));
  ASSERT_TRUE(b.status().ok());

  TensorMap feeds;
  feeds.emplace("x", tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  feeds.emplace("w", tensor(DType::F32, {3, 2}, {1, 0, 0, 1, 1, 1}));
  feeds.emplace("b", tensor(DType::F32, {2}, {0.5, -1}));
  RunOptions options;
  options.feeds = &feeds;
  RunResult result = runOk(g, options);
  EXPECT_EQ(result.peakBytes, 88);
  EXPECT_EQ(simulateMemory(g).peakBytes, 88);
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0].second.type(), Type::scalar(DType::F32));
  EXPECT_EQ(result.outputs[0].second.at(0), 29);
}

TEST(ExecutorTest, ViewsAliasTheirOperandAndKeepItAlive) {
  // r = relu(x) is read only through the reshape v, an output: r's storage
  // (24 bytes) stays to the end and v gets its own shape. Peak x + r = 48.
  Graph g("views");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {2, 3}));
  Value *r = b.op("relu", {x}, {}, "r");
  Value *s = b.op("stop_gradient", {r}, {}, "s");
  Value *v = b.op("reshape", {s}, {{"shape", Attribute({3, 2})}}, "v");
  g.addOutput(v);
  ASSERT_TRUE(b.status().ok());

  TensorMap feeds;
  feeds.emplace("x", tensor(DType::F32, {2, 3}, {-1, 2, -3, 4, -5, 6}));
  RunOptions options;
  options.feeds = &feeds;
  RunResult result = runOk(g, options);
  EXPECT_EQ(result.peakBytes, 48);
  EXPECT_EQ(simulateMemory(g).peakBytes, 48);
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0].second.type(), Type(DType::F32, {3, 2}));
  EXPECT_THAT(elements(result.outputs[0].second),
              ElementsAre(0, 2, 0, 4, 0, 6));
}

TEST(ExecutorTest, UnreadResultsAreFreedAfterTheirProducer) {
  // f32[256] is 1K = 1024 bytes.
  //   step 0: x                      x        = 1K
  //   step 1: a = neg x   (unread)   x, a     = 2K, then a is freed
  //   step 2: b = relu x             x, b     = 2K
  //   step 3: c = relu b  (output)   x, b, c  = 3K  <- peak
  // Keeping a to the end would measure 4K.
  Graph g("unread");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {256}));
  b.op("neg", {x}, {}, "a");
  Value *bv = b.op("relu", {x}, {}, "b");
  g.addOutput(b.op("relu", {bv}, {}, "c"));
  ASSERT_TRUE(b.status().ok());
  RunResult result = runOk(g);
  EXPECT_EQ(result.peakBytes, 3 * 1024);
  EXPECT_EQ(simulateMemory(g).peakBytes, 3 * 1024);
}

TEST(ExecutorTest, SplitWithAnUnusedPiece) {
  // x = [1,-2,3,-4] split into s0 = [1] (4 bytes, unread) and
  // s1 = [-2,3,-4] (12 bytes); o = relu(s1) = [0,3,0].
  //   step 1 (split): x 16 + s0 4 + s1 12 = 32, then s0 is freed
  //   step 2 (relu):  x 16 + s1 12 + o 12 = 40  <- peak
  Graph g("split");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {4}));
  Op *split = b.create(
      "split", {x}, {{"axis", Attribute(0)}, {"sizes", Attribute({1, 3})}},
      {"s0", "s1"});
  ASSERT_NE(split, nullptr) << b.status();
  g.addOutput(b.op("relu", {split->result(1)}, {}, "o"));
  ASSERT_TRUE(b.status().ok());

  TensorMap feeds;
  feeds.emplace("x", tensor(DType::F32, {4}, {1, -2, 3, -4}));
  RunOptions options;
  options.feeds = &feeds;
  RunResult result = runOk(g, options);
  EXPECT_EQ(result.peakBytes, 40);
  EXPECT_EQ(simulateMemory(g).peakBytes, 40);
  EXPECT_THAT(elements(result.outputs[0].second), ElementsAre(0, 3, 0));
}

TEST(ExecutorTest, AnOpReadingAValueTwiceFreesItOnce) {
  // a = relu(x) = [0, 2, 3]; y = a * a = [0, 4, 9]; z = -y.
  // Bytes (12 each): step 1 x, a = 24; step 2 x, a, y = 36 (a freed);
  // step 3 x, y, z = 36. Peak 36.
  Graph g("square");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {3}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *y = b.op("mul", {a, a}, {}, "y");
  g.addOutput(b.op("neg", {y}, {}, "z"));
  ASSERT_TRUE(b.status().ok());
  TensorMap feeds;
  feeds.emplace("x", tensor(DType::F32, {3}, {-1, 2, 3}));
  RunOptions options;
  options.feeds = &feeds;
  RunResult result = runOk(g, options);
  EXPECT_EQ(result.peakBytes, 36);
  EXPECT_THAT(elements(result.outputs[0].second), ElementsAre(0, -4, -9));
}

TEST(ExecutorTest, EveryOutputIsReturnedInOrderAndLeavesCanBeOutputs) {
  Graph g("outputs");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {2}));
  Value *n = b.op("neg", {x}, {}, "n");
  g.addOutput(n);
  g.addOutput(x);
  ASSERT_TRUE(b.status().ok());
  TensorMap feeds;
  feeds.emplace("x", tensor(DType::F32, {2}, {1.5, -2}));
  RunOptions options;
  options.feeds = &feeds;
  RunResult result = runOk(g, options);
  ASSERT_EQ(result.outputs.size(), 2u);
  EXPECT_EQ(result.outputs[0].first, "n");
  EXPECT_THAT(elements(result.outputs[0].second), ElementsAre(-1.5, 2));
  EXPECT_EQ(result.outputs[1].first, "x");
  EXPECT_THAT(elements(result.outputs[1].second), ElementsAre(1.5, -2));
}

TEST(ExecutorTest, FeedsReadInPlaceCountLikeCopies) {
  // The chain of ChainOfRelusMatchesTheWorkedExample. An f32 feed is read in
  // place and an f64 one converted into a copy; both count x's 4096 bytes,
  // and neither feed is written.
  Graph g("chain");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {1024}));
  g.addOutput(b.op("relu", {b.op("relu", {x}, {}, "a")}, {}, "b"));
  ASSERT_TRUE(b.status().ok());
  std::vector<double> data;
  for (int i = 0; i < 1024; ++i)
    data.push_back(i % 7 - 3);
  for (DType dtype : {DType::F32, DType::F64}) {
    TensorMap feeds;
    feeds.emplace("x", tensor(dtype, {1024}, data));
    RunOptions options;
    options.feeds = &feeds;
    RunResult result = runOk(g, options);
    EXPECT_EQ(result.peakBytes, 3 * 4096) << dtypeName(dtype).str();
    EXPECT_EQ(elements(feeds.at("x")), data);
    ASSERT_EQ(result.outputs.size(), 1u);
    for (int i = 0; i < 1024; ++i)
      ASSERT_EQ(result.outputs[0].second.at(i), std::max(data[i], 0.0)) << i;
  }
}

TEST(ExecutorTest, WidenedRunsHoldF32AsF64) {
  // The chain of ChainOfRelusMatchesTheWorkedExample in f64: twice the bytes.
  Graph g("chain");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {1024}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *bv = b.op("relu", {a}, {}, "b");
  g.addOutput(b.op("relu", {bv}, {}, "c"));
  ASSERT_TRUE(b.status().ok());
  RunOptions narrow;
  narrow.seed = 3;
  RunOptions wide = narrow;
  wide.widenFloats = true;
  RunResult f32 = runOk(g, narrow);
  RunResult f64 = runOk(g, wide);
  EXPECT_EQ(f64.peakBytes, 2 * 12288);
  ASSERT_EQ(f64.outputs.size(), 1u);
  EXPECT_EQ(f64.outputs[0].second.type(), Type(DType::F64, {1024}));
  // The seeded data is rounded to f32 before widening, so relu gives the
  // same numbers.
  EXPECT_EQ(elements(f32.outputs[0].second), elements(f64.outputs[0].second));
}

TEST(ExecutorTest, IntegerArithmeticWrapsAndDividesByZeroToZero) {
  // INT32_MAX + 1 wraps to INT32_MIN; 7 / 0 is 0; INT32_MIN / -1 wraps to
  // INT32_MIN.
  Graph g("ints");
  Builder b(g);
  Type t(DType::I32, {3});
  Value *p = b.input("p", t);
  Value *q = b.input("q", t);
  g.addOutput(b.op("add", {p, q}, {}, "sum"));
  g.addOutput(b.op("div", {p, q}, {}, "quotient"));
  ASSERT_TRUE(b.status().ok());
  TensorMap feeds;
  feeds.emplace("p", tensor(DType::I32, {3}, {INT32_MAX, 7, INT32_MIN}));
  feeds.emplace("q", tensor(DType::I32, {3}, {1, 0, -1}));
  RunOptions options;
  options.feeds = &feeds;
  RunResult result = runOk(g, options);
  ASSERT_EQ(result.outputs.size(), 2u);
  EXPECT_THAT(elements(result.outputs[0].second),
              ElementsAre(INT32_MIN, 7, INT32_MAX));
  EXPECT_THAT(elements(result.outputs[1].second),
              ElementsAre(INT32_MAX, 0, INT32_MIN));
}

TEST(ExecutorTest, AnEmptyGraphRunsInNoMemory) {
  Graph g("empty");
  RunResult result = runOk(g);
  EXPECT_EQ(result.peakBytes, 0);
  EXPECT_TRUE(result.outputs.empty());
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(ExecutorErrorTest, MissingKernelNamesTheOpAndItsLocation) {
  // A registry with the ops but no kernels.
  OpRegistry registry;
  registerAllOps(registry);
  Graph g("bare");
  g.setSourceName("bare.remat");
  Builder b(g, registry);
  Value *x = b.input("x", Type(DType::F32, {2}));
  Value *y = b.op("relu", {x}, {}, "y");
  ASSERT_TRUE(b.status().ok());
  y->producer()->setLoc({3, 5});
  g.addOutput(y);
  EXPECT_EQ(runError(g),
            "bare.remat:3:5: error: '%y = relu': no kernel for op 'relu'");
}

TEST(ExecutorErrorTest, MissingKernelIsReportedBeforeAnythingRuns) {
  OpRegistry registry;
  registerAllOps(registry);
  Graph g("bare");
  Builder b(g, registry);
  Value *x = b.input("x", Type(DType::F32, {2}));
  g.addOutput(b.op("neg", {b.op("identity", {x}, {}, "i")}, {}, "n"));
  ASSERT_TRUE(b.status().ok());
  // No location: the graph's name stands in. The view needs no kernel.
  EXPECT_EQ(runError(g), "bare: error: '%n = neg': no kernel for op 'neg'");
}

TEST(ExecutorErrorTest, KernelErrorsCarryTheOpLocation) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(R"(graph @g {
  input %logits : f32[2,3]
  input %labels : i32[2]
  %loss = softmax_cross_entropy(%logits, %labels) : f32[]
  output %loss
}
)",
                                                            "labels.remat");
  ASSERT_TRUE(graph.ok()) << graph.status();
  TensorMap feeds;
  feeds.emplace("labels", tensor(DType::I32, {2}, {1, 3}));
  RunOptions options;
  options.feeds = &feeds;
  std::string message = runError(**graph, options);
  EXPECT_THAT(message,
              StartsWith("labels.remat:4:3: error: '%loss = "
                         "softmax_cross_entropy': "));
  EXPECT_THAT(message, HasSubstr("3"));
  EXPECT_THAT(message, HasSubstr("out of range"));
}

TEST(ExecutorErrorTest, FeedsMustHaveTheLeafType) {
  Graph g("feeds");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {2}));
  g.addOutput(b.op("neg", {x}, {}, "n"));
  ASSERT_TRUE(b.status().ok());
  TensorMap feeds;
  feeds.emplace("x", tensor(DType::F32, {3}, {1, 2, 3}));
  RunOptions options;
  options.feeds = &feeds;
  EXPECT_EQ(runError(g, options),
            "feeds: error: '%x = input': feed 'x' has type f32[3], expected "
            "f32[2]");
  feeds.clear();
  feeds.emplace("x", tensor(DType::I32, {2}, {1, 2}));
  EXPECT_THAT(runError(g, options), HasSubstr("has type i32[2], expected"));
  // f32 and f64 convert into each other.
  feeds.clear();
  feeds.emplace("x", tensor(DType::F64, {2}, {0.25, -1}));
  RunResult result = runOk(g, options);
  EXPECT_THAT(elements(result.outputs[0].second), ElementsAre(-0.25, 1));
}

TEST(ExecutorErrorTest, HalfPrecisionLeavesAreRejected) {
  Graph g("half");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F16, {2}));
  g.addOutput(b.op("neg", {x}, {}, "n"));
  ASSERT_TRUE(b.status().ok());
  EXPECT_EQ(runError(g),
            "half: error: '%x = input': the executor cannot hold f16 data");
}

//===----------------------------------------------------------------------===//
// Feeds
//===----------------------------------------------------------------------===//

std::unique_ptr<Graph> zoo(llvm::StringRef model, const ZooOptions &options) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = buildZooModel(model, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

TEST(FeedsTest, AreAPureFunctionOfTheSeedAndTheName) {
  auto g = zoo("mlp", {{"layers", "2"}, {"width", "8"}, {"batch", "3"},
                       {"input", "5"}, {"classes", "4"}});
  ASSERT_TRUE(g);
  TensorMap first = makeFeeds(*g, 7);
  TensorMap again = makeFeeds(*g, 7);
  TensorMap other = makeFeeds(*g, 8);
  // Every input and param, nothing else.
  EXPECT_EQ(first.size(), g->inputs().size() + g->params().size());
  for (const auto &[name, t] : first) {
    ASSERT_TRUE(again.count(name)) << name;
    EXPECT_TRUE(sameBytes(t, again.at(name))) << name;
    EXPECT_FALSE(sameBytes(t, other.at(name))) << name;
  }

  // Another graph with an input of the same name and type gets the same data.
  Graph h("h");
  Builder b(h);
  Value *x = b.input(g->inputs()[0]->name(), g->inputs()[0]->type());
  b.input("unrelated", Type(DType::F32, {9}));
  h.addOutput(b.op("neg", {x}, {}, "n"));
  ASSERT_TRUE(b.status().ok());
  TensorMap hFeeds = makeFeeds(h, 7);
  std::string name = g->inputs()[0]->name().str();
  EXPECT_TRUE(sameBytes(hFeeds.at(name), first.at(name)));
}

TEST(FeedsTest, FloatRanges) {
  // mlp --input=5 --width=8 --classes=4: a dense weight [in, out] has fan-in
  // dim0 (layer0.w [5, 8]: |w| < sqrt(3/5)); biases are in [0.5, 1.5); the
  // data in [-1, 1).
  auto g = zoo("mlp", {{"layers", "1"}, {"width", "8"}, {"batch", "64"},
                       {"input", "5"}, {"classes", "4"}});
  ASSERT_TRUE(g);
  TensorMap feeds = makeFeeds(*g, 1);
  for (const Value *param : g->params()) {
    const HostTensor &t = feeds.at(param->name().str());
    double lo = 0.5, hi = 1.5;
    if (param->type().rank() >= 2) {
      double fanIn = double(param->type().dim(0));
      hi = std::sqrt(3.0 / fanIn);
      lo = -hi;
    }
    for (int64_t i = 0; i < t.numel(); ++i) {
      ASSERT_GE(t.at(i), lo) << param->name().str();
      ASSERT_LT(t.at(i), hi) << param->name().str();
    }
  }
  for (const Value *input : g->inputs()) {
    if (!input->type().isFloat())
      continue;
    const HostTensor &t = feeds.at(input->name().str());
    double lowest = 1, highest = -1;
    for (int64_t i = 0; i < t.numel(); ++i) {
      lowest = std::min(lowest, t.at(i));
      highest = std::max(highest, t.at(i));
    }
    EXPECT_GE(lowest, -1);
    EXPECT_LT(highest, 1);
    // 320 draws: both signs appear.
    EXPECT_LT(lowest, -0.5);
    EXPECT_GT(highest, 0.5);
  }
}

/// The largest element of integer feed `name`, checking all are >= 0.
int64_t maxIndex(const TensorMap &feeds, const std::string &name) {
  const HostTensor &t = feeds.at(name);
  int64_t highest = -1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    EXPECT_GE(t.at(i), 0) << name;
    highest = std::max(highest, int64_t(t.at(i)));
  }
  return highest;
}

TEST(FeedsTest, LabelsAndTokensStayInRange) {
  // transformer --vocab=50: tokens index wte [50, 32] and labels the logits'
  // 50 classes. 2 x 8 = 16 draws each.
  auto t = zoo("transformer", {{"layers", "1"}, {"d-model", "32"},
                               {"heads", "2"}, {"seq", "8"}, {"batch", "2"},
                               {"vocab", "50"}});
  ASSERT_TRUE(t);
  TensorMap feeds = makeFeeds(*t, 5);
  EXPECT_LT(maxIndex(feeds, "tokens"), 50);
  EXPECT_LT(maxIndex(feeds, "labels"), 50);

  // mlp --classes=3: 200 labels, all in [0, 3), and 2 appears.
  auto m = zoo("mlp", {{"layers", "1"}, {"width", "4"}, {"batch", "200"},
                       {"input", "2"}, {"classes", "3"}});
  ASSERT_TRUE(m);
  EXPECT_EQ(maxIndex(makeFeeds(*m, 5), "labels"), 2);
}

TEST(FeedsTest, IndexBoundsFollowViewsAndTakeTheMinimum) {
  // ids is reshaped and then indexes a [4, 2] table: ids < 4.
  // idx indexes axis 1 of x [5, 7] and a [3, 2] table: idx < min(7, 3) = 3.
  // free is indexed by nothing: < 16.
  Graph g("indices");
  Builder b(g);
  Value *ids = b.input("ids", Type(DType::I64, {200}));
  Value *idx = b.input("idx", Type(DType::I32, {200}));
  Value *free = b.input("free", Type(DType::I32, {200}));
  Value *table = b.param("table", Type(DType::F32, {4, 2}));
  Value *small = b.param("small", Type(DType::F32, {3, 2}));
  Value *x = b.input("x", Type(DType::F32, {5, 7}));
  Value *shaped = b.op("reshape", {ids}, {{"shape", Attribute({20, 10})}}, "r");
  g.addOutput(b.op("embedding", {table, shaped}, {}, "e"));
  g.addOutput(b.op("gather", {x, idx}, {{"axis", Attribute(1)}}, "gx"));
  g.addOutput(b.op("embedding", {small, idx}, {}, "es"));
  g.addOutput(free);
  ASSERT_TRUE(b.status().ok());
  TensorMap feeds = makeFeeds(g, 11);
  EXPECT_EQ(maxIndex(feeds, "ids"), 3);
  EXPECT_EQ(maxIndex(feeds, "idx"), 2);
  int64_t freeMax = maxIndex(feeds, "free");
  EXPECT_LT(freeMax, 16);
  EXPECT_GE(freeMax, 8);
  // The run itself stays in range.
  RunOptions options;
  options.seed = 11;
  runOk(g, options);
}

TEST(FeedsTest, TrainingGraphsGetTheForwardGraphsData) {
  // Autodiff adds gather_grad and softmax_cross_entropy_grad, which index with
  // the same tokens and labels and the same bounds: the feeds do not change.
  auto forward = zoo("transformer", {{"layers", "1"}, {"d-model", "8"},
                                     {"heads", "2"}, {"seq", "4"},
                                     {"batch", "2"}, {"vocab", "7"}});
  ASSERT_TRUE(forward);
  std::unique_ptr<Graph> training = forward->clone();
  ASSERT_TRUE(differentiate(*training).ok());
  TensorMap before = makeFeeds(*forward, 2);
  TensorMap after = makeFeeds(*training, 2);
  ASSERT_EQ(before.size(), after.size());
  for (const auto &[name, t] : before)
    EXPECT_TRUE(sameBytes(t, after.at(name))) << name;
}

//===----------------------------------------------------------------------===//
// compareOutputs
//===----------------------------------------------------------------------===//

RunResult outputs(std::vector<std::pair<std::string, HostTensor>> list) {
  RunResult result;
  result.outputs = std::move(list);
  return result;
}

TEST(CompareOutputsTest, DifferencesOfOutputsSharingAName) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double nan = std::nan("");
  RunResult a = outputs({
      {"same", tensor(DType::F32, {2}, {1, -2})},
      {"diff", tensor(DType::F32, {3}, {1, 2, 0})},
      {"onlyA", tensor(DType::F32, {1}, {1})},
      {"nans", tensor(DType::F64, {2}, {nan, 1})},
      {"types", tensor(DType::F32, {2}, {1, 2})},
  });
  RunResult b = outputs({
      {"types", tensor(DType::F64, {2}, {1, 2})},
      {"nans", tensor(DType::F64, {2}, {nan, nan})},
      {"diff", tensor(DType::F32, {3}, {1, 2.5, 0})},
      {"same", tensor(DType::F32, {2}, {1, -2})},
  });
  std::vector<OutputDiff> diffs = compareOutputs(a, b);
  // In a's order, without onlyA.
  ASSERT_EQ(diffs.size(), 4u);
  EXPECT_EQ(diffs[0].name, "same");
  EXPECT_EQ(diffs[0].maxAbsDiff, 0);
  EXPECT_EQ(diffs[0].maxRelDiff, 0);
  // |2 - 2.5| = 0.5, relative to max(2, 2.5): 0.2.
  EXPECT_EQ(diffs[1].name, "diff");
  EXPECT_EQ(diffs[1].maxAbsDiff, 0.5);
  EXPECT_DOUBLE_EQ(diffs[1].maxRelDiff, 0.2);
  // NaN against NaN is equal; NaN against 1 is infinitely different.
  EXPECT_EQ(diffs[2].name, "nans");
  EXPECT_EQ(diffs[2].maxAbsDiff, kInf);
  EXPECT_EQ(diffs[2].maxRelDiff, kInf);
  EXPECT_EQ(diffs[3].name, "types");
  EXPECT_TRUE(diffs[3].typeMismatch);
  EXPECT_EQ(diffs[3].maxAbsDiff, kInf);
  EXPECT_FALSE(diffs[1].typeMismatch);

  RunResult bothNan = outputs({{"n", tensor(DType::F64, {1}, {nan})}});
  std::vector<OutputDiff> nanDiffs = compareOutputs(bothNan, bothNan);
  ASSERT_EQ(nanDiffs.size(), 1u);
  EXPECT_EQ(nanDiffs[0].maxAbsDiff, 0);
}

TEST(CompareOutputsTest, TwoRunsWithTheSameSeedAreBitwiseEqual) {
  auto g = zoo("mlp", {{"layers", "2"}, {"width", "8"}, {"batch", "3"},
                       {"input", "5"}, {"classes", "4"}});
  ASSERT_TRUE(g);
  RunOptions options;
  options.seed = 42;
  RunResult first = runOk(*g, options);
  RunResult second = runOk(*g, options);
  for (const OutputDiff &diff : compareOutputs(first, second)) {
    EXPECT_EQ(diff.maxAbsDiff, 0) << diff.name;
    EXPECT_FALSE(diff.typeMismatch) << diff.name;
  }
  options.seed = 43;
  RunResult reseeded = runOk(*g, options);
  std::vector<OutputDiff> diffs = compareOutputs(first, reseeded);
  ASSERT_FALSE(diffs.empty());
  EXPECT_GT(diffs[0].maxAbsDiff, 0);
}

} // namespace
} // namespace remat

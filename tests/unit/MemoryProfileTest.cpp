//===- MemoryProfileTest.cpp - Op roles and live bytes by kind ------------===//
//
// Every figure below is worked out by hand from docs/memory-model.md and
// docs/pictures.md. All tensors are f32[1024], 4096 bytes; "K" is 4096.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Memory.h"
#include "remat/Analysis/OpRoles.h"
#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/Training/Training.h"

#include "SmallZooModels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

namespace remat {
namespace {

using ::testing::ElementsAre;

constexpr int64_t K = 4096;
const Type kT(DType::F32, {1024});

/// A training graph as autodiff and the recompute rewrite name it:
///
///   step  op                         role        storage kind, live steps
///   0     input x                    input       Input      0..9
///   1     param w                    param       Param      0..9
///   2     a = mul(x, w)              forward     Activation 2..3
///   3     b = tanh(a)                kept        Activation 3..6
///   4     loss = relu(b)   output    kept        Activation 4..9
///   5     loss.grad = ones_like(loss)  gradient  Gradient   5..6
///   6     b.grad = mul(loss.grad, b) gradient    Gradient   6..8
///   7     a.re = mul(x, w)           recomputed  Recomputed 7..8
///   8     a.grad = mul(b.grad, a.re) gradient    Gradient   8..9
///   9     w.grad = mul(a.grad, x)    gradient    ParamGrad  9..9 (output)
///
/// `loss` is kept because the seed reads it; `a` is not, its copy is read.
class TrainingShapedGraph : public ::testing::Test {
protected:
  void SetUp() override {
    Builder b(graph_);
    Value *x = b.input("x", kT);
    Value *w = b.param("w", kT);
    Value *a = b.op("mul", {x, w}, {}, "a");
    Value *bv = b.op("tanh", {a}, {}, "b");
    Value *loss = b.op("relu", {bv}, {}, "loss");
    Value *seed = b.op("ones_like", {loss}, {}, "loss.grad");
    Value *bGrad = b.op("mul", {seed, bv}, {}, "b.grad");
    Value *aCopy = b.op("mul", {x, w}, {}, "a.re");
    Value *aGrad = b.op("mul", {bGrad, aCopy}, {}, "a.grad");
    Value *wGrad = b.op("mul", {aGrad, x}, {}, "w.grad");
    graph_.addOutput(loss);
    graph_.addOutput(wGrad);
    ASSERT_TRUE(b.status().ok()) << b.status();
  }

  std::vector<std::string> roleNames() const {
    std::vector<OpRoleKind> roles = classifyOps(graph_, computeLiveness(graph_));
    std::vector<std::string> names;
    for (const Op &op : graph_.ops())
      names.push_back(opRoleName(roles[op.id()]));
    return names;
  }

  Graph graph_{"train"};
};

TEST_F(TrainingShapedGraph, RolesFollowOutputsNamesAndReads) {
  EXPECT_THAT(roleNames(),
              ElementsAre("input", "param", "forward", "kept", "kept",
                          "gradient", "gradient", "recomputed", "gradient",
                          "gradient"));
}

TEST_F(TrainingShapedGraph, ProfileSplitsLiveBytesByKind) {
  // Columns: Param, Input, ParamGrad, Activation, Recomputed, Gradient.
  std::vector<KindBytes> steps = profileMemoryByKind(graph_);
  EXPECT_THAT(steps, ElementsAre(KindBytes{K, K, 0, 0, 0, 0},      // 0
                                 KindBytes{K, K, 0, 0, 0, 0},      // 1
                                 KindBytes{K, K, 0, K, 0, 0},      // 2 a
                                 KindBytes{K, K, 0, 2 * K, 0, 0},  // 3 a b
                                 KindBytes{K, K, 0, 2 * K, 0, 0},  // 4 b loss
                                 KindBytes{K, K, 0, 2 * K, 0, K},  // 5 + seed
                                 KindBytes{K, K, 0, 2 * K, 0, 2 * K}, // 6
                                 KindBytes{K, K, 0, K, K, K},      // 7 a.re
                                 KindBytes{K, K, 0, K, K, 2 * K},  // 8
                                 KindBytes{K, K, K, K, 0, K}));    // 9
}

TEST_F(TrainingShapedGraph, ProfileTotalsAreTheSimulatedTimeline) {
  std::vector<KindBytes> steps = profileMemoryByKind(graph_);
  MemoryProfile profile = simulateMemory(graph_);
  ASSERT_EQ(steps.size(), profile.timeline.size());
  for (size_t i = 0; i < steps.size(); ++i)
    EXPECT_EQ(std::accumulate(steps[i].begin(), steps[i].end(), int64_t(0)),
              profile.timeline[i])
        << "step " << i;
  // Step 6 holds x, w, b, loss, loss.grad and b.grad.
  EXPECT_EQ(profile.peakBytes, 6 * K);
  EXPECT_EQ(profile.peakStep, 6);
}

TEST(OpRolesTest, RecomputeOpsAreKnownByNameAndShape) {
  Graph g("names");
  Builder b(g);
  Value *x = b.input("x", kT);
  Value *h = b.op("tanh", {x}, {}, "h");
  Value *copy = b.op("tanh", {x}, {}, "h.re");
  Value *second = b.op("tanh", {x}, {}, "h.re.1");
  Value *nested = b.op("tanh", {x}, {}, "h.re.re");
  Value *otherKind = b.op("relu", {x}, {}, "h.re.2");
  Value *boundary = b.op("stop_gradient", {h}, {}, "h.sg");
  Value *wrongOperand = b.op("stop_gradient", {x}, {}, "h.sg.1");
  Value *orphan = b.op("tanh", {x}, {}, "nothing.re");
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_FALSE(isRecomputeOp(*h->producer()));
  EXPECT_TRUE(isRecomputeOp(*copy->producer()));
  EXPECT_TRUE(isRecomputeOp(*second->producer()));
  EXPECT_TRUE(isRecomputeOp(*nested->producer()));
  EXPECT_FALSE(isRecomputeOp(*otherKind->producer()));
  EXPECT_TRUE(isRecomputeOp(*boundary->producer()));
  EXPECT_FALSE(isRecomputeOp(*wrongOperand->producer()));
  EXPECT_FALSE(isRecomputeOp(*orphan->producer()));
}

TEST(OpRolesTest, AForwardValueReadThroughAViewIsKept) {
  // The gradient op reads v, a view of h: h's storage stays for the
  // backward pass, so h is kept and the view itself is a forward op.
  Graph g("view");
  Builder b(g);
  Value *x = b.param("x", kT);
  Value *h = b.op("tanh", {x}, {}, "h");
  Value *v = b.op("identity", {h}, {}, "v");
  Value *loss = b.op("relu", {v}, {}, "loss");
  Value *grad = b.op("mul", {v, v}, {}, "x.grad");
  Value *unused = b.op("neg", {x}, {}, "unused");
  g.addOutput(loss);
  g.addOutput(grad);
  ASSERT_TRUE(b.status().ok()) << b.status();
  std::vector<OpRoleKind> roles = classifyOps(g, computeLiveness(g));
  EXPECT_EQ(roles[h->producer()->id()], OpRoleKind::Kept);
  EXPECT_EQ(roles[v->producer()->id()], OpRoleKind::Forward);
  EXPECT_EQ(roles[grad->producer()->id()], OpRoleKind::Gradient);
  EXPECT_EQ(roles[unused->producer()->id()], OpRoleKind::Unused);
}

TEST(MemoryProfileTest, TotalsMatchTheSimulationOnRecomputedZooModels) {
  for (const auto &[model, options] : smallModels()) {
    SCOPED_TRACE(model);
    auto graph = buildZooModel(model, options);
    ASSERT_TRUE(graph.ok()) << graph.status();
    TrainingOptions training;
    training.planner = "sqrtn";
    auto report = buildTrainingGraph(**graph, training);
    ASSERT_TRUE(report.ok()) << report.status();
    std::vector<KindBytes> steps = profileMemoryByKind(**graph);
    MemoryProfile profile = simulateMemory(**graph);
    ASSERT_EQ(steps.size(), profile.timeline.size());
    for (size_t i = 0; i < steps.size(); ++i)
      ASSERT_EQ(std::accumulate(steps[i].begin(), steps[i].end(), int64_t(0)),
                profile.timeline[i])
          << "step " << i;
    // The params' bytes are the same at every step; they are the first
    // column and the breakdown's params at the peak.
    EXPECT_EQ(steps[profile.peakStep][unsigned(StorageKind::Param)],
              profile.peakBreakdown.params);
    EXPECT_EQ(steps[profile.peakStep][unsigned(StorageKind::ParamGrad)],
              profile.peakBreakdown.paramGrads);
  }
}

TEST(MemoryProfileTest, RecomputedBytesAppearOnlyWithACheckpointStrategy) {
  for (const char *strategy : {"none", "sqrtn"}) {
    SCOPED_TRACE(strategy);
    auto graph = buildZooModel(
        "mlp", {{"layers", "4"}, {"width", "16"}, {"batch", "2"}});
    ASSERT_TRUE(graph.ok()) << graph.status();
    TrainingOptions training;
    training.planner = strategy;
    auto report = buildTrainingGraph(**graph, training);
    ASSERT_TRUE(report.ok()) << report.status();
    int64_t recomputed = 0;
    for (const KindBytes &bytes : profileMemoryByKind(**graph))
      recomputed += bytes[unsigned(StorageKind::Recomputed)];
    EXPECT_EQ(recomputed > 0, report->flopsRecompute > 0);
  }
}

} // namespace
} // namespace remat

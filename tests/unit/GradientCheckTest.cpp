//===- GradientCheckTest.cpp - Autodiff against finite differences --------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The checker on graphs whose gradients are known by hand, on a graph where
/// autodiff and differences disagree on purpose (relu's kink), on graphs with
/// `stop_gradient`, on its errors, and on zoo models.
///
//===----------------------------------------------------------------------===//

#include "remat/Runtime/GradientCheck.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/Zoo/Zoo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace remat {
namespace {

using ::testing::HasSubstr;

/// loss = sum(w * x) (with `stop` set: sum(stop_gradient(w) * x)) for
/// w : f32[n] and x : f32[n].
std::unique_ptr<Graph> dotGraph(int64_t n, bool stop = false) {
  auto g = std::make_unique<Graph>("dot");
  Builder b(*g);
  Value *w = b.param("w", Type(DType::F32, {n}));
  Value *x = b.input("x", Type(DType::F32, {n}));
  Value *used = stop ? b.op("stop_gradient", {w}, {}, "w.stopped") : w;
  Value *prod = b.op("mul", {used, x}, {}, "prod");
  g->addOutput(b.op("reduce_sum", {prod}, {}, "loss"));
  EXPECT_TRUE(b.status().ok()) << b.status();
  return g;
}

TEST(GradientCheckTest, LinearLossHasTheInputAsGradient) {
  // d/dw sum(w * x) = x, and central differences of a linear function are
  // exact up to rounding: every entry agrees to well below the tolerance.
  std::unique_ptr<Graph> g = dotGraph(10);
  GradientCheckOptions options;
  options.seed = 3;
  options.samplesPerParam = 4;
  absl::StatusOr<GradientCheckReport> report = checkGradients(*g, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->passed);
  ASSERT_EQ(report->samples.size(), 4u);
  EXPECT_LT(report->worstError, 1e-6);
  EXPECT_GE(report->worstSample, 0);
  // Distinct entries in ascending order, within the param.
  for (size_t i = 0; i < report->samples.size(); ++i) {
    const GradientSample &sample = report->samples[i];
    EXPECT_EQ(sample.param, "w");
    EXPECT_GE(sample.index, 0);
    EXPECT_LT(sample.index, 10);
    if (i > 0) {
      EXPECT_LT(report->samples[i - 1].index, sample.index);
    }
    EXPECT_NEAR(sample.analytic, sample.numeric, 1e-6);
    // The data are in [-1, 1), so the gradient is too.
    EXPECT_LE(std::fabs(sample.analytic), 1);
  }

  // The same seed samples the same entries.
  absl::StatusOr<GradientCheckReport> again = checkGradients(*g, options);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < report->samples.size(); ++i)
    EXPECT_EQ(again->samples[i].index, report->samples[i].index);
}

TEST(GradientCheckTest, SmallParamsAreCheckedEntirely) {
  std::unique_ptr<Graph> g = dotGraph(3);
  GradientCheckOptions options;
  options.samplesPerParam = 8;
  absl::StatusOr<GradientCheckReport> report = checkGradients(*g, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->samples.size(), 3u);
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(report->samples[i].index, i);
}

/// loss = sum(relu(w - stop_gradient(w))) for w : f32[n]: the relu reads
/// exactly 0, its kink.
std::unique_ptr<Graph> kinkGraph(int64_t n) {
  auto g = std::make_unique<Graph>("kink");
  Builder b(*g);
  Value *w = b.param("w", Type(DType::F32, {n}));
  Value *zero =
      b.op("sub", {w, b.op("stop_gradient", {w}, {}, "w.stopped")}, {}, "zero");
  g->addOutput(b.op("reduce_sum", {b.op("relu", {zero}, {}, "r")}, {}, "loss"));
  EXPECT_TRUE(b.status().ok()) << b.status();
  return g;
}

TEST(GradientCheckTest, AGradientThatDisagreesFails) {
  // At relu's kink autodiff takes the derivative 0 (docs/gradients.md), while
  // central differences see (relu(h) - relu(-h)) / 2h = 0.5: the error is
  // |0 - 0.5| / max(0, 0.5, floor) = 1 for every entry, as the floor is a
  // fraction of the largest analytic gradient entry: 0.
  std::unique_ptr<Graph> g = kinkGraph(6);
  absl::StatusOr<GradientCheckReport> report = checkGradients(*g);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->passed);
  EXPECT_DOUBLE_EQ(report->worstError, 1);
  for (const GradientSample &sample : report->samples) {
    EXPECT_EQ(sample.analytic, 0);
    EXPECT_NEAR(sample.numeric, 0.5, 1e-6);
  }
}

TEST(GradientCheckTest, StoppedValuesAreHeldWhileDifferencing) {
  // sum(stop_gradient(w) * x) does not depend on w through the stopped path:
  // autodiff gives 0, and so must the differences.
  std::unique_ptr<Graph> g = dotGraph(6, /*stop=*/true);
  GradientCheckOptions options;
  options.samplesPerParam = 6;
  absl::StatusOr<GradientCheckReport> report = checkGradients(*g, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->passed);
  ASSERT_EQ(report->samples.size(), 6u);
  for (const GradientSample &sample : report->samples) {
    EXPECT_EQ(sample.analytic, 0);
    EXPECT_EQ(sample.numeric, 0);
  }
}

TEST(GradientCheckTest, StoppedSigmoidMixedIntoTheLoss) {
  // s = sigmoid(x @ w + b), loss = sum(s * stop_gradient(s)): the gradient
  // through s alone is s * s' per entry, half of what the differences see
  // when the stopped copy moves too (relative error 0.5 at every entry).
  auto g = std::make_unique<Graph>("stopped_sigmoid");
  Builder b(*g);
  Value *x = b.input("x", Type(DType::F32, {4, 3}));
  Value *w = b.param("w", Type(DType::F32, {3, 5}));
  Value *bias = b.param("b", Type(DType::F32, {5}));
  Value *s = b.op("sigmoid",
                  {b.op("add", {b.op("matmul", {x, w}, {}, "xw"), bias}, {},
                        "z")},
                  {}, "s");
  Value *sg = b.op("stop_gradient", {s}, {}, "sg");
  g->addOutput(b.op("reduce_sum", {b.op("mul", {s, sg}, {}, "m")}, {}, "loss"));
  ASSERT_TRUE(b.status().ok()) << b.status();
  GradientCheckOptions options;
  options.samplesPerParam = 15;
  absl::StatusOr<GradientCheckReport> report = checkGradients(*g, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->passed) << "worst error " << report->worstError;
  EXPECT_LT(report->worstError, 1e-5);
  EXPECT_EQ(report->samples.size(), 20u);
}

TEST(GradientCheckTest, Errors) {
  Graph noParams("noparams");
  Builder b(noParams);
  Value *x = b.input("x", Type(DType::F32, {2}));
  noParams.addOutput(b.op("reduce_sum", {x}, {}, "loss"));
  ASSERT_TRUE(b.status().ok());
  absl::StatusOr<GradientCheckReport> report = checkGradients(noParams);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().message(), "graph @noparams has no params to check");

  Graph vector("vector");
  Builder v(vector);
  Value *w = v.param("w", Type(DType::F32, {2}));
  vector.addOutput(v.op("neg", {w}, {}, "loss"));
  ASSERT_TRUE(v.status().ok());
  report = checkGradients(vector);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().message(),
            "the loss %loss has type f32[2], expected a float scalar");
}

TEST(GradientCheckTest, ZooModelsPass) {
  struct Case {
    const char *model;
    ZooOptions options;
  };
  std::vector<Case> cases = {
      {"mlp",
       {{"layers", "2"}, {"width", "8"}, {"batch", "3"}, {"input", "5"},
        {"classes", "4"}}},
      {"transformer",
       {{"layers", "1"}, {"d-model", "8"}, {"heads", "2"}, {"seq", "4"},
        {"batch", "2"}, {"vocab", "11"}}},
      {"lstm",
       {{"steps", "3"}, {"hidden", "4"}, {"batch", "2"}, {"input", "3"},
        {"classes", "3"}}},
  };
  for (const Case &c : cases) {
    absl::StatusOr<std::unique_ptr<Graph>> graph =
        buildZooModel(c.model, c.options);
    ASSERT_TRUE(graph.ok()) << graph.status();
    GradientCheckOptions options;
    options.samplesPerParam = 2;
    absl::StatusOr<GradientCheckReport> report =
        checkGradients(**graph, options);
    ASSERT_TRUE(report.ok()) << c.model << ": " << report.status();
    EXPECT_TRUE(report->passed)
        << c.model << ": worst error " << report->worstError << " at "
        << report->samples[report->worstSample].param << "["
        << report->samples[report->worstSample].index << "]";
    EXPECT_EQ(report->samples.size(), 2 * (*graph)->params().size())
        << c.model;
  }
}

} // namespace
} // namespace remat

//===- MeasuredCostsTest.cpp - Planning with a runtime's op times ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A profile's nodes are attributed to the ops whose names start them, the
/// unnamed ops are costed at the measured time per FLOP, and a plan made
/// with measured times costs less measured time than the FLOP plan.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/MeasuredCosts.h"

#include "remat/Analysis/Cost.h"
#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Training/Training.h"
#include "remat/Zoo/Zoo.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>

namespace remat {
namespace {

int64_t costOf(const Value *value) {
  return value->producer()->findAttr(kCostAttr)->asInt();
}

TEST(MeasuredCostsTest, NodesGoToTheOpTheirNameStartsWith) {
  Graph g("g");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {4, 8}));
  Value *a = b.op("relu", {x}, {}, "a");
  Value *ab = b.op("tanh", {a}, {}, "a.b");
  Value *c = b.op("neg", {ab}, {}, "c");
  Value *d = b.op("exp", {c}, {}, "d");
  g.addOutput(d);
  ASSERT_TRUE(b.status().ok()) << b.status();
  double measuredFlops = double(opFlops(*a->producer()) +
                                opFlops(*ab->producer()) +
                                opFlops(*c->producer()));
  int64_t flopsOfD = opFlops(*d->producer());
  ASSERT_GT(flopsOfD, 0);

  NodeProfile profile{"prof.json", {
      {"a.Relu", 2e-6},
      {"a.b.Tanh", 5e-6},
      // A runtime's renamings keep the start: `_`, `/` and `.` end a name.
      {"a_nchwc", 1e-6},
      {"a.b/Fusion/", 3e-6},
      {"c.Neg.7", 4e-6},
      // Another runtime's node, and one whose name only starts like an op's.
      {"ReorderInput", 7e-6},
      {"cx.Neg", 1e-6}}};
  absl::StatusOr<MeasuredCostSummary> summary = applyMeasuredCosts(g, profile);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(costOf(a), 3000);
  EXPECT_EQ(costOf(ab), 8000);
  EXPECT_EQ(costOf(c), 4000);
  EXPECT_EQ(summary->opsMeasured, 3);
  EXPECT_EQ(summary->nodesUnattributed, 2);
  EXPECT_EQ(summary->firstUnattributed, "ReorderInput");
  EXPECT_DOUBLE_EQ(summary->secondsUnattributed, 8e-6);
  EXPECT_DOUBLE_EQ(summary->secondsMeasured, 15e-6);
  // %d has no node: its FLOPs at the measured ops' 15 us per FLOP.
  EXPECT_EQ(summary->opsEstimated, 1);
  EXPECT_EQ(summary->firstEstimated, d->producer()->describe());
  EXPECT_EQ(costOf(d), std::llround(double(flopsOfD) * 15e3 / measuredFlops));
  // Inputs cost nothing and get no attribute.
  EXPECT_EQ(x->producer()->findAttr(kCostAttr), nullptr);
}

TEST(MeasuredCostsTest, AProfileOfAnotherGraphIsAnError) {
  Graph g("g");
  Builder b(g);
  Value *x = b.input("x", Type(DType::F32, {4}));
  g.addOutput(b.op("relu", {x}, {}, "a"));
  ASSERT_TRUE(b.status().ok()) << b.status();
  absl::StatusOr<MeasuredCostSummary> summary =
      applyMeasuredCosts(g, {"prof.json", {{"h1.MatMul", 1e-3}}});
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().message(),
            "prof.json: error: the profile names none of the 1 ops of @g: was it measured on "
            "the export of this training graph?");
}

/// A fresh temporary file holding `text`, removed when this goes.
class TemporaryFile {
public:
  explicit TemporaryFile(const std::string &text) {
    int fd;
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("costs", "json", fd, path_));
    remover_.setFile(path_);
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
  }
  std::string path() const { return path_.str().str(); }

private:
  llvm::SmallString<128> path_;
  llvm::FileRemover remover_;
};

TEST(MeasuredCostsTest, ReadsTheProfileAndNamesWhatIsWrongInIt) {
  TemporaryFile goodFile(
      R"({"nodes": [{"name": "a.Relu", "op_type": "Relu", "seconds": 2.5e-6}]})");
  std::string good = goodFile.path();
  absl::StatusOr<NodeProfile> read = readNodeProfile(good);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->path, good);
  ASSERT_EQ(read->nodes.size(), 1u);
  EXPECT_EQ(read->nodes[0].name, "a.Relu");
  EXPECT_DOUBLE_EQ(read->nodes[0].seconds, 2.5e-6);

  struct Case {
    std::string text, message;
  };
  for (const Case &bad : std::vector<Case>{
           {"{\"nodes\": [\n  {\"name\": \"a\",}]}",
            ":2:16: error: Expected object key"},
           {"[]", ": error: expected an object with an array \"nodes\""},
           {R"({"nodes": [{"name": "a"}]})",
            ": error: nodes[0] needs a string \"name\" and a number "
            "\"seconds\""},
           {R"({"nodes": [{"name": "a", "seconds": -1}]})",
            ": error: nodes[0] ('a') has -1 seconds, expected 0 to 1e+06"}}) {
    TemporaryFile file(bad.text);
    std::string path = file.path();
    absl::StatusOr<NodeProfile> read = readNodeProfile(path);
    ASSERT_FALSE(read.ok()) << bad.text;
    std::string message(read.status().message());
    EXPECT_EQ(message.substr(0, path.size()), path);
    EXPECT_NE(message.find(bad.message), std::string::npos)
        << message << "\nexpected: " << bad.message;
  }
  absl::StatusOr<NodeProfile> missing =
      readNodeProfile("/nonexistent/costs.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(
                "/nonexistent/costs.json: error: cannot read file"),
            std::string::npos);
}

/// A profile of `graph`'s plain training graph whose times are unrelated to
/// FLOPs: 1 to 1000 us per op from a fixed linear congruential sequence.
NodeProfile unrelatedTimes(const Graph &forward) {
  std::unique_ptr<Graph> training = forward.clone();
  EXPECT_TRUE(differentiate(*training, AutodiffOptions()).ok());
  NodeProfile profile{"unrelated.json", {}};
  uint64_t state = 12345;
  for (const Op &op : training->ops()) {
    if (op.def().hasFlag(OpFlagLeaf))
      continue;
    state = state * 6364136223846793005u + 1442695040888963407u;
    double micros = 1 + double((state >> 33) % 1000);
    profile.nodes.push_back(
        {op.result(0)->name().str() + ".Node", micros * 1e-6});
  }
  return profile;
}

/// The nanoseconds `profile` gives `graph`'s ops, a recomputed copy
/// (`%h.re`, `%h.re.1`) those of its original.
int64_t profiledNanos(const Graph &graph, const NodeProfile &profile) {
  llvm::StringMap<double> seconds;
  for (const NodeSeconds &node : profile.nodes)
    seconds[llvm::StringRef(node.name).rsplit('.').first] = node.seconds;
  int64_t total = 0;
  for (const Op &op : graph.ops()) {
    if (op.def().hasFlag(OpFlagLeaf))
      continue;
    llvm::StringRef name = op.result(0)->name();
    name = name.substr(0, name.find(".re"));
    auto it = seconds.find(name);
    EXPECT_NE(it, seconds.end()) << name.str();
    if (it != seconds.end())
      total += std::max<int64_t>(1, std::llround(it->second * 1e9));
  }
  return total;
}

TEST(MeasuredCostsTest, APlanMadeWithMeasuredTimesCostsLessMeasuredTime) {
  absl::StatusOr<std::unique_ptr<Graph>> model = buildZooModel(
      "mlp", {{"layers", "12"},
              {"width", "32"},
              {"batch", "256"},
              {"input", "32"},
              {"classes", "8"}});
  ASSERT_TRUE(model.ok()) << model.status();
  auto profile = std::make_shared<const NodeProfile>(unrelatedTimes(**model));

  TrainingOptions options;
  options.planner = "chain";
  options.budget = "60%";
  std::unique_ptr<Graph> byFlops = (*model)->clone();
  absl::StatusOr<TrainingReport> flopsReport =
      buildTrainingGraph(*byFlops, options);
  ASSERT_TRUE(flopsReport.ok()) << flopsReport.status();
  options.measuredCosts = profile;
  std::unique_ptr<Graph> byTime = (*model)->clone();
  absl::StatusOr<TrainingReport> timeReport =
      buildTrainingGraph(*byTime, options);
  ASSERT_TRUE(timeReport.ok()) << timeReport.status();

  ASSERT_TRUE(flopsReport->budgetMet.value_or(false));
  ASSERT_TRUE(timeReport->budgetMet.value_or(false));
  EXPECT_FALSE(flopsReport->measuredCosts);
  ASSERT_TRUE(timeReport->measuredCosts);
  EXPECT_EQ(timeReport->measuredCosts->opsEstimated, 0);
  EXPECT_EQ(timeReport->measuredCosts->nodesUnattributed, 0);
  // The plans differ, and the FLOP plan costs more of the profile's time.
  std::vector<std::string> keptByFlops, keptByTime;
  for (const ReportTensor &kept : flopsReport->checkpoints)
    keptByFlops.push_back(kept.name);
  for (const ReportTensor &kept : timeReport->checkpoints)
    keptByTime.push_back(kept.name);
  EXPECT_NE(keptByFlops, keptByTime);
  EXPECT_EQ(graphFlops(*byTime),
            timeReport->flopsForward + timeReport->flopsBackward +
                timeReport->flopsRecompute);
  EXPECT_EQ(graphFlops(*byTime), profiledNanos(*byTime, *profile));
  EXPECT_LT(profiledNanos(*byTime, *profile),
            profiledNanos(*byFlops, *profile));
}

} // namespace
} // namespace remat

//===- PassManagerTest.cpp - Pass manager, registry and pipeline parsing ----===//

#include "PassTestSupport.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Verifier.h"
#include "remat/Pass/PassManager.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using test::floatTensor;
using test::scheduleNames;

/// The message of a failed pipeline parse; empty (and a test failure) if it
/// parsed.
std::string parseError(llvm::StringRef pipeline) {
  PassManager pm;
  absl::Status status = parsePassPipeline(pipeline, pm);
  EXPECT_FALSE(status.ok()) << pipeline.str();
  EXPECT_EQ(pm.size(), 0u) << "a failed parse adds no pass";
  return std::string(status.message());
}

/// x -> a = relu -> output; d = exp(a) leads nowhere, and `u` is unused.
void buildSmallGraph(Graph &g) {
  Builder b(g);
  Value *x = b.input("x", floatTensor({4}));
  b.input("u", floatTensor({4}));
  Value *a = b.op("relu", {x}, {}, "a");
  b.op("exp", {a}, {}, "d");
  g.addOutput(a);
  ASSERT_TRUE(b.status().ok()) << b.status();
}

TEST(PipelineParserTest, ParsesPassesWithOptionsAndWhitespace) {
  PassManager pm;
  ASSERT_TRUE(parsePassPipeline(
                  "  dce { keep-unused-leaves = false } ,cse,\ttoposort{} ", pm)
                  .ok());
  EXPECT_EQ(pm.size(), 3u);

  Graph g("p");
  buildSmallGraph(g);
  absl::StatusOr<PipelineResult> result = pm.run(g);
  ASSERT_TRUE(result.ok()) << result.status();
  // keep-unused-leaves=false took effect: `u` went with `d`.
  EXPECT_THAT(scheduleNames(g), ElementsAre("x", "a"));
}

TEST(PipelineParserTest, EmptyPipelineAddsNothing) {
  PassManager pm;
  EXPECT_TRUE(parsePassPipeline("", pm).ok());
  EXPECT_TRUE(parsePassPipeline("   ", pm).ok());
  EXPECT_EQ(pm.size(), 0u);
}

TEST(PipelineParserTest, QuotedValuesMayHoldSeparators) {
  PassRegistry registry;
  std::string seen;
  registry.add({.argument = "probe",
                .summary = "Records its option",
                .options = {{.name = "text", .help = "Anything"}},
                .factory = [&](const PassOptions &options)
                    -> absl::StatusOr<std::unique_ptr<Pass>> {
                  seen = options.getString("text", "");
                  return createVerifyPass();
                }});
  PassManager pm;
  ASSERT_TRUE(parsePassPipeline(R"(probe{text="a, b}"})", pm, registry).ok());
  EXPECT_EQ(seen, "a, b}");
}

TEST(PipelineParserTest, ErrorsNameTheColumn) {
  // Columns count from 1: in "dce,,cse" the second ',' is character 5.
  EXPECT_EQ(parseError("dce,,cse"),
            "pipeline:1:5: error: expected a pass name, got ','");
  EXPECT_EQ(parseError("dce,"),
            "pipeline:1:5: error: expected a pass name, got the end of the "
            "pipeline");
  EXPECT_EQ(parseError("dce cse"),
            "pipeline:1:5: error: expected ',' or the end of the pipeline, "
            "got 'c'");
  EXPECT_EQ(parseError("cse, dcx"),
            "pipeline:1:6: error: unknown pass 'dcx'; did you mean 'dce'?");
  EXPECT_EQ(parseError("frobnicate"),
            "pipeline:1:1: error: unknown pass 'frobnicate'");
  // "dce{" is 4 characters, so the key starts at 5.
  EXPECT_EQ(parseError("dce{bogus=1}"),
            "pipeline:1:5: error: pass 'dce' has no option 'bogus' (it takes "
            "keep-unused-leaves)");
  EXPECT_EQ(parseError("cse{a=1}"),
            "pipeline:1:5: error: pass 'cse' takes no options, got 'a'");
  // 4 + 18 characters of "keep-unused-leaves" + '=': the value is at 24.
  EXPECT_EQ(parseError("dce{keep-unused-leaves=maybe}"),
            "pipeline:1:24: error: option 'keep-unused-leaves' of pass 'dce' "
            "expects true or false, got 'maybe'");
  EXPECT_EQ(parseError("dce{keep-unused-leaves=true,keep-unused-leaves=false}"),
            "pipeline:1:29: error: option 'keep-unused-leaves' of pass 'dce' "
            "is given twice");
  EXPECT_EQ(parseError("dce{keep-unused-leaves}"),
            "pipeline:1:23: error: expected '=' after option "
            "'keep-unused-leaves', got '}'");
  EXPECT_EQ(parseError("dce{keep-unused-leaves=true"),
            "pipeline:1:28: error: expected ',' or '}' in the options, got the "
            "end of the pipeline");
  EXPECT_EQ(parseError("dce{keep-unused-leaves=}"),
            "pipeline:1:24: error: expected an option value, got '}'");
  EXPECT_EQ(parseError("dce{,}"),
            "pipeline:1:5: error: expected an option name, got ','");
  EXPECT_EQ(parseError("cse,\n  dcx"),
            "pipeline:2:3: error: unknown pass 'dcx'; did you mean 'dce'?");
}

TEST(PassRegistryTest, ListsTheBuiltInPassesSorted) {
  std::vector<std::string> names;
  for (const PassInfo *info : PassRegistry::global().all())
    names.push_back(info->argument);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char *name :
       {"verify", "dce", "cse", "toposort", "test-print-toposort-levels",
        "test-print-liveness", "test-print-bottlenecks"})
    EXPECT_NE(PassRegistry::global().lookup(name), nullptr) << name;
  const PassInfo *dce = PassRegistry::global().lookup("dce");
  ASSERT_EQ(dce->options.size(), 1u);
  EXPECT_EQ(dce->options[0].defaultValue, "true");
}

TEST(PassRegistryTest, CreateChecksNamesAndOptions) {
  const PassRegistry &registry = PassRegistry::global();
  absl::StatusOr<std::unique_ptr<Pass>> pass =
      registry.create("dce", {{"keep-unused-leaves", "0"}});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ((*pass)->argument(), "dce");
  EXPECT_EQ(registry.create("topsort").status().message(),
            "unknown pass 'topsort'; did you mean 'toposort'?");
  EXPECT_EQ(registry.create("dce", {{"keep-unused-leaves", "yes"}})
                .status()
                .message(),
            "option 'keep-unused-leaves' of pass 'dce' expects true or false, "
            "got 'yes'");
  EXPECT_EQ(registry.suggest("qwertyuiop"), "");
}

TEST(PassOptionsTest, TypedGettersFallBackToDefaults) {
  PassOptions options{{"n", "42"}, {"flag", "false"}, {"bad", "4x"}};
  EXPECT_EQ(*options.getInt("n", 7), 42);
  EXPECT_EQ(*options.getInt("missing", 7), 7);
  EXPECT_FALSE(*options.getBool("flag", true));
  EXPECT_EQ(options.getString("missing", "d"), "d");
  EXPECT_EQ(options.getInt("bad", 0).status().message(),
            "option 'bad' expects an integer, got '4x'");
  options.set("n", "43");
  EXPECT_EQ(*options.getInt("n", 7), 43);
  EXPECT_EQ(options.entries().size(), 3u);
}

/// A deliberately broken pass: moves the last op to the front of the
/// schedule, so that an op runs before its operands.
class BreakSchedulePass : public Pass {
public:
  llvm::StringRef argument() const override { return "test-break-schedule"; }
  llvm::StringRef summary() const override { return "Breaks the schedule"; }
  absl::StatusOr<bool> run(Graph &graph) override {
    graph.moveBefore(&graph.ops().back(), &graph.ops().front());
    return true;
  }
};

/// Counts its runs; fails when told to.
class CountingPass : public Pass {
public:
  CountingPass(int &runs, bool fail) : runs_(runs), fail_(fail) {}
  llvm::StringRef argument() const override { return "test-count"; }
  llvm::StringRef summary() const override { return "Counts its runs"; }
  absl::StatusOr<bool> run(Graph &) override {
    ++runs_;
    if (fail_)
      return absl::InvalidArgumentError("test-count failed on purpose");
    return false;
  }

private:
  int &runs_;
  bool fail_;
};

TEST(PassManagerTest, VerifyEachNamesThePassThatBrokeTheGraph) {
  Graph g("p");
  buildSmallGraph(g);
  PassManager pm;
  pm.enableVerifier();
  pm.addPass(createCSEPass());
  pm.addPass(std::make_unique<BreakSchedulePass>());
  pm.addPass(createDCEPass());
  absl::StatusOr<PipelineResult> result = pm.run(g);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              StartsWith("after pass 'test-break-schedule': "));
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("is not defined before its use"));
  // The pipeline stopped: dce did not remove `d`.
  EXPECT_NE(g.lookupValue("d"), nullptr);
}

TEST(PassManagerTest, WithoutVerifyEachABrokenGraphGoesThrough) {
  Graph g("p");
  buildSmallGraph(g);
  PassManager pm;
  pm.addPass(std::make_unique<BreakSchedulePass>());
  EXPECT_TRUE(pm.run(g).ok());
  EXPECT_FALSE(verify(g).ok());
}

TEST(PassManagerTest, VerifyEachRejectsABrokenInputBeforeAnyPass) {
  Graph g("p");
  buildSmallGraph(g);
  BreakSchedulePass().run(g).IgnoreError();
  int runs = 0;
  PassManager pm;
  pm.enableVerifier();
  pm.addPass(std::make_unique<CountingPass>(runs, /*fail=*/false));
  absl::StatusOr<PipelineResult> result = pm.run(g);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              StartsWith("before the pipeline: "));
  EXPECT_EQ(runs, 0);
}

TEST(PassManagerTest, StopsAtTheFirstFailingPass) {
  Graph g("p");
  buildSmallGraph(g);
  int first = 0, second = 0;
  PassManager pm;
  pm.addPass(std::make_unique<CountingPass>(first, /*fail=*/true));
  pm.addPass(std::make_unique<CountingPass>(second, /*fail=*/false));
  absl::StatusOr<PipelineResult> result = pm.run(g);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "test-count failed on purpose");
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 0);
}

TEST(PassManagerTest, TimesEveryPassAndRecordsWhetherItChanged) {
  Graph g("p");
  buildSmallGraph(g);
  PassManager pm;
  pm.enableVerifier();
  ASSERT_TRUE(parsePassPipeline("verify,dce,cse,toposort", pm).ok());
  absl::StatusOr<PipelineResult> result = pm.run(g);
  ASSERT_TRUE(result.ok()) << result.status();
  // Only dce changes this graph (it removes `d`).
  EXPECT_TRUE(result->changed);
  ASSERT_EQ(result->timings.size(), 4u);
  std::vector<std::string> arguments;
  std::vector<bool> changed;
  for (const PassTiming &timing : result->timings) {
    arguments.push_back(timing.argument);
    changed.push_back(timing.changed);
    EXPECT_GE(timing.seconds, 0.0);
  }
  EXPECT_THAT(arguments, ElementsAre("verify", "dce", "cse", "toposort"));
  EXPECT_THAT(changed, ElementsAre(false, true, false, false));
}

} // namespace
} // namespace remat

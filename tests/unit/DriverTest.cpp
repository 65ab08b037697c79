//===- DriverTest.cpp - The remat tool run in-process -----------------------===//

#include "remat/Driver/Driver.h"
#include "remat/Pass/Planner.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace remat {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct RunResult {
  int code;
  std::string out;
  std::string err;
};

RunResult run(std::vector<std::string> args) {
  RunResult result;
  llvm::raw_string_ostream out(result.out);
  llvm::raw_string_ostream err(result.err);
  result.code = runRemat(args, out, err);
  out.flush();
  err.flush();
  return result;
}

/// A scratch directory removed at the end of the test.
class DriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("remat-driver", dir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  std::string path(llvm::StringRef name) const {
    llvm::SmallString<128> p(dir_);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  std::string write(llvm::StringRef name, llvm::StringRef text) const {
    std::string p = path(name);
    std::ofstream(p) << text.str();
    return p;
  }

  llvm::SmallString<128> dir_;
};

constexpr llvm::StringLiteral kGraph = R"(graph @g {
  input %x : f32[2,3]
  %y = relu(%x) : f32[2,3]
  output %y
}
)";

TEST_F(DriverTest, HelpExitsZeroAndWinsOverBadArguments) {
  RunResult help = run({"stats", "--frobnicate", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, StartsWith("usage: remat stats FILE"));
  EXPECT_EQ(help.err, "");
  EXPECT_THAT(run({"--help"}).out, HasSubstr("remat zoo MODEL"));
}

TEST_F(DriverTest, OptHelpListsEveryPlanner) {
  std::string help = run({"opt", "--help"}).out;
  size_t planners = help.find("\nplanners (");
  ASSERT_NE(planners, std::string::npos);
  // A planner registered later is listed without editing the help.
  for (const PlannerInfo *planner : PlannerRegistry::global().all())
    EXPECT_THAT(help.substr(planners), HasSubstr("\n  " + planner->name))
        << planner->name;
  for (const char *name : {"chain[=STAGES]", "ilp[=SECONDS]", "auto"})
    EXPECT_THAT(help.substr(planners), HasSubstr("\n  " + std::string(name)));
}

TEST_F(DriverTest, UserErrorsAreOneLineAndExitOne) {
  RunResult result = run({"stats", path("missing.remat"), "--frobnicate"});
  EXPECT_EQ(result.code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "remat: error: unknown option '--frobnicate' for 'remat "
            "stats' (see 'remat stats --help')\n");
}

TEST_F(DriverTest, LocatedErrorsPrintAsTheyAre) {
  std::string file = write("bad.remat", "graph @g {\n  %y = relu(%nope)\n}\n");
  RunResult result = run({"stats", file});
  EXPECT_EQ(result.code, 1);
  EXPECT_THAT(result.err, StartsWith(file + ":2:"));
  EXPECT_THAT(result.err, HasSubstr(": error: "));
  EXPECT_THAT(result.err, EndsWith("\n"));
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1);
}

TEST_F(DriverTest, OutputFileTakesAttachedOrSeparateValue) {
  std::string input = write("g.remat", kGraph);
  EXPECT_EQ(run({"stats", input, "-o", path("a.txt")}).code, 0);
  EXPECT_EQ(run({"stats", input, "-o" + path("b.txt")}).code, 0);
  EXPECT_EQ(run({"stats", "--output=" + path("c.txt"), input}).code, 0);
  EXPECT_EQ(run({"stats", "--output", path("d.txt"), input}).code, 0);
  for (const char *name : {"a.txt", "b.txt", "c.txt", "d.txt"}) {
    auto text = llvm::MemoryBuffer::getFile(path(name));
    ASSERT_TRUE(text) << name;
    EXPECT_THAT(std::string((*text)->getBuffer()),
                StartsWith("graph        @g\n"))
        << name;
  }
}

TEST_F(DriverTest, FailedCommandLeavesNoOutputFile) {
  std::string input = write("bad.remat", "graph @g {\n");
  EXPECT_EQ(run({"dot", input, "-o", path("out.dot")}).code, 1);
  EXPECT_FALSE(llvm::sys::fs::exists(path("out.dot")));
}

TEST_F(DriverTest, DoubleDashMakesTheRestPositional) {
  // A file named like an option is reachable after `--`.
  std::string input = write("-g.remat", kGraph);
  RunResult result = run({"stats", "--json", "--", input});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("\"ops\": 1,"));
}

TEST_F(DriverTest, ZooOptionsReachTheGenerator) {
  RunResult result =
      run({"zoo", "mlp", "--layers=1", "--width=8", "--batch=2", "--input=4"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("input %x : f32[2,4]"));
  EXPECT_THAT(result.out, HasSubstr("param %layer0.fc.w : f32[4,8]"));
  EXPECT_THAT(result.out, Not(HasSubstr("layer1")));
}

TEST_F(DriverTest, SplitInputKeepsLinesOfTheWholeFile) {
  std::string file =
      write("split.remat",
            std::string(kGraph) + "// -----\n" +
                "graph @h {\n  input %x : f32[2]\n  %y = nope(%x)\n}\n");
  RunResult result = run({"opt", file, "-p", "", "--split-input-file"});
  EXPECT_EQ(result.code, 1);
  // kGraph has 5 lines, the marker is line 6, so `%y = nope` is on line 9.
  EXPECT_THAT(result.err, StartsWith(file + ":9:"));
  EXPECT_THAT(result.err, HasSubstr("remat: error: 1 of 2 graphs in"));
  EXPECT_THAT(result.out, StartsWith("graph @g {"));
}

} // namespace
} // namespace remat

//===- TextFormatTest.cpp - Parsing and printing the text IR --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IO/TextFormat.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace remat {
namespace {

using ::testing::HasSubstr;

Type f32(std::initializer_list<int64_t> shape) {
  return Type(DType::F32, shape);
}

std::unique_ptr<Graph> parseOk(llvm::StringRef text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "t.remat");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

std::string parseError(llvm::StringRef text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "t.remat");
  EXPECT_FALSE(graph.ok()) << "parsed:\n" << text.str();
  return graph.ok() ? "" : std::string(graph.status().message());
}

/// A graph using every piece of syntax: declarations with clauses, multi-result
/// ops, attributes of every kind (negative ints, floats, strings, bools, int
/// lists), control dependencies, regions, devices, escaped and quoted names,
/// outputs and collections.
std::unique_ptr<Graph> buildEverything() {
  auto graph = std::make_unique<Graph>("mlp");
  Builder b(*graph);
  b.setDevice("cpu:0");
  Value *x = b.input("x", f32({4, 6}));
  b.setDevice("");
  Value *w = b.param("w", f32({6, 6}));
  Value *gamma = b.param("gamma", f32({6}));
  Value *beta = b.param("beta", f32({6}));
  Value *h = b.op("matmul", {x, w}, {}, "h");
  Value *a;
  {
    Builder::RegionScope block(b, "block1");
    Builder::RegionScope mlp(b, "mlp");
    a = b.op("relu", {h}, {}, "a");
  }
  b.setDevice("gpu:0");
  Value *d = b.op("dropout", {a}, {{"rate", 0.1}, {"seed", int64_t(-7)}}, "d");
  b.setDevice("");
  d->producer()->addControlDep(h->producer());
  Op *bn = b.create("batch_norm", {x, gamma, beta}, {{"eps", 1e-05}},
                    {"y0", "m", "v"});
  b.create("split", {a}, {{"axis", int64_t(-1)}, {"sizes", {2, 4}}},
           {"p", "q"});
  Value *s = b.op("reduce_sum", {d}, {{"axes", {}}, {"keepdims", true}}, "s");
  Value *c = b.op("constant", {},
                  {{"value", 0.5}, {"shape", {}}, {"dtype", "f32"}}, "c");
  Value *e = b.op("add", {s, c}, {}, "two words");
  e->producer()->setRegion("a\"b\\c\nd");
  Value *loss = b.op("reduce_mean", {e}, {}, "loss");
  EXPECT_TRUE(b.status().ok()) << b.status();
  graph->addOutput(loss);
  graph->addOutput(bn->result(1));
  graph->addToCollection("checkpoints", a);
  graph->addToCollection("checkpoints", h);
  graph->addToCollection("my ckpt", bn->result(0));
  return graph;
}

// Written by hand from the Builder calls above: matmul [4,6]x[6,6] gives
// [4,6]; batch_norm over x [N=4, C=6] gives y [4,6] and per-channel mean and
// variance [6]; split of [4,6] along the last axis into sizes 2 and 4 gives
// [4,2] and [4,4]; reduce_sum over all axes keeping dims gives [1,1]; adding a
// scalar constant broadcasts to [1,1]; reduce_mean over all axes gives [].
constexpr llvm::StringLiteral kEverything = R"(graph @mlp {
  input %x : f32[4,6] device "cpu:0"
  param %w : f32[6,6]
  param %gamma : f32[6]
  param %beta : f32[6]
  %h = matmul(%x, %w) : f32[4,6]
  %a = relu(%h) : f32[4,6] region "block1/mlp"
  %d = dropout(%a) {rate = 0.1, seed = -7} : f32[4,6] after(%h) device "gpu:0"
  %y0, %m, %v = batch_norm(%x, %gamma, %beta) {eps = 1e-05} : f32[4,6], f32[6], f32[6]
  %p, %q = split(%a) {axis = -1, sizes = [2, 4]} : f32[4,2], f32[4,4]
  %s = reduce_sum(%d) {axes = [], keepdims = true} : f32[1,1]
  %c = constant() {value = 0.5, shape = [], dtype = "f32"} : f32[]
  %"two words" = add(%s, %c) : f32[1,1] region "a\"b\\c\nd"
  %loss = reduce_mean(%"two words") : f32[]
  output %loss
  output %m
  collection checkpoints = %a, %h
  collection "my ckpt" = %y0
}
)";

TEST(TextFormatTest, PrintsBuiltGraphInCanonicalForm) {
  std::unique_ptr<Graph> graph = buildEverything();
  EXPECT_EQ(printGraph(*graph), kEverything.str());
}

TEST(TextFormatTest, ParsePrintIsIdentityOnCanonicalText) {
  std::unique_ptr<Graph> graph = parseOk(kEverything);
  ASSERT_TRUE(graph);
  EXPECT_EQ(printGraph(*graph), kEverything.str());
}

TEST(TextFormatTest, ParsedGraphHoldsWhatTheTextSays) {
  std::unique_ptr<Graph> graph = parseOk(kEverything);
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->name(), "mlp");
  EXPECT_EQ(graph->sourceName(), "t.remat");
  EXPECT_EQ(graph->numOps(), 13u);
  ASSERT_EQ(graph->inputs().size(), 1u);
  EXPECT_EQ(graph->inputs()[0]->producer()->device(), "cpu:0");
  EXPECT_EQ(graph->params().size(), 3u);

  Value *d = graph->lookupValue("d");
  ASSERT_TRUE(d);
  Op *dropout = d->producer();
  EXPECT_EQ(dropout->findAttr("rate")->asFloat(), 0.1);
  EXPECT_EQ(dropout->findAttr("seed")->asInt(), -7);
  ASSERT_EQ(dropout->controlDeps().size(), 1u);
  EXPECT_EQ(dropout->controlDeps()[0], graph->lookupValue("h")->producer());
  EXPECT_EQ(dropout->device(), "gpu:0");
  // `%d = ...` is line 8 of the text, its first token in column 3.
  EXPECT_EQ(dropout->loc().line, 8u);
  EXPECT_EQ(dropout->loc().column, 3u);

  Op *bn = graph->lookupValue("m")->producer();
  EXPECT_EQ(bn->numResults(), 3u);
  EXPECT_EQ(bn->findAttr("eps")->asFloat(), 1e-05);
  EXPECT_EQ(graph->lookupValue("q")->type(), f32({4, 4}));
  EXPECT_EQ(graph->lookupValue("s")->producer()->findAttr("keepdims")->asBool(),
            true);
  EXPECT_EQ(graph->lookupValue("two words")->producer()->region(),
            "a\"b\\c\nd");
  EXPECT_EQ(graph->lookupValue("a")->producer()->region(), "block1/mlp");

  ASSERT_EQ(graph->outputs().size(), 2u);
  EXPECT_EQ(graph->outputs()[0]->name(), "loss");
  EXPECT_EQ(graph->outputs()[1], bn->result(1));
  ASSERT_EQ(graph->collection("checkpoints").size(), 2u);
  EXPECT_EQ(graph->collection("checkpoints")[1]->name(), "h");
  ASSERT_EQ(graph->collection("my ckpt").size(), 1u);
  EXPECT_EQ(graph->collection("my ckpt")[0], bn->result(0));
}

TEST(TextFormatTest, OmittedResultTypesAreInferred) {
  std::unique_ptr<Graph> graph = parseOk(R"(
// Comments, blank lines and CRLF line ends are fine.
graph @g {
  input %x : f32[8,3]

  param %w : f32[3,5]   // trailing comment
  %h = matmul(%x, %w)
  %t = transpose(%h) {perm = [1, 0]}
  %l, %r = split(%t) {axis = 0, sizes = [1, 4]}
  %sum = reduce_sum(%r) {axes = [-1]}
  output %sum
}
)");
  ASSERT_TRUE(graph);
  // [8,3] x [3,5] = [8,5]; transposed [5,8]; split rows 1 + 4 gives [1,8] and
  // [4,8]; summing the last axis of [4,8] gives [4].
  EXPECT_EQ(graph->lookupValue("h")->type(), f32({8, 5}));
  EXPECT_EQ(graph->lookupValue("t")->type(), f32({5, 8}));
  EXPECT_EQ(graph->lookupValue("l")->type(), f32({1, 8}));
  EXPECT_EQ(graph->lookupValue("r")->type(), f32({4, 8}));
  EXPECT_EQ(graph->lookupValue("sum")->type(), f32({4}));
  EXPECT_EQ(printGraph(*graph), R"(graph @g {
  input %x : f32[8,3]
  param %w : f32[3,5]
  %h = matmul(%x, %w) : f32[8,5]
  %t = transpose(%h) {perm = [1, 0]} : f32[5,8]
  %l, %r = split(%t) {axis = 0, sizes = [1, 4]} : f32[1,8], f32[4,8]
  %sum = reduce_sum(%r) {axes = [-1]} : f32[4]
  output %sum
}
)");
}

TEST(TextFormatTest, CarriageReturnsAreBlanks) {
  std::unique_ptr<Graph> graph =
      parseOk("graph @g {\r\n  input %x : f32[2]\r\n  %y = neg(%x)\r\n}\r\n");
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->numOps(), 2u);
}

TEST(TextFormatTest, AttributeLiteralsOfEveryKind) {
  std::unique_ptr<Graph> graph = parseOk(R"(graph @g {
  input %x : f32[2,3]
  %a = constant() {value = 1.0e-05, shape = [2, 3], dtype = "f\x33\x32"}
  %b = constant() {value = -inf}
  %c = constant() {value = nan, shape = []}
  %d = constant() {value = 3}
  %e = dropout(%x) {rate = 5.e-1, seed = -9223372036854775808}
  %f = reduce_sum(%x) {keepdims = false, axes = [-1, 0]}
  %g = reduce_max(%x) {axes = [], cost = 0}
  %h = constant() {value = inf, "dtype" = "f64"}
}
)");
  ASSERT_TRUE(graph);
  auto attr = [&](const char *value, const char *name) {
    return *graph->lookupValue(value)->producer()->findAttr(name);
  };
  EXPECT_EQ(attr("a", "value"), Attribute(1e-05));
  EXPECT_EQ(attr("a", "dtype"), Attribute("f32"));
  EXPECT_EQ(attr("a", "shape"), Attribute({2, 3}));
  EXPECT_EQ(attr("b", "value"),
            Attribute(-std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(std::isnan(attr("c", "value").asFloat()));
  EXPECT_EQ(attr("c", "shape"), Attribute(std::vector<int64_t>{}));
  EXPECT_TRUE(attr("d", "value").is(AttrKind::Int));
  EXPECT_EQ(attr("e", "rate"), Attribute(0.5));
  EXPECT_EQ(attr("e", "seed"), Attribute(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(attr("f", "keepdims"), Attribute(false));
  EXPECT_EQ(attr("f", "axes"), Attribute({-1, 0}));
  EXPECT_EQ(attr("g", "cost"), Attribute(int64_t(0)));
  EXPECT_EQ(graph->lookupValue("h")->type(), Type::scalar(DType::F64));
  // Non-canonical spellings print canonically; attributes keep their order.
  EXPECT_EQ(printGraph(*graph), R"(graph @g {
  input %x : f32[2,3]
  %a = constant() {value = 1e-05, shape = [2, 3], dtype = "f32"} : f32[2,3]
  %b = constant() {value = -inf} : f32[]
  %c = constant() {value = nan, shape = []} : f32[]
  %d = constant() {value = 3} : f32[]
  %e = dropout(%x) {rate = 0.5, seed = -9223372036854775808} : f32[2,3]
  %f = reduce_sum(%x) {keepdims = false, axes = [-1, 0]} : f32[]
  %g = reduce_max(%x) {axes = [], cost = 0} : f32[]
  %h = constant() {value = inf, dtype = "f64"} : f64[]
}
)");
}

TEST(TextFormatTest, QuotedNamesRoundTrip) {
  Graph graph("my graph");
  Builder b(graph);
  Value *x = b.input("a//b", f32({2}));
  Value *y = b.op("neg", {x}, {}, "tab\there");
  Value *z = b.op("neg", {y}, {}, "x.1/$-_");
  graph.addOutput(z);
  graph.addToCollection("with-dash", y);
  std::string text = printGraph(graph);
  EXPECT_EQ(text, R"(graph @"my graph" {
  input %"a//b" : f32[2]
  %"tab\x09here" = neg(%"a//b") : f32[2]
  %x.1/$-_ = neg(%"tab\x09here") : f32[2]
  output %x.1/$-_
  collection "with-dash" = %"tab\x09here"
}
)");
  std::unique_ptr<Graph> parsed = parseOk(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->name(), "my graph");
  EXPECT_TRUE(parsed->lookupValue("tab\there"));
  EXPECT_EQ(printGraph(*parsed), text);
}

TEST(TextFormatTest, PrintParsePrintIsIdentity) {
  std::unique_ptr<Graph> built = buildEverything();
  // A long chain too, with control dependencies that skip back.
  Builder b(*built);
  Value *prev = built->lookupValue("x");
  for (int i = 0; i < 500; ++i) {
    Value *next = b.op(i % 2 ? "neg" : "relu", {prev});
    if (i % 7 == 0)
      next->producer()->addControlDep(prev->producer());
    prev = next;
  }
  ASSERT_TRUE(b.status().ok()) << b.status();
  std::string once = printGraph(*built);
  std::unique_ptr<Graph> parsed = parseOk(once);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(printGraph(*parsed), once);
  EXPECT_EQ(parsed->numOps(), built->numOps());
}

TEST(TextFormatTest, StreamAndStringPrintersAgree) {
  std::unique_ptr<Graph> graph = buildEverything();
  std::string streamed;
  llvm::raw_string_ostream os(streamed);
  printGraph(*graph, os);
  os.flush();
  EXPECT_EQ(streamed, printGraph(*graph));
}

// Past 32,768 ops the printer formats batches on two threads: the lines
// must still come in schedule order, across every batch boundary and the
// short last batch.
TEST(TextFormatTest, LargeGraphPrintsItsOpsInScheduleOrder) {
  Graph graph("chain");
  Builder b(graph);
  Value *v = b.input("x", f32({2}));
  for (int i = 0; i < 3 * 16384 + 123; ++i)
    v = b.op(i % 2 ? "neg" : "relu", {v});
  graph.addOutput(v);
  ASSERT_TRUE(b.status().ok()) << b.status();
  std::string text = printGraph(graph);
  llvm::SmallVector<llvm::StringRef, 0> lines;
  llvm::StringRef(text).split(lines, '\n');
  // The header, one line per op, the output, the closing brace, and the
  // empty piece after the last newline.
  ASSERT_EQ(lines.size(), graph.numOps() + 4);
  size_t line = 1;
  for (const Op &op : graph.ops()) {
    std::string name = "%" + op.result()->name().str();
    std::string start = op.hasFlag(OpFlagLeaf)
                            ? "  " + op.kind().str() + " " + name + " : "
                            : "  " + name + " = " + op.kind().str() + "(";
    ASSERT_TRUE(lines[line].startswith(start))
        << "line " << line << ": " << lines[line].str();
    ++line;
  }
  std::unique_ptr<Graph> parsed = parseOk(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(printGraph(*parsed), text);
}

TEST(TextFormatTest, ErrorsPointAtTheOffendingToken) {
  // Column numbers count bytes from 1; the op lines start at column 3.
  EXPECT_EQ(
      parseError("graph @g {\n  input %x : f32[2]\n  %y = relux(%x)\n}\n"),
      "t.remat:3:8: error: unknown op 'relux'");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[2]\n"
                       "  %y = relu(%x, %x)\n}\n"),
            "t.remat:3:8: error: 'relu' takes 1 operand, got 2");
  // The type starts at byte 18 of `  %y = neg(%x) : f32[3]`.
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[2]\n"
                       "  %y = neg(%x) : f32[3]\n}\n"),
            "t.remat:3:18: error: '%y' is declared f32[3] but shape inference "
            "gives f32[2]");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[2]\n  %y = neg(%z)\n}\n"),
            "t.remat:3:12: error: use of undefined value '%z'");
  EXPECT_EQ(
      parseError("graph @g {\n  input %x : f32[2]\n  input %x : f32[2]\n}\n"),
      "t.remat:3:9: error: redefinition of value '%x', first defined at "
      "line 2");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[2]\n"
                       "  %y = dropout(%x) {rate = 0.5}\n}\n"),
            "t.remat:3:8: error: 'dropout' needs attribute 'seed'");
  EXPECT_EQ(parseError("graph @g {\n  input %x : f32[2]\n"),
            "t.remat:3:1: error: expected an op, 'input', 'param', 'output', "
            "'collection' or '}', got end of file");
  const char nul[] = "graph @g {\n  input %x\0";
  EXPECT_EQ(parseError(llvm::StringRef(nul, sizeof(nul) - 1)),
            "t.remat:2:11: error: unexpected byte 0x00");
  EXPECT_EQ(parseError(""),
            "t.remat:1:1: error: expected 'graph', got end of file");
}

TEST(TextFormatTest, EmptySourceNameReadsAsInput) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph("graph", "");
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(
      std::string(graph.status().message()),
      "<input>:1:6: error: expected a graph name '@name', got end of file");
}

TEST(TextFormatTest, ParsesFilesAndNamesThemInErrors) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(
      llvm::sys::fs::createTemporaryFile("text-format", "remat", path));
  llvm::FileRemover remover(path);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << "graph @file {\n  input %x : f32[2]\n  output %x\n}\n";
  }
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraphFile(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ((*graph)->sourceName(), path.str());
  EXPECT_EQ((*graph)->outputs().size(), 1u);

  absl::StatusOr<std::unique_ptr<Graph>> missing =
      parseGraphFile("/nonexistent/graph.remat");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("/nonexistent/graph.remat: error: cannot read file"));
}

} // namespace
} // namespace remat

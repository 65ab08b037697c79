//===- TestPrintAnalyses.cpp - Printing passes for analysis tests -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `test-print-*` passes print an analysis of the graph to stdout so that lit
/// tests can FileCheck it, as MLIR's test passes do. None changes the graph;
/// each requires a verified graph and forbids nothing after it.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Bottlenecks.h"
#include "remat/Analysis/Memory.h"
#include "remat/Analysis/TopoSort.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"
#include "remat/Support/Status.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace remat {
namespace {

/// Prints `levelOrder`: one line `level N: <op>` per op, levels ascending.
class TestPrintTopoSortLevelsPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "test-print-toposort-levels";
  static constexpr llvm::StringLiteral kSummary =
      "Prints the level of every op in the level order";

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    REMAT_ASSIGN_OR_RETURN(auto levels, levelOrder(graph));
    llvm::raw_ostream &os = llvm::outs();
    os << fmt::format("toposort levels of @{}: {}\n", graph.name().str(),
                      levels.size());
    for (size_t level = 0; level < levels.size(); ++level)
      for (const Op *op : levels[level])
        os << fmt::format("level {}: {}\n", level, op->describe());
    os.flush();
    return false;
  }
};

/// Prints `simulateMemory`: peak bytes, its step and split, and the values
/// live at the peak.
class TestPrintLivenessPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "test-print-liveness";
  static constexpr llvm::StringLiteral kSummary =
      "Prints the memory peak of the schedule and the values live at it";

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    MemoryProfile profile = simulateMemory(graph);
    llvm::raw_ostream &os = llvm::outs();
    os << fmt::format("liveness of @{}\n", graph.name().str());
    os << fmt::format("peak bytes: {}\n", profile.peakBytes);
    if (profile.peakStep < 0) {
      os << "peak step: none\n";
    } else {
      const Op *peakOp = nullptr;
      int64_t step = 0;
      for (const Op &op : graph.ops())
        if (step++ == profile.peakStep) {
          peakOp = &op;
          break;
        }
      os << fmt::format("peak step: {} ({})\n", profile.peakStep,
                        peakOp ? peakOp->describe() : std::string("?"));
    }
    const MemoryBreakdown &split = profile.peakBreakdown;
    os << fmt::format("peak split: params {}, param-grads {}, inputs {}, "
                      "activations {}\n",
                      split.params, split.paramGrads, split.inputs,
                      split.activations);
    std::vector<std::string> names;
    for (const Value *value : profile.liveAtPeak)
      names.push_back(fmt::format("%{}", value->name().str()));
    os << fmt::format("live at peak: {}\n", fmt::join(names, ", "));
    os.flush();
    return false;
  }
};

/// Prints `findBottlenecks` toward the loss, one `bottleneck: %v` per line.
class TestPrintBottlenecksPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "test-print-bottlenecks";
  static constexpr llvm::StringLiteral kSummary =
      "Prints the values every path from the sources to the loss runs through";

  explicit TestPrintBottlenecksPass(BottleneckSourceKind sources)
      : sources_(sources) {}

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    BottleneckOptions options;
    options.sources = sources_;
    std::vector<Value *> bottlenecks = findBottlenecks(graph, options);
    llvm::raw_ostream &os = llvm::outs();
    os << fmt::format("bottlenecks of @{}: {}\n", graph.name().str(),
                      bottlenecks.size());
    for (const Value *value : bottlenecks)
      os << fmt::format("bottleneck: %{}\n", value->name().str());
    os.flush();
    return false;
  }

private:
  BottleneckSourceKind sources_;
};

/// A factory for a pass without options.
template <typename PassT> PassFactory factoryOf() {
  return [](const PassOptions &) -> absl::StatusOr<std::unique_ptr<Pass>> {
    return std::make_unique<PassT>();
  };
}

} // namespace

void registerTestPrintAnalysisPasses(PassRegistry &registry) {
  registry.add({.argument = TestPrintTopoSortLevelsPass::kArgument.str(),
                .summary = TestPrintTopoSortLevelsPass::kSummary.str(),
                .factory = factoryOf<TestPrintTopoSortLevelsPass>()});
  registry.add({.argument = TestPrintLivenessPass::kArgument.str(),
                .summary = TestPrintLivenessPass::kSummary.str(),
                .factory = factoryOf<TestPrintLivenessPass>()});
  registry.add(
      {.argument = TestPrintBottlenecksPass::kArgument.str(),
       .summary = TestPrintBottlenecksPass::kSummary.str(),
       .options = {{.name = "sources",
                    .help = "Where paths start: leaf-values or entry-ops",
                    .kind = PassOptionKind::String,
                    .defaultValue = "leaf-values"}},
       .factory = [](const PassOptions &text)
           -> absl::StatusOr<std::unique_ptr<Pass>> {
         std::string sources = text.getString("sources", "leaf-values");
         if (sources == "leaf-values")
           return std::make_unique<TestPrintBottlenecksPass>(
               BottleneckSourceKind::LeafValues);
         if (sources == "entry-ops")
           return std::make_unique<TestPrintBottlenecksPass>(
               BottleneckSourceKind::EntryOps);
         return invalidArgument("option 'sources' of pass '{}' expects "
                                "leaf-values or entry-ops, got '{}'",
                                TestPrintBottlenecksPass::kArgument.str(),
                                sources);
       }});
}

} // namespace remat

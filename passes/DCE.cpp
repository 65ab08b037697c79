//===- DCE.cpp - Dead code elimination --------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Graph.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/BitVector.h"

#include <vector>

namespace remat {
namespace {

/// Removes every op that nothing live depends on. The roots are the producers
/// of graph outputs and of collection members (and, with
/// `keep-unused-leaves`, every `input` and `param` declaration); an op is live
/// when a live op reads one of its results or names it as a control
/// dependency. One backward worklist walk and one erase sweep: linear in ops +
/// edges.
///
/// Requires: a verified graph (a topological schedule: dead ops are erased in
/// reverse schedule order, users first). Guarantees: a verified graph whose
/// live ops keep their relative order; with `keep-unused-leaves` the graph's
/// inputs and params are unchanged. Nothing is forbidden after it.
class DCEPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "dce";
  static constexpr llvm::StringLiteral kSummary =
      "Removes ops that no output or collection member depends on";

  explicit DCEPass(DCEPassOptions options) : options_(options) {}

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    llvm::BitVector live(graph.opIdBound());
    std::vector<Op *> worklist;
    auto markLive = [&](Op *op) {
      if (!live.test(op->id())) {
        live.set(op->id());
        worklist.push_back(op);
      }
    };

    for (Value *output : graph.outputs())
      markLive(output->producer());
    for (const Collection &collection : graph.collections())
      for (Value *member : collection.values)
        markLive(member->producer());
    if (options_.keepUnusedLeaves)
      for (Op &op : graph.ops())
        if (op.hasFlag(OpFlagLeaf))
          markLive(&op);

    while (!worklist.empty()) {
      Op *op = worklist.back();
      worklist.pop_back();
      for (Value *operand : op->operands())
        markLive(operand->producer());
      for (Op *dep : op->controlDeps())
        markLive(dep);
    }

    std::vector<Op *> dead;
    for (Op &op : graph.ops())
      if (!live.test(op.id()))
        dead.push_back(&op);
    // Users come later in a topological schedule, so erasing backwards never
    // erases an op that a remaining op still reads or depends on.
    for (auto it = dead.rbegin(), e = dead.rend(); it != e; ++it)
      graph.erase(*it);
    return !dead.empty();
  }

private:
  DCEPassOptions options_;
};

} // namespace

std::unique_ptr<Pass> createDCEPass(DCEPassOptions options) {
  return std::make_unique<DCEPass>(options);
}

void registerDCEPass(PassRegistry &registry) {
  DCEPassOptions defaults;
  registry.add(
      {.argument = DCEPass::kArgument.str(),
       .summary = DCEPass::kSummary.str(),
       .options = {{.name = "keep-unused-leaves",
                    .help = "Keep input and param declarations nothing reads",
                    .kind = PassOptionKind::Bool,
                    .defaultValue = defaults.keepUnusedLeaves ? "true" : "false"}},
       .factory = [](const PassOptions &text)
           -> absl::StatusOr<std::unique_ptr<Pass>> {
         DCEPassOptions options;
         REMAT_ASSIGN_OR_RETURN(
             options.keepUnusedLeaves,
             text.getBool("keep-unused-leaves", options.keepUnusedLeaves));
         return createDCEPass(options);
       }});
}

} // namespace remat

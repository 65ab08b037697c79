//===- Verify.cpp - The verifier as a pass ----------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Verifier.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"

namespace remat {
namespace {

/// Runs the verifier (IR/Verifier.h) and fails with its first message.
///
/// Requires: nothing. Guarantees: the graph is unchanged; when it succeeds, the
/// graph verifies. Nothing is forbidden after it.
class VerifyPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "verify";
  static constexpr llvm::StringLiteral kSummary =
      "Checks the graph's structure, types and schedule";

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }
  absl::StatusOr<bool> run(Graph &graph) override {
    absl::Status status = verify(graph);
    if (!status.ok())
      return status;
    return false;
  }
};

} // namespace

std::unique_ptr<Pass> createVerifyPass() {
  return std::make_unique<VerifyPass>();
}

void registerVerifyPass(PassRegistry &registry) {
  registry.add({.argument = VerifyPass::kArgument.str(),
                .summary = VerifyPass::kSummary.str(),
                .factory = [](const PassOptions &)
                    -> absl::StatusOr<std::unique_ptr<Pass>> {
                  return createVerifyPass();
                }});
}

} // namespace remat

//===- PassManager.h - Running a pipeline of passes --------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs passes in order, optionally verifying after each, and times each one.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_PASSMANAGER_H
#define REMAT_PASS_PASSMANAGER_H

#include "remat/Pass/Pass.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace remat {

/// What one pass did in one run.
struct PassTiming {
  std::string argument;
  double seconds = 0;
  bool changed = false;
};

/// The outcome of `PassManager::run`.
struct PipelineResult {
  bool changed = false;
  std::vector<PassTiming> timings;
};

class PassManager {
public:
  void addPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  /// Verifies the graph after every pass; a failure names the pass.
  void enableVerifier(bool enabled = true) { verifyEach_ = enabled; }
  size_t size() const { return passes_.size(); }

  /// Runs every pass in order, stopping at the first error.
  absl::StatusOr<PipelineResult> run(Graph &graph);

private:
  std::vector<std::unique_ptr<Pass>> passes_;
  bool verifyEach_ = false;
};

/// Parses a textual pipeline such as `dce,cse{...},toposort` (options as
/// `pass{key=value,key2=value2}`) and appends its passes to `pm`. Errors name
/// the column of the offending text.
absl::Status parsePassPipeline(llvm::StringRef pipeline, PassManager &pm);

} // namespace remat

#endif // REMAT_PASS_PASSMANAGER_H

//===- Pass.h - The pass interface -------------------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A pass is a small class with a kebab-case argument (`dce`), a one-line
/// summary, options, and one entry point that says whether it changed the
/// graph. Passes are created through factories (`createDCEPass()`, see
/// Passes.h) and by name through the PassRegistry.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_PASS_H
#define REMAT_PASS_PASS_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

namespace remat {

class Graph;

class Pass {
public:
  virtual ~Pass() = default;

  /// The pipeline name, e.g. "dce".
  virtual llvm::StringRef argument() const = 0;
  /// One line for `--help` and docs.
  virtual llvm::StringRef summary() const = 0;
  /// Runs on `graph`; true if it changed the graph. A pass leaves a graph that
  /// verifies whenever it got one that verifies.
  virtual absl::StatusOr<bool> run(Graph &graph) = 0;
};

} // namespace remat

#endif // REMAT_PASS_PASS_H

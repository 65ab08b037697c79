//===- main.cpp - The remat command-line tool -------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A thin main over the Driver library (docs/cli.md).
///
//===----------------------------------------------------------------------===//

#include "remat/Driver/Driver.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

/// Keeps memory the command frees for its next pass instead of handing it back
/// to the kernel. Passes over a million-op graph allocate and free per-op
/// arrays of tens of megabytes each; under glibc's defaults each one is a fresh
/// `mmap` (or a trimmed heap top, or a second thread's arena) whose every page
/// faults again, a quarter of a large `opt`'s time (docs/benchmarks.md). The
/// library leaves this to its host: the policy belongs to the process.
static void keepFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int main(int argc, char **argv) {
  keepFreedMemory();
  int code = remat::runRematMain(argc, argv, llvm::outs(), llvm::errs());
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    llvm::outs().clear_error();
    llvm::errs() << "remat: error: cannot write to standard output\n";
    return 1;
  }
  return code;
}

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

int main(int argc, char **argv) {
  int code = remat::runRematMain(argc, argv, llvm::outs(), llvm::errs());
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    llvm::outs().clear_error();
    llvm::errs() << "remat: error: cannot write to standard output\n";
    return 1;
  }
  return code;
}

//===- Driver.h - The remat command-line tool as a library -------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The whole `remat` tool behind one call, so that tools/remat/main.cpp stays
/// a few lines and tests can run the tool in-process. docs/cli.md describes
/// the subcommands.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_DRIVER_DRIVER_H
#define REMAT_DRIVER_DRIVER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace remat {

/// Runs `remat` on `argv` (`argv[0]` is the program name). Results go to `out`
/// unless a command writes to its `-o` file. Returns the exit code: 0 on
/// success, 1 on a user error, reported as one line on `err`, either
/// `file:line:col: error: ...` or `remat: error: ...`.
int runRematMain(int argc, char **argv, llvm::raw_ostream &out,
                 llvm::raw_ostream &err);

/// `runRematMain` over the words after the program name. `processExitsAfter`
/// lets commands leave their graphs to the operating system instead of
/// freeing them; in-process callers keep the default.
int runRemat(llvm::ArrayRef<std::string> args, llvm::raw_ostream &out,
             llvm::raw_ostream &err, bool processExitsAfter = false);

} // namespace remat

#endif // REMAT_DRIVER_DRIVER_H

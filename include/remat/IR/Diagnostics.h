//===- Diagnostics.h - Error messages with locations -------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every user-facing error reads `file:line:col: error: message`. These helpers
/// build such messages for text positions and for ops.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_DIAGNOSTICS_H
#define REMAT_IR_DIAGNOSTICS_H

#include "remat/IR/Op.h"

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace remat {

/// `file:line:col: error: message`; the file defaults to `<input>`.
std::string formatError(llvm::StringRef file, SourceLoc loc,
                        llvm::StringRef message);

/// An InvalidArgument status about `op`: located when the op came from text,
/// and always naming it, e.g.
/// `model.rmt:12:3: error: '%h = matmul': contracts 784 with 512`.
absl::Status opError(const Op &op, llvm::StringRef message);

/// `file:line:col` of an op read from text, else the op itself in quotes.
std::string opLocation(const Op &op);

} // namespace remat

#endif // REMAT_IR_DIAGNOSTICS_H

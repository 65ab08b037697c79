//===- Units.h - Byte sizes with units ---------------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Memory sizes as users write them (`512MiB`, `2GB`, `40%` of a baseline) and
/// as reports print them (`1.50 GiB`).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SUPPORT_UNITS_H
#define REMAT_SUPPORT_UNITS_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace remat {

/// Parses a byte size: a plain count (`1048576`), a number with a decimal
/// (`KB`, `MB`, `GB`, `TB`: powers of 1000) or binary (`KiB`, `MiB`, `GiB`,
/// `TiB`: powers of 1024) unit or `B`, units case-insensitive and optionally
/// after spaces (`1.5 GiB`), or a percentage of `baseline` bytes (`40%`).
/// Fractional results round down to whole bytes. Negative sizes, sizes over
/// int64, and percentages without a baseline are errors quoting the text.
absl::StatusOr<int64_t> parseByteSize(llvm::StringRef text,
                                      std::optional<int64_t> baseline = {});

/// Human text for `bytes`: `512 B` below 1 KiB, else two decimals in the
/// largest binary unit that keeps the figure at least 1 (`1.50 GiB`).
std::string formatBytes(int64_t bytes);

/// FLOPs with three significant digits in the largest decimal unit that
/// keeps the figure at least 1 (`1.25 GFLOP`, `840 kFLOP`).
std::string formatFlops(int64_t flops);

/// Nanoseconds with three significant digits in the largest unit that keeps
/// the figure at least 1 (`840 ns`, `1.25 ms`, `3.1 s`).
std::string formatNanoseconds(int64_t nanoseconds);

} // namespace remat

#endif // REMAT_SUPPORT_UNITS_H

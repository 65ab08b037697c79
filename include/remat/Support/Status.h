//===- Status.h - Status propagation macros ----------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The project's own early-return macros over absl::Status and absl::StatusOr;
/// Debian's Abseil (20220623) ships none.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SUPPORT_STATUS_H
#define REMAT_SUPPORT_STATUS_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <fmt/format.h>

#define REMAT_STATUS_CONCAT_INNER(a, b) a##b
#define REMAT_STATUS_CONCAT(a, b) REMAT_STATUS_CONCAT_INNER(a, b)

/// Returns from the enclosing function if `expr` yields a non-OK absl::Status.
#define REMAT_RETURN_IF_ERROR(expr)                                            \
  do {                                                                         \
    ::absl::Status remat_status_ = (expr);                                     \
    if (!remat_status_.ok())                                                   \
      return remat_status_;                                                    \
  } while (false)

/// Evaluates `rexpr` (an absl::StatusOr); on error returns its status, otherwise
/// moves the value into `lhs`, which may be a declaration (`auto x`). `lhs` may
/// not contain a top-level comma: use `auto` or an alias for template types.
#define REMAT_ASSIGN_OR_RETURN(lhs, rexpr)                                     \
  REMAT_ASSIGN_OR_RETURN_IMPL(REMAT_STATUS_CONCAT(remat_statusor_, __LINE__),  \
                              lhs, rexpr)

#define REMAT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr)                           \
  auto tmp = (rexpr);                                                          \
  if (!tmp.ok())                                                               \
    return std::move(tmp).status();                                            \
  lhs = std::move(tmp).value()

namespace remat {

/// Builds an InvalidArgument status from a fmt format string; the common case for
/// errors that user input can reach.
template <typename... Args>
absl::Status invalidArgument(fmt::format_string<Args...> format,
                             Args &&...args) {
  return absl::InvalidArgumentError(
      fmt::format(format, std::forward<Args>(args)...));
}

} // namespace remat

#endif // REMAT_SUPPORT_STATUS_H

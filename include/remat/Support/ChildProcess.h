//===- ChildProcess.h - A function run in a forked process ------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs a function in a forked child process, so that a library that aborts
/// the process on an internal assertion, or runs far past its own time
/// limit, takes down only the child. The child sends messages back through
/// a pipe; the parent hands each one over as it arrives and kills the child
/// at a deadline.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SUPPORT_CHILDPROCESS_H
#define REMAT_SUPPORT_CHILDPROCESS_H

#include "absl/status/statusor.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace remat {

/// The child's end of the pipe to its parent.
class ChildChannel {
public:
  explicit ChildChannel(int fd) : fd_(fd) {}

  /// Sends one message, whole; false when the parent no longer reads.
  bool send(llvm::StringRef message);

private:
  int fd_;
};

/// How a child process ended.
struct ChildExit {
  enum class Kind { Exited, Signaled, KilledAtDeadline };
  Kind kind = Kind::Exited;
  /// The exit status (Exited) or the signal's number (Signaled).
  int code = 0;

  bool succeeded() const { return kind == Kind::Exited && code == 0; }
  /// "exit status 3", "signal 6 (Aborted)", "killed at its deadline".
  std::string describe() const;
};

/// The exit status of a child whose function threw.
constexpr int kChildThrewStatus = 70;

/// Forks; the child runs `body` and exits with its result (70 if it
/// throws) through `_exit`: no destructors, exit handlers or stdio flushes
/// of the parent's state run twice. Every message the child sends reaches
/// `onMessage` in the parent, in order, before this returns; one cut short
/// by the child's death is dropped. With a deadline, a child still running
/// `deadlineSeconds` after the fork is killed (SIGKILL), and so is a child
/// whose parent dies. The parent's stdio is flushed first, so that nothing
/// it buffered is written twice. Errors: the pipe or the fork failing.
absl::StatusOr<ChildExit>
runInChild(llvm::function_ref<int(ChildChannel &)> body,
           llvm::function_ref<void(llvm::StringRef)> onMessage,
           std::optional<double> deadlineSeconds = std::nullopt);

} // namespace remat

#endif // REMAT_SUPPORT_CHILDPROCESS_H

//===- ChildProcess.cpp - A function run in a forked process --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Messages travel as a native 8-byte length and the bytes. The parent
/// polls the pipe until the child closes it (by exiting) or the deadline
/// passes, then reaps the child.
///
//===----------------------------------------------------------------------===//

#include "remat/Support/ChildProcess.h"

#include "remat/Support/Stopwatch.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace remat {
namespace {

/// How long the pipe of a killed child is read on.
constexpr int kDrainMilliseconds = 1000;

/// Writes all of `bytes`; false when the pipe is closed.
bool writeAll(int fd, const char *bytes, size_t size) {
  while (size > 0) {
    ssize_t written = write(fd, bytes, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    bytes += written;
    size -= size_t(written);
  }
  return true;
}

/// Hands the whole messages at the front of `buffer` to `onMessage` and
/// drops them from it.
void deliverMessages(std::string &buffer,
                     llvm::function_ref<void(llvm::StringRef)> onMessage) {
  size_t at = 0;
  while (buffer.size() - at >= sizeof(uint64_t)) {
    uint64_t length;
    std::memcpy(&length, buffer.data() + at, sizeof length);
    if (buffer.size() - at - sizeof length < length)
      break;
    onMessage(llvm::StringRef(buffer.data() + at + sizeof length, length));
    at += sizeof length + length;
  }
  buffer.erase(0, at);
}

/// Milliseconds left before `deadline` seconds on `clock`; -1 for none.
int pollTimeout(const Stopwatch &clock, std::optional<double> deadline) {
  if (!deadline)
    return -1;
  double left = *deadline - clock.seconds();
  return left <= 0 ? 0 : int(std::min(std::ceil(left * 1000), 1e9));
}

} // namespace

bool ChildChannel::send(llvm::StringRef message) {
  uint64_t length = message.size();
  return writeAll(fd_, reinterpret_cast<const char *>(&length),
                  sizeof length) &&
         writeAll(fd_, message.data(), message.size());
}

std::string ChildExit::describe() const {
  switch (kind) {
  case Kind::Exited:
    return fmt::format("exit status {}", code);
  case Kind::Signaled:
    return fmt::format("signal {} ({})", code, strsignal(code));
  case Kind::KilledAtDeadline:
    return "killed at its deadline";
  }
  return "";
}

absl::StatusOr<ChildExit>
runInChild(llvm::function_ref<int(ChildChannel &)> body,
           llvm::function_ref<void(llvm::StringRef)> onMessage,
           std::optional<double> deadlineSeconds) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return absl::InternalError(
        fmt::format("cannot open a pipe: {}", std::strerror(errno)));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  Stopwatch clock;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(
        fmt::format("cannot fork: {}", std::strerror(error)));
  }
  if (pid == 0) {
    close(fds[0]);
    // A parent killed outright takes its child with it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(kChildThrewStatus);
    int status = kChildThrewStatus;
    try {
      ChildChannel channel(fds[1]);
      status = body(channel);
    } catch (...) {
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    _exit(status);
  }
  close(fds[1]);
  std::string buffer;
  bool killed = false;
  char chunk[1 << 16];
  while (true) {
    pollfd readable = {fds[0], POLLIN, 0};
    int timeout =
        killed ? kDrainMilliseconds : pollTimeout(clock, deadlineSeconds);
    int ready = poll(&readable, 1, timeout);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0 && killed)
      break;
    if (ready == 0) {
      // What the child sent before its death is still read, to the end
      // (or for a second, should a process it started hold the pipe).
      kill(pid, SIGKILL);
      killed = true;
      continue;
    }
    ssize_t got = ready < 0 ? -1 : read(fds[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    buffer.append(chunk, size_t(got));
    deliverMessages(buffer, onMessage);
  }
  close(fds[0]);
  // A child that closed the pipe without exiting is still held to the
  // deadline.
  int status = 0;
  while (true) {
    bool block = killed || !deadlineSeconds;
    pid_t done = waitpid(pid, &status, block ? 0 : WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR))
      break;
    if (done == 0 && pollTimeout(clock, deadlineSeconds) == 0) {
      kill(pid, SIGKILL);
      killed = true;
    } else if (done == 0) {
      usleep(1000);
    }
  }
  ChildExit exit;
  if (killed) {
    exit.kind = ChildExit::Kind::KilledAtDeadline;
  } else if (WIFSIGNALED(status)) {
    exit.kind = ChildExit::Kind::Signaled;
    exit.code = WTERMSIG(status);
  } else {
    exit.code = WEXITSTATUS(status);
  }
  return exit;
}

} // namespace remat

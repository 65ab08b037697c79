//===- ChildProcessTest.cpp - Functions run in a forked process -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What a child sends arrives whole and in order; an abort, a throw or a
/// child that runs past its deadline ends the child only, with what it sent
/// before kept.
///
//===----------------------------------------------------------------------===//

#include "remat/Support/ChildProcess.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace remat {
namespace {

/// Runs `body` in a child and collects its messages.
std::pair<ChildExit, std::vector<std::string>>
run(llvm::function_ref<int(ChildChannel &)> body,
    std::optional<double> deadline = std::nullopt) {
  std::vector<std::string> messages;
  absl::StatusOr<ChildExit> exit = runInChild(
      body, [&](llvm::StringRef m) { messages.push_back(m.str()); }, deadline);
  EXPECT_TRUE(exit.ok()) << exit.status();
  return {exit.value_or(ChildExit{}), messages};
}

// Several messages, an empty one and one of 3 MiB (far more than a pipe
// holds, so the child blocks until the parent reads) arrive as sent, and
// the child's exit status comes back.
TEST(ChildProcessTest, MessagesArriveWholeAndInOrder) {
  std::string large(3 << 20, '\0');
  for (size_t i = 0; i < large.size(); ++i)
    large[i] = char(i * 7919 % 251);
  auto [exit, messages] = run([&](ChildChannel &channel) {
    channel.send("first");
    channel.send("");
    channel.send(large);
    channel.send("last");
    return 3;
  });
  EXPECT_EQ(exit.kind, ChildExit::Kind::Exited);
  EXPECT_EQ(exit.code, 3);
  EXPECT_FALSE(exit.succeeded());
  EXPECT_EQ(exit.describe(), "exit status 3");
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0], "first");
  EXPECT_EQ(messages[1], "");
  EXPECT_TRUE(messages[2] == large);
  EXPECT_EQ(messages[3], "last");
}

// A child that changes the parent's memory changes only its own copy.
TEST(ChildProcessTest, TheParentsMemoryIsItsOwn) {
  int counter = 1;
  auto [exit, messages] = run([&](ChildChannel &) {
    counter = 2;
    return 0;
  });
  EXPECT_TRUE(exit.succeeded());
  EXPECT_EQ(counter, 1);
  EXPECT_TRUE(messages.empty());
}

// An assertion failing in the child (abort) ends the child alone; what it
// sent before is delivered.
TEST(ChildProcessTest, AnAbortEndsTheChildOnly) {
  auto [exit, messages] = run([](ChildChannel &channel) {
    channel.send("before");
    rlimit noCore = {0, 0};
    setrlimit(RLIMIT_CORE, &noCore);
    std::abort();
    return 0;
  });
  EXPECT_EQ(exit.kind, ChildExit::Kind::Signaled);
  EXPECT_EQ(exit.code, SIGABRT);
  EXPECT_EQ(exit.describe().rfind("signal 6 (", 0), 0u) << exit.describe();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "before");
}

// An exception does not unwind into the parent's code in the child.
TEST(ChildProcessTest, AThrowIsAnExitStatus) {
  auto [exit, messages] =
      run([](ChildChannel &) -> int { throw std::runtime_error("inside"); });
  EXPECT_EQ(exit.kind, ChildExit::Kind::Exited);
  EXPECT_EQ(exit.code, kChildThrewStatus);
}

// A child still running at its deadline is killed (2 s: time enough for it
// to send its message on a loaded machine); a child that closes the pipe and
// goes on is held to the deadline too.
TEST(ChildProcessTest, AChildPastItsDeadlineIsKilled) {
  auto [exit, messages] = run(
      [](ChildChannel &channel) {
        channel.send("started");
        sleep(60);
        return 0;
      },
      2.0);
  EXPECT_EQ(exit.kind, ChildExit::Kind::KilledAtDeadline);
  EXPECT_EQ(exit.describe(), "killed at its deadline");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "started");

  auto [closed, none] = run(
      [](ChildChannel &) {
        for (int fd = 3; fd < 1024; ++fd)
          close(fd);
        sleep(60);
        return 0;
      },
      0.2);
  EXPECT_EQ(closed.kind, ChildExit::Kind::KilledAtDeadline);
  EXPECT_TRUE(none.empty());
}

/// Whether process `pid` has ended (gone, or a zombie not yet reaped).
bool hasEnded(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(stat, line))
    return true;
  size_t close = line.rfind(')');
  return close + 2 < line.size() && line[close + 2] == 'Z';
}

// A child whose parent is killed outright dies with it: here the middle of
// three processes passes on its child's pid and exits at once.
TEST(ChildProcessTest, AChildDiesWithItsParent) {
  auto [middle, pids] = run([](ChildChannel &outer) {
    (void)runInChild(
        [](ChildChannel &channel) {
          pid_t self = getpid();
          channel.send(llvm::StringRef(reinterpret_cast<const char *>(&self),
                                       sizeof self));
          // Its copies of both pipes closed, so that only its death is
          // awaited below, not its end of the outer pipe.
          for (int fd = 3; fd < 1024; ++fd)
            close(fd);
          sleep(60);
          return 0;
        },
        [&](llvm::StringRef pid) {
          outer.send(pid);
          _exit(0);
        });
    return 1;
  });
  EXPECT_TRUE(middle.succeeded()) << middle.describe();
  ASSERT_EQ(pids.size(), 1u);
  pid_t grandchild;
  std::memcpy(&grandchild, pids[0].data(), sizeof grandchild);
  bool ended = false;
  for (int wait = 0; wait < 500 && !ended; ++wait) {
    ended = hasEnded(grandchild);
    if (!ended)
      usleep(10000);
  }
  EXPECT_TRUE(ended);
}

// A child that ends before its deadline is not killed.
TEST(ChildProcessTest, AChildWithinItsDeadlineEndsItself) {
  auto [exit, messages] = run([](ChildChannel &) { return 0; }, 60.0);
  EXPECT_TRUE(exit.succeeded());
}

} // namespace
} // namespace remat

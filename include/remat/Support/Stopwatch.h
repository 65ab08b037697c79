//===- Stopwatch.h - Wall-clock seconds of a step ----------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The wall-clock time the reports give each pass, build and run. Only
/// reports read it: no result depends on it.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SUPPORT_STOPWATCH_H
#define REMAT_SUPPORT_STOPWATCH_H

#include <chrono>

namespace remat {

/// Seconds since construction or the last `restart()`, on a monotonic clock.
class Stopwatch {
public:
  double seconds() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }
  void restart() { start_ = Clock::now(); }

private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
};

} // namespace remat

#endif // REMAT_SUPPORT_STOPWATCH_H

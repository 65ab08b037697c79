//===- Pictures.h - The SVG outputs of stats and opt --------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--timeline=FILE` of `remat stats` and `remat opt`, and the plain
/// autodiff schedule `opt` draws as the timeline's outline
/// (docs/pictures.md). Private to src/Driver.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_DRIVER_PICTURES_H
#define REMAT_SRC_DRIVER_PICTURES_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat {
class Graph;
struct TrainingOptions;
} // namespace remat

namespace remat::driver {

/// The live bytes at every step of plain autodiff's training graph of the
/// forward graph `forward` (built on a copy) under `options` without its
/// strategy and budget: the schedule whose peak reports call
/// `peak_bytes_before`.
absl::StatusOr<std::vector<int64_t>>
plainTrainingTimeline(const Graph &forward, const TrainingOptions &options);

/// What a timeline shows beside `graph`'s own schedule.
struct TimelineExtras {
  std::string title;
  /// Drawn as an outline when not empty.
  std::vector<int64_t> plain;
  std::optional<int64_t> budgetBytes;
};

/// Writes the memory timeline of `graph`'s schedule to the file `path` (`-`
/// for `stdoutStream`).
absl::Status writeTimeline(const std::string &path, const Graph &graph,
                           const TimelineExtras &extras,
                           llvm::raw_ostream &stdoutStream);

} // namespace remat::driver

#endif // REMAT_SRC_DRIVER_PICTURES_H

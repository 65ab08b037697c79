//===- Timeline.h - The memory timeline picture -------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Draws the live bytes of a schedule over its steps as an SVG area chart,
/// stacked by what the bytes hold (params, inputs, param gradients,
/// activations, recomputed copies, other backward values), with the peak
/// marked, an optional second schedule's total as an outline and an optional
/// budget line (`remat stats/opt --timeline`, docs/pictures.md).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_TIMELINE_H
#define REMAT_IO_TIMELINE_H

#include "remat/Analysis/Memory.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat {

/// What a timeline picture shows.
struct TimelineChart {
  std::string title;
  /// Live bytes by kind at each step (`profileMemoryByKind`).
  std::vector<KindBytes> steps;
  /// Total live bytes at each step of another schedule, drawn as an outline
  /// (plain autodiff's training graph for `remat opt`); empty for none.
  std::vector<int64_t> reference;
  /// The outline's legend, before its peak.
  std::string referenceLabel;
  std::optional<int64_t> budgetBytes;
};

/// A run of steps `[firstStep, endStep)` drawn as one x position, at the
/// height of its `peakStep`.
struct TimelineBucket {
  int64_t firstStep = 0;
  int64_t endStep = 0;
  int64_t peakStep = 0;
};

/// Cuts `numSteps` steps into at most `maxBuckets` runs of near-equal length,
/// each represented by its first step of the highest `total`, so that the
/// maximum of `total` over all steps is a bucket's height. Linear.
std::vector<TimelineBucket>
bucketSteps(int64_t numSteps, int64_t maxBuckets,
            llvm::function_ref<int64_t(int64_t)> total);

/// Most x positions a timeline draws: million-op schedules stay small files.
inline constexpr int64_t kMaxTimelineBuckets = 2000;

/// Writes `chart` as an SVG document. The same chart gives the same bytes.
void printTimelineSvg(const TimelineChart &chart, llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_IO_TIMELINE_H

//===- Report.h - The JSON report of remat opt --------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes a `TrainingReport` as the JSON object that docs/report.md specifies.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_REPORT_H
#define REMAT_IO_REPORT_H

#include "remat/Analysis/Memory.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat {

/// One pass's share of `TrainingReport::passSeconds`.
struct ReportPassTime {
  std::string pass;
  double seconds = 0;
  bool changed = false;
};

/// What `buildTrainingGraph` (remat/Pass/Training.h) did: the fields of the
/// JSON report.
struct TrainingReport {
  std::string graph;
  std::string strategy;
  std::optional<int64_t> budgetBytes;
  int64_t opsBefore = 0;
  int64_t opsAfter = 0;
  /// Peak of plain autodiff's training graph under the same schedule policy.
  int64_t peakBytesBefore = 0;
  int64_t peakBytesAfter = 0;
  MemoryBreakdown peakBreakdownAfter;
  /// FLOPs of the forward ops, of the gradient ops, and of recomputed copies.
  int64_t flopsForward = 0;
  int64_t flopsBackward = 0;
  int64_t flopsRecompute = 0;
  /// flopsRecompute / (flopsForward + flopsBackward).
  double overhead = 0;
  /// Names of the kept tensors (empty for `none`).
  std::vector<std::string> checkpoints;
  /// Wall time of the passes, and each pass's share.
  double passSeconds = 0;
  std::vector<ReportPassTime> timings;
};


/// One JSON object, two-space indented, keys in a fixed order, then a newline.
void printReportJson(const TrainingReport &report, llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_IO_REPORT_H

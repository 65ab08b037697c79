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

#include "llvm/Support/raw_ostream.h"

namespace remat {

struct TrainingReport;

/// One JSON object, two-space indented, keys in a fixed order, then a newline.
void printReportJson(const TrainingReport &report, llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_IO_REPORT_H

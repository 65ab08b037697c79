//===- SweepPlot.h - The Pareto curve of remat opt --sweep --------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Draws a `SweepReport` (remat/IO/Report.h) as an SVG chart: peak bytes
/// against recompute overhead, one labelled point per plan on the curve, the
/// staircase of what each budget gets, and plain autodiff's peak marked
/// (`remat opt --sweep --plot`, docs/pictures.md).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_SWEEPPLOT_H
#define REMAT_IO_SWEEPPLOT_H

#include "llvm/Support/raw_ostream.h"

namespace remat {

struct SweepReport;

/// Writes `sweep` as an SVG document. The same sweep gives the same bytes.
void printSweepSvg(const SweepReport &sweep, llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_IO_SWEEPPLOT_H

//===- SvgChart.h - Axes, ticks and legends of remat's charts -----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the memory timeline and the sweep plot share: a plot area mapping
/// data to pixels, tick positions that read well (byte sizes in powers of
/// two, counts and ratios in 1-2-5 steps), gridded axes and a legend.
/// Private to src/IO.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_SVGCHART_H
#define REMAT_SRC_IO_SVGCHART_H

#include "IO/SvgWriter.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat::svg {

/// Ticks from 0 covering `max` bytes: a power-of-two step, at most about six
/// ticks; the last tick is at least `max`.
std::vector<double> byteTicks(int64_t max);

/// Ticks from 0 covering `max` in 1-2-5 steps, about `count` of them; the
/// last tick is at least `max`.
std::vector<double> decimalTicks(double max, unsigned count);

/// The width `text` takes at font size `size`, estimated (no font metrics
/// here): enough to keep labels apart.
double textWidth(llvm::StringRef text, double size);

/// A rectangle of the picture showing data from (xMin, yMin) at its
/// bottom-left to (xMax, yMax) at its top-right.
struct PlotArea {
  double left = 0, top = 0, width = 0, height = 0;
  double xMin = 0, xMax = 1, yMin = 0, yMax = 1;

  double x(double value) const {
    return left + (value - xMin) / (xMax - xMin) * width;
  }
  double y(double value) const {
    return top + height - (value - yMin) / (yMax - yMin) * height;
  }
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

/// One axis of a chart: its ticks (data values), how a tick reads and the
/// axis title.
struct AxisSpec {
  std::vector<double> ticks;
  llvm::function_ref<std::string(double)> label;
  std::string title;
};

/// Grid lines at the ticks, the axes, the tick labels and the titles.
void drawAxes(SvgWriter &svg, const PlotArea &area, const AxisSpec &x,
              const AxisSpec &y);

/// One line of a legend: a filled swatch, or a line sample when
/// `paint.fill` is "none", then the label and a figure.
struct LegendEntry {
  std::string label;
  std::string value;
  Paint paint;
};

/// Width of a legend: swatch, label, and figures right-aligned.
inline constexpr double kLegendWidth = 230;

/// The legend's lines from (x, y) down, one every 18 pixels, under an
/// optional heading.
void drawLegend(SvgWriter &svg, double x, double y, llvm::StringRef heading,
                llvm::ArrayRef<LegendEntry> entries);

/// A label on a white backing, so that it stays readable over the plot.
void drawLabel(SvgWriter &svg, double x, double y, llvm::StringRef text,
               const Font &font);

/// The chart's title, centred over `area`.
void drawTitle(SvgWriter &svg, const PlotArea &area, llvm::StringRef title);

} // namespace remat::svg

#endif // REMAT_SRC_IO_SVGCHART_H

//===- SweepPlot.cpp - The Pareto curve of remat opt --sweep -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Points of a sweep crowd where plans differ little, so each label takes
/// the first of a few places around its point that overlaps no point and no
/// label placed before it (the least overlapping place when none is free).
///
//===----------------------------------------------------------------------===//

#include "remat/IO/SweepPlot.h"

#include "IO/SvgChart.h"

#include "remat/IO/Report.h"
#include "remat/Support/Units.h"

#include <fmt/format.h>

#include <algorithm>

namespace remat {
namespace {

using svg::AnchorKind;
using svg::Paint;

constexpr const char *kCurveColour = "#0072b2";
constexpr const char *kPlainColour = "#d55e00";
constexpr double kLabelFont = 11;
constexpr double kPointRadius = 3.5;

/// An axis-aligned box in pixels.
struct Box {
  double left, top, right, bottom;

  double overlap(const Box &other) const {
    double w = std::min(right, other.right) - std::max(left, other.left);
    double h = std::min(bottom, other.bottom) - std::max(top, other.top);
    return w > 0 && h > 0 ? w * h : 0;
  }
};

/// A label's place: its text position and anchor, and the box it covers.
struct LabelPlace {
  double x, y;
  AnchorKind anchor;
  Box box;
};

/// The places tried for a label of `width` beside the point (px, py), in
/// order of preference.
std::vector<LabelPlace> labelPlaces(double px, double py, double width) {
  const double gap = kPointRadius + 3, ascent = kLabelFont * 0.8,
               descent = kLabelFont * 0.25;
  auto place = [&](double x, double y, AnchorKind anchor) {
    double left = anchor == AnchorKind::Start ? x
                  : anchor == AnchorKind::End ? x - width
                                              : x - width / 2;
    // Padded, so that neighbouring labels keep a gap.
    return LabelPlace{x, y, anchor,
                      {left - 3, y - ascent - 2, left + width + 3,
                       y + descent + 2}};
  };
  return {place(px + gap, py - gap, AnchorKind::Start),
          place(px + gap, py + gap + ascent, AnchorKind::Start),
          place(px - gap, py - gap, AnchorKind::End),
          place(px - gap, py + gap + ascent, AnchorKind::End),
          place(px, py - gap - descent, AnchorKind::Middle),
          place(px, py + gap + ascent, AnchorKind::Middle)};
}

std::string overheadLabel(double overhead) {
  return fmt::format("{:g}", overhead);
}

std::string bytesLabel(double bytes) { return formatBytes(int64_t(bytes)); }

} // namespace

void printSweepSvg(const SweepReport &sweep, llvm::raw_ostream &os) {
  constexpr double kWidth = 860, kHeight = 520;
  svg::SvgWriter svg(os, kWidth, kHeight,
                     fmt::format("@{} memory/overhead", sweep.graph));
  int64_t highestPeak = sweep.peakBytesPlain;
  double highestOverhead = 0;
  for (const SweepPoint &point : sweep.points) {
    highestPeak = std::max(highestPeak, point.peakBytes);
    highestOverhead = std::max(highestOverhead, point.overhead);
  }
  std::vector<double> xTicks = svg::byteTicks(highestPeak + highestPeak / 10);
  std::vector<double> yTicks =
      svg::decimalTicks(std::max(highestOverhead * 1.1, 0.01), 6);
  svg::PlotArea area{.left = 100,
                     .top = 48,
                     .width = 720,
                     .height = 400,
                     .xMin = 0,
                     .xMax = xTicks.back(),
                     .yMin = 0,
                     .yMax = yTicks.back()};
  svg::drawTitle(svg, area,
                 fmt::format("@{}: peak memory against recompute, {} plans "
                             "tried, {} on the curve",
                             sweep.graph, sweep.plansTried,
                             sweep.points.size()));
  svg::drawAxes(svg, area, {xTicks, bytesLabel, "peak bytes"},
                {yTicks, overheadLabel,
                 sweep.measuredCosts
                     ? "overhead (recomputed / training time measured)"
                     : "overhead (recomputed / training FLOPs)"});

  double plainX = area.x(double(sweep.peakBytesPlain));
  svg.line(plainX, area.top, plainX, area.bottom(),
           {.stroke = kPlainColour, .strokeWidth = 1.5, .dash = "8 4"});
  std::string plainLabel = fmt::format("plain autodiff peak {} ({} bytes)",
                                       formatBytes(sweep.peakBytesPlain),
                                       sweep.peakBytesPlain);
  bool plainOnRight = plainX > area.left + area.width / 2;
  svg.text(plainOnRight ? plainX - 6 : plainX + 6, area.top + 14, plainLabel,
           {.size = kLabelFont,
            .anchor = plainOnRight ? AnchorKind::End : AnchorKind::Start,
            .fill = kPlainColour});
  // What labels should not cover: the plain peak's line and label, the
  // staircase and the points.
  std::vector<Box> taken = {
      {plainOnRight ? plainX - 6 - svg::textWidth(plainLabel, kLabelFont)
                    : plainX + 6,
       area.top + 4,
       plainOnRight ? plainX - 6
                    : plainX + 6 + svg::textWidth(plainLabel, kLabelFont),
       area.top + 17},
      {plainX - 1, area.top, plainX + 1, area.bottom()}};

  // What a budget gets: a point's overhead from its peak up to the next
  // point's peak.
  if (!sweep.points.empty()) {
    svg::PathData staircase;
    double x = area.x(double(sweep.points.front().peakBytes));
    double y = area.y(sweep.points.front().overhead);
    staircase.moveTo(x, y);
    for (const SweepPoint &point : llvm::drop_begin(sweep.points)) {
      double nextX = area.x(double(point.peakBytes));
      double nextY = area.y(point.overhead);
      staircase.horizontalTo(nextX).verticalTo(nextY);
      taken.push_back({x, y - 1, nextX, y + 1});
      taken.push_back({nextX - 1, y, nextX + 1, nextY});
      x = nextX;
      y = nextY;
    }
    staircase.horizontalTo(area.right());
    taken.push_back({x, y - 1, area.right(), y + 1});
    svg.path(staircase, {.stroke = kCurveColour, .strokeWidth = 1.5});
  }
  for (const SweepPoint &point : sweep.points) {
    double px = area.x(double(point.peakBytes)), py = area.y(point.overhead);
    svg.circle(px, py, kPointRadius, {.fill = kCurveColour});
    taken.push_back({px - kPointRadius, py - kPointRadius, px + kPointRadius,
                     py + kPointRadius});
  }
  for (const SweepPoint &point : sweep.points) {
    double px = area.x(double(point.peakBytes)), py = area.y(point.overhead);
    double width = svg::textWidth(point.planner, kLabelFont);
    std::vector<LabelPlace> places = labelPlaces(px, py, width);
    const LabelPlace *best = nullptr;
    double bestOverlap = 0;
    for (const LabelPlace &place : places) {
      if (place.box.left < area.left || place.box.right > kWidth - 4 ||
          place.box.bottom > area.bottom())
        continue;
      double overlap = 0;
      for (const Box &box : taken)
        overlap += place.box.overlap(box);
      if (!best || overlap < bestOverlap) {
        best = &place;
        bestOverlap = overlap;
      }
      if (overlap == 0)
        break;
    }
    if (!best)
      best = &places.front();
    svg.text(best->x, best->y, point.planner,
             {.size = kLabelFont, .anchor = best->anchor});
    taken.push_back(best->box);
  }
}

} // namespace remat

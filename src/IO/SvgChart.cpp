//===- SvgChart.cpp - Axes, ticks and legends of remat's charts --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "IO/SvgChart.h"

#include <algorithm>
#include <cmath>

namespace remat::svg {
namespace {

constexpr const char *kGridColour = "#e4e4e4";
constexpr const char *kAxisColour = "#444";
constexpr double kTickFont = 11;

std::vector<double> ticksBy(double step, double max) {
  std::vector<double> ticks = {0};
  while (ticks.back() < max)
    ticks.push_back(ticks.back() + step);
  return ticks;
}

} // namespace

std::vector<double> byteTicks(int64_t max) {
  double step = 1;
  while (step * 6 < double(max))
    step *= 2;
  return ticksBy(step, std::max(double(max), 1.0));
}

std::vector<double> decimalTicks(double max, unsigned count) {
  if (!(max > 0))
    return {0, 1};
  double raw = max / count;
  double power = std::pow(10, std::floor(std::log10(raw)));
  double step = 10 * power;
  for (double factor : {1.0, 2.0, 5.0})
    if (factor * power >= raw) {
      step = factor * power;
      break;
    }
  return ticksBy(step, max);
}

double textWidth(llvm::StringRef text, double size) {
  return 0.6 * size * double(text.size());
}

void drawAxes(SvgWriter &svg, const PlotArea &area, const AxisSpec &x,
              const AxisSpec &y) {
  Paint grid{.stroke = kGridColour};
  for (double tick : x.ticks) {
    double px = area.x(tick);
    svg.line(px, area.top, px, area.bottom(), grid);
    svg.text(px, area.bottom() + 16, x.label(tick),
             {.size = kTickFont, .anchor = AnchorKind::Middle});
  }
  for (double tick : y.ticks) {
    double py = area.y(tick);
    svg.line(area.left, py, area.right(), py, grid);
    svg.text(area.left - 6, py + 4, y.label(tick),
             {.size = kTickFont, .anchor = AnchorKind::End});
  }
  Paint axis{.stroke = kAxisColour};
  svg.line(area.left, area.bottom(), area.right(), area.bottom(), axis);
  svg.line(area.left, area.top, area.left, area.bottom(), axis);
  svg.text(area.left + area.width / 2, area.bottom() + 38, x.title,
           {.anchor = AnchorKind::Middle});
  double yTitleX = area.left - 78;
  svg.text(yTitleX, area.top + area.height / 2, y.title,
           {.anchor = AnchorKind::Middle, .rotate = -90});
}

void drawLegend(SvgWriter &svg, double x, double y, llvm::StringRef heading,
                llvm::ArrayRef<LegendEntry> entries) {
  if (!heading.empty()) {
    svg.text(x, y, heading, {.size = kTickFont, .bold = true});
    y += 20;
  }
  for (const LegendEntry &entry : entries) {
    if (entry.paint.fill == "none")
      svg.line(x, y - 4, x + 14, y - 4, entry.paint);
    else
      svg.rect(x, y - 10, 14, 12, entry.paint);
    svg.text(x + 20, y, entry.label, {.size = kTickFont});
    svg.text(x + kLegendWidth, y, entry.value,
             {.size = kTickFont, .anchor = AnchorKind::End});
    y += 18;
  }
}

void drawLabel(SvgWriter &svg, double x, double y, llvm::StringRef text,
               const Font &font) {
  double width = textWidth(text, font.size);
  double left = font.anchor == AnchorKind::Start ? x
                : font.anchor == AnchorKind::End ? x - width
                                                 : x - width / 2;
  svg.rect(left - 2, y - font.size * 0.85, width + 4, font.size * 1.15,
           {.fill = "#ffffff", .fillOpacity = 0.8});
  svg.text(x, y, text, font);
}

void drawTitle(SvgWriter &svg, const PlotArea &area, llvm::StringRef title) {
  svg.text(area.left + area.width / 2, area.top - 14, title,
           {.size = 14, .anchor = AnchorKind::Middle, .bold = true});
}

} // namespace remat::svg

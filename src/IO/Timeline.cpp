//===- Timeline.cpp - The memory timeline picture ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Step `i` of a schedule covers x in [i, i+1). The kinds are stacked in
/// `StorageKind` order from the bottom; each kind is drawn as the area under
/// the running sum up to it, the topmost first, so every later area covers
/// the lower part of the earlier ones:
///
///   bytes ^   ____
///         |  |grad|__          gradients    (sum of all kinds)
///         |__|act    |__       activations  (sum up to activations)
///         |params_______|      params       (params alone)
///         +----------------> step
///
//===----------------------------------------------------------------------===//

#include "remat/IO/Timeline.h"

#include "IO/SvgChart.h"

#include "remat/Support/Units.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace remat {
namespace {

using svg::AnchorKind;
using svg::Paint;

struct KindStyle {
  const char *label;
  const char *colour;
};

/// Indexed by `StorageKind`.
constexpr KindStyle kKindStyles[kNumStorageKinds] = {
    {"params", "#b4b4b4"},        {"inputs", "#e2cfa4"},
    {"param gradients", "#cc79a7"}, {"activations", "#56b4e9"},
    {"recomputed", "#009e73"},    {"backward temporaries", "#e69f00"},
};
constexpr const char *kReferenceColour = "#222222";
constexpr const char *kBudgetColour = "#d55e00";

int64_t totalOf(const KindBytes &bytes) {
  return std::accumulate(bytes.begin(), bytes.end(), int64_t(0));
}

/// The first step of the highest total; -1 for no steps.
int64_t peakStepOf(int64_t numSteps,
                   llvm::function_ref<int64_t(int64_t)> total) {
  int64_t peak = -1;
  for (int64_t step = 0; step < numSteps; ++step)
    if (peak < 0 || total(step) > total(peak))
      peak = step;
  return peak;
}

/// The step path of `height` over `buckets`, from the x axis when `closed`.
svg::PathData stepPath(const svg::PlotArea &area,
                       llvm::ArrayRef<TimelineBucket> buckets,
                       llvm::function_ref<int64_t(int64_t)> height,
                       bool closed) {
  svg::PathData path;
  double lastY = area.y(0);
  path.moveTo(area.x(0), closed ? lastY : area.y(double(height(0))));
  if (!closed)
    lastY = area.y(double(height(0)));
  for (const TimelineBucket &bucket : buckets) {
    double y = area.y(double(height(bucket.peakStep)));
    if (y != lastY)
      path.verticalTo(y);
    lastY = y;
    path.horizontalTo(area.x(double(bucket.endStep)));
  }
  if (closed)
    path.verticalTo(area.y(0)).close();
  return path;
}

std::string stepLabel(double step) { return fmt::format("{}", int64_t(step)); }

std::string bytesLabel(double bytes) { return formatBytes(int64_t(bytes)); }

class TimelinePainter {
public:
  TimelinePainter(const TimelineChart &chart, llvm::raw_ostream &os)
      : chart_(chart), svg_(os, kWidth, kHeight, chart.title) {}

  void paint() {
    int64_t numSteps = int64_t(chart_.steps.size());
    auto total = [&](int64_t step) { return totalOf(chart_.steps[step]); };
    auto referenceTotal = [&](int64_t step) { return chart_.reference[step]; };
    int64_t referenceSteps = int64_t(chart_.reference.size());
    peakStep_ = peakStepOf(numSteps, total);
    int64_t referencePeakStep = peakStepOf(referenceSteps, referenceTotal);
    int64_t peak = peakStep_ < 0 ? 0 : total(peakStep_);
    int64_t referencePeak =
        referencePeakStep < 0 ? 0 : chart_.reference[referencePeakStep];

    int64_t highest = std::max({peak, referencePeak,
                                chart_.budgetBytes.value_or(int64_t(0))});
    // Headroom above the highest line for the peak's label.
    std::vector<double> yTicks = svg::byteTicks(highest + highest / 8);
    int64_t lastStep = std::max<int64_t>({numSteps, referenceSteps, 1});
    std::vector<double> xTicks = svg::decimalTicks(double(lastStep), 8);
    while (xTicks.size() > 2 && xTicks.back() > double(lastStep))
      xTicks.pop_back();
    area_ = {.left = 100,
             .top = 48,
             .width = kPlotWidth,
             .height = 400,
             .xMin = 0,
             .xMax = double(lastStep),
             .yMin = 0,
             .yMax = yTicks.back()};
    svg::drawTitle(svg_, area_, chart_.title);
    svg::drawAxes(svg_, area_,
                  {xTicks, stepLabel, "step in the schedule"},
                  {yTicks, bytesLabel, "live bytes"});

    std::vector<svg::LegendEntry> kinds, legend;
    if (numSteps > 0)
      paintKinds(kinds);
    if (referenceSteps > 0) {
      Paint outline{.stroke = kReferenceColour, .strokeWidth = 1.5,
                    .dash = "5 3"};
      svg_.path(stepPath(area_,
                         bucketSteps(referenceSteps, maxBuckets(referenceSteps),
                                     referenceTotal),
                         referenceTotal, /*closed=*/false),
                outline);
      legend.push_back({fmt::format("{}, peak", chart_.referenceLabel),
                        formatBytes(referencePeak), outline});
    }
    if (chart_.budgetBytes)
      paintBudget(legend);
    if (peakStep_ >= 0)
      paintPeak(peak);
    double legendX = area_.right() + 24;
    svg::drawLegend(svg_, legendX, area_.top + 4,
                    kinds.empty() ? "" : "live at the peak", kinds);
    svg::drawLegend(svg_, legendX, area_.top + 4 + 20 + 18 * kinds.size() + 12,
                    "", legend);
  }

private:
  static constexpr double kPlotWidth = 680;
  static constexpr double kWidth = 100 + kPlotWidth + 24 + svg::kLegendWidth + 16;
  static constexpr double kHeight = 510;

  /// One x position per pixel at most: a narrower run of steps would draw a
  /// peak too thin to see.
  int64_t maxBuckets(int64_t numSteps) const {
    int64_t pixels = int64_t(kPlotWidth) * numSteps / int64_t(area_.xMax);
    return std::clamp<int64_t>(pixels, 1, kMaxTimelineBuckets);
  }

  /// The stacked areas, topmost first; a kind with no bytes is left out.
  void paintKinds(std::vector<svg::LegendEntry> &kinds) {
    int64_t numSteps = int64_t(chart_.steps.size());
    auto total = [&](int64_t step) { return totalOf(chart_.steps[step]); };
    std::vector<TimelineBucket> buckets =
        bucketSteps(numSteps, maxBuckets(numSteps), total);
    KindBytes atPeak = chart_.steps[peakStep_];
    // Topmost first, as the legend lists them.
    for (unsigned kind = kNumStorageKinds; kind-- > 0;) {
      bool present = llvm::any_of(
          chart_.steps, [&](const KindBytes &bytes) { return bytes[kind]; });
      if (!present)
        continue;
      auto runningSum = [&](int64_t step) {
        const KindBytes &bytes = chart_.steps[step];
        return std::accumulate(bytes.begin(), bytes.begin() + kind + 1,
                               int64_t(0));
      };
      Paint fill{.fill = kKindStyles[kind].colour};
      svg_.path(stepPath(area_, buckets, runningSum, /*closed=*/true), fill);
      kinds.push_back(
          {kKindStyles[kind].label, formatBytes(atPeak[kind]), fill});
    }
  }

  void paintBudget(std::vector<svg::LegendEntry> &legend) {
    int64_t budget = *chart_.budgetBytes;
    Paint line{.stroke = kBudgetColour, .strokeWidth = 1.5, .dash = "8 4"};
    double y = area_.y(double(budget));
    svg_.line(area_.left, y, area_.right(), y, line);
    // Away from the peak's label, which sits over the peak step.
    bool peakOnRight =
        peakStep_ >= 0 && area_.x(double(peakStep_)) > area_.left + area_.width / 2;
    svg::drawLabel(svg_, peakOnRight ? area_.left + 6 : area_.right() - 6,
                   y - 5, fmt::format("budget {} ({} bytes)", formatBytes(budget), budget),
                   {.size = 11,
                    .anchor = peakOnRight ? AnchorKind::Start : AnchorKind::End,
                    .fill = kBudgetColour});
    legend.push_back({"budget", formatBytes(budget), line});
  }

  void paintPeak(int64_t peak) {
    double x = area_.x(double(peakStep_) + 0.5);
    double y = area_.y(double(peak));
    svg_.line(x, y, x, area_.bottom(), {.stroke = "#000000", .dash = "2 2"});
    svg_.circle(x, y, 3.5, {.fill = "#000000"});
    std::string label = fmt::format("peak {} ({} bytes) at step {}",
                                    formatBytes(peak), peak, peakStep_);
    double width = svg::textWidth(label, 11);
    AnchorKind anchor = AnchorKind::Middle;
    if (x - width / 2 < area_.left)
      anchor = AnchorKind::Start;
    else if (x + width / 2 > area_.right())
      anchor = AnchorKind::End;
    double labelX = anchor == AnchorKind::Start ? std::max(x - 8, area_.left)
                    : anchor == AnchorKind::End ? std::min(x + 8, area_.right())
                                                : x;
    // Above the budget line when it would cross the label.
    double labelY = y - 8;
    if (chart_.budgetBytes) {
      double budgetY = area_.y(double(*chart_.budgetBytes));
      if (budgetY > labelY - 12 && budgetY < labelY + 4)
        labelY = budgetY - 6;
    }
    svg::drawLabel(svg_, labelX, labelY, label,
                   {.size = 11, .anchor = anchor, .bold = true});
  }

  const TimelineChart &chart_;
  svg::SvgWriter svg_;
  svg::PlotArea area_;
  int64_t peakStep_ = -1;
};

} // namespace

std::vector<TimelineBucket>
bucketSteps(int64_t numSteps, int64_t maxBuckets,
            llvm::function_ref<int64_t(int64_t)> total) {
  std::vector<TimelineBucket> buckets;
  int64_t count = std::min(numSteps, std::max<int64_t>(maxBuckets, 1));
  buckets.reserve(count);
  for (int64_t b = 0; b < count; ++b) {
    TimelineBucket bucket;
    // Bounds by exact integer division: the runs tile the steps.
    bucket.firstStep = b * numSteps / count;
    bucket.endStep = (b + 1) * numSteps / count;
    bucket.peakStep = bucket.firstStep;
    for (int64_t step = bucket.firstStep + 1; step < bucket.endStep; ++step)
      if (total(step) > total(bucket.peakStep))
        bucket.peakStep = step;
    buckets.push_back(bucket);
  }
  return buckets;
}

void printTimelineSvg(const TimelineChart &chart, llvm::raw_ostream &os) {
  TimelinePainter(chart, os).paint();
}

} // namespace remat

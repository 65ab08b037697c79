//===- Compare.cpp - Differences between the outputs of two runs ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Executor.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace remat {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Folds the difference of one pair of elements into `diff`.
void accumulate(double a, double b, OutputDiff &diff) {
  if (std::isnan(a) || std::isnan(b)) {
    if (!(std::isnan(a) && std::isnan(b)))
      diff.maxAbsDiff = diff.maxRelDiff = kInfinity;
    return;
  }
  if (a == b)
    return;
  double abs = std::fabs(a - b);
  double rel = abs / std::max(std::fabs(a), std::fabs(b));
  // An infinity against anything else: inf / inf.
  if (std::isnan(rel))
    rel = kInfinity;
  diff.maxAbsDiff = std::max(diff.maxAbsDiff, abs);
  diff.maxRelDiff = std::max(diff.maxRelDiff, rel);
}

} // namespace

std::vector<OutputDiff> compareOutputs(const RunResult &a, const RunResult &b) {
  llvm::StringMap<const HostTensor *> byName;
  for (const auto &[name, tensor] : b.outputs)
    byName.try_emplace(name, &tensor);
  std::vector<OutputDiff> diffs;
  for (const auto &[name, tensor] : a.outputs) {
    auto it = byName.find(name);
    if (it == byName.end())
      continue;
    const HostTensor &other = *it->second;
    OutputDiff &diff = diffs.emplace_back();
    diff.name = name;
    if (tensor.type() != other.type()) {
      diff.typeMismatch = true;
      diff.maxAbsDiff = diff.maxRelDiff = kInfinity;
      continue;
    }
    for (int64_t i = 0, e = tensor.numel(); i < e; ++i)
      accumulate(tensor.at(i), other.at(i), diff);
  }
  return diffs;
}

} // namespace remat

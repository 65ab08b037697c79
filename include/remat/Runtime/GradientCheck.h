//===- GradientCheck.h - Autodiff against finite differences ----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Checks the gradients autodiff emits for a forward graph against central
/// finite differences of the loss, on a sample of entries of every param. The
/// differences run the forward graph in f64 and are accumulated in f64; the
/// analytic gradients run the training graph in f64 as well.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_GRADIENTCHECK_H
#define REMAT_RUNTIME_GRADIENTCHECK_H

#include "remat/Runtime/Executor.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

class Graph;

struct GradientCheckOptions {
  /// Seed of the feeds and of the sampled entries.
  uint64_t seed = 0;
  /// Values for inputs and params by name, replacing their seeded data; may
  /// be null or partial. Each must have its leaf's type.
  const TensorMap *feeds = nullptr;
  /// Entries checked per param (all of them if the param is smaller).
  int64_t samplesPerParam = 4;
  /// Finite-difference step, relative to max(1, |entry|).
  double step = 1e-6;
  /// The check fails when the worst error exceeds this.
  double tolerance = 1e-3;
};

/// One checked entry.
struct GradientSample {
  std::string param;
  int64_t index = 0;
  double analytic = 0;
  double numeric = 0;
  /// |analytic - numeric| / max(|analytic|, |numeric|, floor), where floor is
  /// 1e-3 of the largest |analytic| entry of the param, or 1e-4 of the
  /// largest of all params if that is larger (docs/executor.md).
  double error = 0;
};

struct GradientCheckReport {
  /// Every checked entry, params in graph order.
  std::vector<GradientSample> samples;
  /// The largest `error`; 0 when nothing was checked.
  double worstError = 0;
  /// Index into `samples` of the worst entry; -1 when empty.
  int64_t worstSample = -1;
  bool passed = true;
};

/// Differentiates a copy of `forward` (loss = output 0) and checks every
/// param's gradient. Errors: no params, a non-scalar loss, autodiff or
/// executor failures.
absl::StatusOr<GradientCheckReport>
checkGradients(const Graph &forward, const GradientCheckOptions &options = {});

} // namespace remat

#endif // REMAT_RUNTIME_GRADIENTCHECK_H

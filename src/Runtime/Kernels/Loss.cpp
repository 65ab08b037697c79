//===- Loss.cpp - Kernels of the Loss family -------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// softmax_cross_entropy, its backward op and mse_loss. Everything is
/// computed in double and rounded once into the result dtype; the mean over
/// zero positions is NaN. Labels are checked against [0, C).
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>
#include <limits>
#include <vector>

namespace remat {
using namespace kernels;

namespace {

/// The labels as int64, or an error for the first outside [0, classes).
absl::StatusOr<std::vector<int64_t>>
readLabels(const KernelContext &ctx, const Tensor &labels, int64_t classes) {
  std::vector<int64_t> result(size_t(labels.numel()));
  REMAT_RETURN_IF_ERROR(
      dispatchIndex(labels.dtype(), ctx.op().kind(), [&]<typename I>() {
        const I *p = labels.data<I>();
        for (size_t k = 0; k < result.size(); ++k)
          result[k] = int64_t(p[k]);
      }));
  for (int64_t label : result)
    if (label < 0 || label >= classes)
      return invalidArgument("{} label {} is out of range [0, {})",
                             ctx.op().kind().str(), label, classes);
  return result;
}

/// max and log(sum(exp(row - max))) of one row of logits.
template <typename T> std::pair<double, double> logSumExp(const T *row,
                                                         int64_t classes) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < classes; ++c)
    max = std::max(max, double(row[c]));
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c)
    sum += std::exp(double(row[c]) - max);
  return {max, std::log(sum)};
}

absl::Status softmaxCrossEntropy(const KernelContext &ctx) {
  const Tensor &logits = ctx.operand(0);
  const Tensor &loss = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), logits.dtype(), {loss}));
  int64_t classes = logits.shape().back();
  REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> labels,
                         readLabels(ctx, ctx.operand(1), classes));
  return dispatchFloat(logits.dtype(), ctx.op().kind(), [&]<typename T>() {
    const T *px = logits.data<T>();
    double total = 0;
    for (size_t r = 0; r < labels.size(); ++r) {
      const T *row = px + int64_t(r) * classes;
      auto [max, logSum] = logSumExp(row, classes);
      total += max + logSum - double(row[labels[r]]);
    }
    *loss.data<T>() = T(total / double(labels.size()));
  });
}

/// dlogits = (softmax(logits) - onehot(labels)) * dy / positions.
absl::Status softmaxCrossEntropyGrad(const KernelContext &ctx) {
  const Tensor &logits = ctx.operand(0);
  const Tensor &dy = ctx.operand(2);
  const Tensor &dx = ctx.result();
  REMAT_RETURN_IF_ERROR(
      expectDType(ctx.op().kind(), logits.dtype(), {dy, dx}));
  int64_t classes = logits.shape().back();
  REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> labels,
                         readLabels(ctx, ctx.operand(1), classes));
  return dispatchFloat(logits.dtype(), ctx.op().kind(), [&]<typename T>() {
    if (labels.empty())
      return;
    const T *px = logits.data<T>();
    T *pdx = dx.data<T>();
    double scale = double(*dy.data<T>()) / double(labels.size());
    for (size_t r = 0; r < labels.size(); ++r) {
      const T *row = px + int64_t(r) * classes;
      T *out = pdx + int64_t(r) * classes;
      auto [max, logSum] = logSumExp(row, classes);
      for (int64_t c = 0; c < classes; ++c) {
        double p = std::exp(double(row[c]) - max - logSum);
        out[c] = T((p - (c == labels[r] ? 1.0 : 0.0)) * scale);
      }
    }
  });
}

absl::Status mseLoss(const KernelContext &ctx) {
  const Tensor &pred = ctx.operand(0);
  const Tensor &target = ctx.operand(1);
  const Tensor &loss = ctx.result();
  REMAT_RETURN_IF_ERROR(
      expectDType(ctx.op().kind(), pred.dtype(), {target, loss}));
  return dispatchFloat(pred.dtype(), ctx.op().kind(), [&]<typename T>() {
    const T *pp = pred.data<T>();
    const T *pt = target.data<T>();
    int64_t n = pred.numel();
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      double d = double(pp[i]) - double(pt[i]);
      total += d * d;
    }
    *loss.data<T>() = T(total / double(n));
  });
}

} // namespace

void registerLossKernels(OpRegistry &registry) {
  registry.setKernel("softmax_cross_entropy", {softmaxCrossEntropy});
  registry.setKernel("softmax_cross_entropy_grad", {softmaxCrossEntropyGrad});
  registry.setKernel("mse_loss", {mseLoss});
}

} // namespace remat

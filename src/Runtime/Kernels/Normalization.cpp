//===- Normalization.cpp - Kernels of the Normalization family ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// layer_norm and training-mode batch_norm with their backward ops. A group
/// of M elements (a row of layer_norm, a channel of batch_norm over N and the
/// spatial dims) is normalised with its mean and biased variance, both taken
/// in double by two passes; every result is computed in double and rounded
/// once. With xhat = (x - mean) / sqrt(var + eps) and g = dy * gamma:
///
///   dbeta  = sum dy            dgamma = sum dy * xhat
///   dx     = (g - mean(g) - xhat * mean(g * xhat)) / sqrt(var + eps)
///
/// where layer_norm's gamma varies along the group and batch_norm's is one
/// scalar per group. An empty group has NaN statistics (0 / 0).
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "remat/Runtime/Kernel.h"
#include "remat/Support/Status.h"

#include <cmath>
#include <vector>

namespace remat {
using namespace kernels;

namespace {
/// The elements of one batch_norm channel: `spans` runs of `spanLength`
/// contiguous elements, `stride` apart.
struct ChannelLayout {
  int64_t spans, spanLength, stride;

  int64_t count() const { return spans * spanLength; }

  /// Calls `fn(i)` for each element offset of the channel starting at `base`.
  template <typename Fn> void forEach(int64_t base, Fn &&fn) const {
    for (int64_t s = 0; s < spans; ++s)
      for (int64_t i = 0; i < spanLength; ++i)
        fn(base + s * stride + i);
  }
};

/// Mean and biased variance of one group, and the reciprocal standard
/// deviation that normalises it.
struct Moments {
  double mean, variance, invStd;
};
} // namespace

template <typename T, typename ForEach>
static Moments moments(const T *x, int64_t count, double eps,
                       ForEach &&forEach) {
  double sum = 0;
  forEach([&](int64_t i) { sum += double(x[i]); });
  double mean = sum / double(count);
  double squares = 0;
  forEach([&](int64_t i) {
    double centred = double(x[i]) - mean;
    squares += centred * centred;
  });
  double variance = squares / double(count);
  return {mean, variance, 1.0 / std::sqrt(variance + eps)};
}

template <typename T>
static void batchNorm(const ChannelLayout &layout, int64_t channels, const T *x,
                      const T *gamma, const T *beta, double eps, T *y, T *mean,
                      T *variance) {
  for (int64_t c = 0; c < channels; ++c) {
    int64_t base = c * layout.spanLength;
    auto forEach = [&](auto &&fn) { layout.forEach(base, fn); };
    Moments m = moments(x, layout.count(), eps, forEach);
    double scale = double(gamma[c]) * m.invStd;
    double shift = double(beta[c]);
    forEach(
        [&](int64_t i) { y[i] = T((double(x[i]) - m.mean) * scale + shift); });
    mean[c] = T(m.mean);
    variance[c] = T(m.variance);
  }
}

template <typename T>
static void batchNormGrad(const ChannelLayout &layout, int64_t channels,
                          const T *x, const T *gamma, const T *dy, double eps,
                          T *dx, T *dgamma, T *dbeta) {
  double count = double(layout.count());
  for (int64_t c = 0; c < channels; ++c) {
    int64_t base = c * layout.spanLength;
    auto forEach = [&](auto &&fn) { layout.forEach(base, fn); };
    Moments m = moments(x, layout.count(), eps, forEach);
    double sumDy = 0, sumDyXhat = 0;
    forEach([&](int64_t i) {
      sumDy += double(dy[i]);
      sumDyXhat += double(dy[i]) * (double(x[i]) - m.mean) * m.invStd;
    });
    double scale = double(gamma[c]) * m.invStd;
    double meanDy = sumDy / count, meanDyXhat = sumDyXhat / count;
    forEach([&](int64_t i) {
      double xhat = (double(x[i]) - m.mean) * m.invStd;
      dx[i] = T(scale * (double(dy[i]) - meanDy - xhat * meanDyXhat));
    });
    dgamma[c] = T(sumDyXhat);
    dbeta[c] = T(sumDy);
  }
}

template <typename T>
static void layerNorm(int64_t rows, int64_t features, const T *x,
                      const T *gamma, const T *beta, double eps, T *y) {
  for (int64_t r = 0; r < rows; ++r) {
    const T *in = x + r * features;
    T *out = y + r * features;
    Moments m = moments(in, features, eps, [&](auto &&fn) {
      for (int64_t d = 0; d < features; ++d)
        fn(d);
    });
    for (int64_t d = 0; d < features; ++d)
      out[d] = T((double(in[d]) - m.mean) * m.invStd * double(gamma[d]) +
                 double(beta[d]));
  }
}

template <typename T>
static void layerNormGrad(int64_t rows, int64_t features, const T *x,
                          const T *gamma, const T *dy, double eps, T *dx,
                          T *dgamma, T *dbeta) {
  std::vector<double> gammaSums(features, 0.0), betaSums(features, 0.0);
  std::vector<double> xhat(features);
  for (int64_t r = 0; r < rows; ++r) {
    const T *in = x + r * features;
    const T *grad = dy + r * features;
    T *gradIn = dx + r * features;
    Moments m = moments(in, features, eps, [&](auto &&fn) {
      for (int64_t d = 0; d < features; ++d)
        fn(d);
    });
    double sumG = 0, sumGXhat = 0;
    for (int64_t d = 0; d < features; ++d) {
      xhat[d] = (double(in[d]) - m.mean) * m.invStd;
      double g = double(grad[d]) * double(gamma[d]);
      sumG += g;
      sumGXhat += g * xhat[d];
      gammaSums[d] += double(grad[d]) * xhat[d];
      betaSums[d] += double(grad[d]);
    }
    double meanG = sumG / double(features);
    double meanGXhat = sumGXhat / double(features);
    for (int64_t d = 0; d < features; ++d) {
      double g = double(grad[d]) * double(gamma[d]);
      gradIn[d] = T(m.invStd * (g - meanG - xhat[d] * meanGXhat));
    }
  }
  for (int64_t d = 0; d < features; ++d) {
    dgamma[d] = T(gammaSums[d]);
    dbeta[d] = T(betaSums[d]);
  }
}

/// The channel layout of batch_norm's x [N, C, ...].
static ChannelLayout channelLayout(llvm::ArrayRef<int64_t> shape) {
  int64_t spatial = product(shape.drop_front(2));
  return {
      .spans = shape[0], .spanLength = spatial, .stride = shape[1] * spatial};
}

/// Checks the operands (x, gamma, a third) and results of a normalisation
/// against x's dtype and a rank; returns eps.
static absl::StatusOr<double> checkNorm(const KernelContext &ctx,
                                        unsigned minRank) {
  std::string kind = ctx.op().kind().str();
  const Tensor &x = ctx.operand(0);
  llvm::SmallVector<Tensor, 6> others = {ctx.operand(1), ctx.operand(2)};
  for (unsigned i = 0; i < ctx.numResults(); ++i)
    others.push_back(ctx.result(i));
  REMAT_RETURN_IF_ERROR(expectDType(kind, x.dtype(), others));
  if (x.shape().size() < minRank)
    return invalidArgument("'{}' needs x of rank >= {}, got {}", kind, minRank,
                           x.type().str());
  return ctx.signature().getFloat("eps");
}

/// The data of `t` as T, or null when empty.
template <typename T> static T *dataOf(const Tensor &t) {
  return t.numel() == 0 ? nullptr : t.data<T>();
}

static absl::Status runBatchNorm(const KernelContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(double eps, checkNorm(ctx, 2));
  const Tensor &x = ctx.operand(0);
  ChannelLayout layout = channelLayout(x.shape());
  int64_t channels = x.shape()[1];
  return dispatchFloat(x.dtype(), "batch_norm", [&]<typename T>() {
    batchNorm(layout, channels, dataOf<T>(x), dataOf<T>(ctx.operand(1)),
              dataOf<T>(ctx.operand(2)), eps, dataOf<T>(ctx.result(0)),
              dataOf<T>(ctx.result(1)), dataOf<T>(ctx.result(2)));
  });
}

static absl::Status runBatchNormGrad(const KernelContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(double eps, checkNorm(ctx, 2));
  const Tensor &x = ctx.operand(0);
  ChannelLayout layout = channelLayout(x.shape());
  int64_t channels = x.shape()[1];
  return dispatchFloat(x.dtype(), "batch_norm_grad", [&]<typename T>() {
    batchNormGrad(layout, channels, dataOf<T>(x), dataOf<T>(ctx.operand(1)),
                  dataOf<T>(ctx.operand(2)), eps, dataOf<T>(ctx.result(0)),
                  dataOf<T>(ctx.result(1)), dataOf<T>(ctx.result(2)));
  });
}

/// y = (x - mean) * gamma / sqrt(var + eps) + beta, per channel.
template <typename T>
static void batchNormInference(const ChannelLayout &layout, int64_t channels,
                               const T *x, const T *gamma, const T *beta,
                               const T *mean, const T *var, double eps, T *y) {
  for (int64_t c = 0; c < channels; ++c) {
    double scale = double(gamma[c]) / std::sqrt(double(var[c]) + eps);
    double shift = double(beta[c]) - double(mean[c]) * scale;
    layout.forEach(c * layout.spanLength, [&](int64_t i) {
      y[i] = T(double(x[i]) * scale + shift);
    });
  }
}

static absl::Status runBatchNormInference(const KernelContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(double eps, checkNorm(ctx, 2));
  const Tensor &x = ctx.operand(0);
  REMAT_RETURN_IF_ERROR(expectDType("batch_norm_inference", x.dtype(),
                                    {ctx.operand(3), ctx.operand(4)}));
  ChannelLayout layout = channelLayout(x.shape());
  int64_t channels = x.shape()[1];
  return dispatchFloat(x.dtype(), "batch_norm_inference", [&]<typename T>() {
    batchNormInference(layout, channels, dataOf<T>(x), dataOf<T>(ctx.operand(1)),
                       dataOf<T>(ctx.operand(2)), dataOf<T>(ctx.operand(3)),
                       dataOf<T>(ctx.operand(4)), eps, dataOf<T>(ctx.result()));
  });
}

static absl::Status runLayerNorm(const KernelContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(double eps, checkNorm(ctx, 1));
  const Tensor &x = ctx.operand(0);
  int64_t features = x.shape().back();
  int64_t rows = product(x.shape().drop_back());
  return dispatchFloat(x.dtype(), "layer_norm", [&]<typename T>() {
    if (x.numel() != 0)
      layerNorm(rows, features, dataOf<T>(x), dataOf<T>(ctx.operand(1)),
                dataOf<T>(ctx.operand(2)), eps, dataOf<T>(ctx.result()));
  });
}

static absl::Status runLayerNormGrad(const KernelContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(double eps, checkNorm(ctx, 1));
  const Tensor &x = ctx.operand(0);
  int64_t features = x.shape().back();
  int64_t rows = product(x.shape().drop_back());
  return dispatchFloat(x.dtype(), "layer_norm_grad", [&]<typename T>() {
    layerNormGrad(rows, features, dataOf<T>(x), dataOf<T>(ctx.operand(1)),
                  dataOf<T>(ctx.operand(2)), eps, dataOf<T>(ctx.result(0)),
                  dataOf<T>(ctx.result(1)), dataOf<T>(ctx.result(2)));
  });
}

void registerNormalizationKernels(OpRegistry &registry) {
  registry.setKernel("batch_norm", {runBatchNorm});
  registry.setKernel("batch_norm_inference", {runBatchNormInference});
  registry.setKernel("layer_norm", {runLayerNorm});
  registry.setKernel("batch_norm_grad", {runBatchNormGrad});
  registry.setKernel("layer_norm_grad", {runLayerNormGrad});
}

} // namespace remat

//===- Elementwise.cpp - Kernels of the Elementwise family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Unary maps, numpy-broadcasting binary maps and the backward ops of the
/// nonlinearities. Float math runs in the tensor's own dtype (f32 stays f32).
/// Integer arithmetic wraps, and division by zero gives 0 (KernelUtils.h);
/// integer pow with a negative exponent is 1 / a^|b| truncated (0 unless
/// |a| = 1, and 0 for a = 0).
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>
#include <numbers>

namespace remat {
using namespace kernels;

namespace {

/// y[i] = f(x[i]) over same-shaped dense tensors.
template <typename T, typename F>
void unaryMap(const Tensor &x, const Tensor &y, F f) {
  const T *in = x.data<T>();
  T *out = y.data<T>();
  for (int64_t i = 0, n = y.numel(); i < n; ++i)
    out[i] = f(in[i]);
}

/// y = f(a, b) with a and b numpy-broadcast to y's shape.
template <typename T, typename F>
void binaryMap(const Tensor &a, const Tensor &b, const Tensor &y, F f) {
  const T *pa = a.data<T>();
  const T *pb = b.data<T>();
  T *py = y.data<T>();
  if (a.shape() == y.shape() && b.shape() == y.shape()) {
    for (int64_t i = 0, n = y.numel(); i < n; ++i)
      py[i] = f(pa[i], pb[i]);
    return;
  }
  Dims sa = broadcastStrides(a.shape(), y.shape());
  Dims sb = broadcastStrides(b.shape(), y.shape());
  Dims sy = rowMajorStrides(y.shape());
  forEachRow<3>(
      y.shape(), {sa, sb, sy}, {0, 0, 0},
      [&](std::array<int64_t, 3> offsets, int64_t n,
          std::array<int64_t, 3> strides) {
        const T *ra = pa + offsets[0];
        const T *rb = pb + offsets[1];
        T *ry = py + offsets[2];
        // y's innermost stride is always 1; specialise the common patterns
        // so that the loops vectorise.
        if (strides[0] == 1 && strides[1] == 1) {
          for (int64_t i = 0; i < n; ++i)
            ry[i] = f(ra[i], rb[i]);
        } else if (strides[0] == 1 && strides[1] == 0) {
          T vb = *rb;
          for (int64_t i = 0; i < n; ++i)
            ry[i] = f(ra[i], vb);
        } else if (strides[0] == 0 && strides[1] == 1) {
          T va = *ra;
          for (int64_t i = 0; i < n; ++i)
            ry[i] = f(va, rb[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            ry[i] = f(ra[i * strides[0]], rb[i * strides[1]]);
        }
      });
}

template <typename T> T integerPow(T base, T exponent) {
  if (exponent < 0) {
    if (base == 1)
      return 1;
    if (base == -1)
      return (exponent & 1) ? T(-1) : T(1);
    return 0;
  }
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1)
      result = wrapMul(result, base);
    exponent >>= 1;
    if (exponent > 0)
      base = wrapMul(base, base);
  }
  return result;
}

template <typename T> T relu(T x) {
  if constexpr (std::is_integral_v<T>)
    return x > 0 ? x : T(0);
  else
    return x < 0 ? T(0) : x; // NaN passes through.
}

template <typename T> T sigmoid(T x) {
  // Never exponentiates a large positive number.
  if (x >= 0)
    return T(1) / (T(1) + std::exp(-x));
  T e = std::exp(x);
  return e / (T(1) + e);
}

template <typename T> T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(std::numbers::sqrt2 / 2)));
}

/// d gelu / dx = Phi(x) + x * phi(x).
template <typename T> T geluDerivative(T x) {
  T cdf = T(0.5) * (T(1) + std::erf(x * T(std::numbers::sqrt2 / 2)));
  T pdf = std::exp(T(-0.5) * x * x) *
          T(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  return cdf + x * pdf;
}

/// The kernel of a unary op on the dtypes `Dispatch` accepts; `MakeF` turns
/// a type tag into the map.
template <bool FloatOnly, typename MakeF> Kernel unaryKernel(MakeF makeF) {
  return {[makeF](const KernelContext &ctx) -> absl::Status {
    const Tensor &x = ctx.operand(0);
    const Tensor &y = ctx.result();
    REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
    auto body = [&]<typename T>() { unaryMap<T>(x, y, makeF(T())); };
    if constexpr (FloatOnly)
      return dispatchFloat(x.dtype(), ctx.op().kind(), body);
    else
      return dispatchNumeric(x.dtype(), ctx.op().kind(), body);
  }};
}

template <bool FloatOnly, typename MakeF> Kernel binaryKernel(MakeF makeF) {
  return {[makeF](const KernelContext &ctx) -> absl::Status {
    const Tensor &a = ctx.operand(0);
    const Tensor &b = ctx.operand(1);
    const Tensor &y = ctx.result();
    REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), a.dtype(), {b, y}));
    auto body = [&]<typename T>() { binaryMap<T>(a, b, y, makeF(T())); };
    if constexpr (FloatOnly)
      return dispatchFloat(a.dtype(), ctx.op().kind(), body);
    else
      return dispatchNumeric(a.dtype(), ctx.op().kind(), body);
  }};
}

/// clip (`Grad` false) or clip_grad: operand 0 is x, and for clip_grad
/// operand 1 is dy.
template <bool Grad> Kernel clipKernel() {
  return {[](const KernelContext &ctx) -> absl::Status {
    const Tensor &x = ctx.operand(0);
    const Tensor &y = ctx.result();
    REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
    double min = ctx.signature().getFloat("min");
    double max = ctx.signature().getFloat("max");
    return dispatchFloat(x.dtype(), ctx.op().kind(), [&]<typename T>() {
      T lo = T(min), hi = T(max);
      if constexpr (Grad)
        binaryMap<T>(x, ctx.operand(1), y, [lo, hi](T v, T dy) {
          return v > lo && v < hi ? dy : T(0);
        });
      else
        unaryMap<T>(x, y, [lo, hi](T v) { return std::min(std::max(v, lo), hi); });
    });
  }};
}

} // namespace

void registerElementwiseKernels(OpRegistry &registry) {
  // Every numeric dtype.
  registry.setKernel("neg", unaryKernel<false>([]<typename T>(T) {
                       return [](T x) { return wrapNeg(x); };
                     }));
  registry.setKernel("relu", unaryKernel<false>([]<typename T>(T) {
                       return [](T x) { return relu(x); };
                     }));
  registry.setKernel("square", unaryKernel<false>([]<typename T>(T) {
                       return [](T x) { return wrapMul(x, x); };
                     }));

  // Float dtypes only.
  registry.setKernel("exp", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return std::exp(x); };
                     }));
  registry.setKernel("log", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return std::log(x); };
                     }));
  registry.setKernel("tanh", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return std::tanh(x); };
                     }));
  registry.setKernel("sigmoid", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return sigmoid(x); };
                     }));
  registry.setKernel("gelu", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return gelu(x); };
                     }));
  registry.setKernel("sqrt", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return std::sqrt(x); };
                     }));
  registry.setKernel("sin", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return std::sin(x); };
                     }));
  registry.setKernel("cos", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return std::cos(x); };
                     }));

  registry.setKernel("erf", unaryKernel<true>([]<typename T>(T) {
                       return [](T x) { return std::erf(x); };
                     }));
  registry.setKernel("clip", clipKernel<false>());
  registry.setKernel("clip_grad", clipKernel<true>());

  registry.setKernel("add", binaryKernel<false>([]<typename T>(T) {
                       return [](T a, T b) { return wrapAdd(a, b); };
                     }));
  registry.setKernel("sub", binaryKernel<false>([]<typename T>(T) {
                       return [](T a, T b) { return wrapSub(a, b); };
                     }));
  registry.setKernel("mul", binaryKernel<false>([]<typename T>(T) {
                       return [](T a, T b) { return wrapMul(a, b); };
                     }));
  registry.setKernel("div", binaryKernel<false>([]<typename T>(T) {
                       return [](T a, T b) { return safeDiv(a, b); };
                     }));
  registry.setKernel("pow", binaryKernel<false>([]<typename T>(T) {
                       return [](T a, T b) -> T {
                         if constexpr (std::is_integral_v<T>)
                           return integerPow(a, b);
                         else
                           return std::pow(a, b);
                       };
                     }));

  // Backward ops: operand 0 is the forward's x or y, operand 1 is dy.
  registry.setKernel("relu_grad", binaryKernel<true>([]<typename T>(T) {
                       return [](T y, T dy) { return y > 0 ? dy : T(0); };
                     }));
  registry.setKernel("gelu_grad", binaryKernel<true>([]<typename T>(T) {
                       return [](T x, T dy) { return dy * geluDerivative(x); };
                     }));
  registry.setKernel("sigmoid_grad", binaryKernel<true>([]<typename T>(T) {
                       return [](T y, T dy) { return dy * y * (T(1) - y); };
                     }));
  registry.setKernel("tanh_grad", binaryKernel<true>([]<typename T>(T) {
                       return [](T y, T dy) { return dy * (T(1) - y * y); };
                     }));
}

} // namespace remat

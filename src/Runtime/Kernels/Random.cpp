//===- Random.cpp - Kernels of the Random family ---------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// dropout: y[i] = keep(i) ? x[i] * scale : 0 with keep(i) =
/// dropoutKeeps(seed, i, rate) and scale = T(1) / T(1 - rate), so that f32 and
/// f64 runs, and the gradient (a dropout of dy with the same seed and rate),
/// share the mask and the scaling.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "remat/Runtime/Random.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace remat {
using namespace kernels;

static absl::Status dropout(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
  double rate = ctx.signature().getFloat("rate");
  uint64_t seed = uint64_t(ctx.signature().getInt("seed"));
  uint64_t threshold = dropoutThreshold(rate);
  // A threshold of 2^32 (rate rounding to 1) keeps nothing; below it, compare
  // in 32 bits so that the select vectorises.
  bool keepNone = threshold > UINT32_MAX;
  uint32_t threshold32 = keepNone ? 0 : uint32_t(threshold);
  return dispatchFloat(x.dtype(), ctx.op().kind(), [&]<typename T>() {
    const T *px = x.data<T>();
    T *py = y.data<T>();
    T scale = T(1) / T(1 - rate);
    int64_t n = x.numel();
    constexpr int64_t kChunk = 4096;
    std::array<uint32_t, kChunk> bits;
    for (int64_t start = 0; start < n; start += kChunk) {
      int64_t count = std::min(kChunk, n - start);
      fillRandomBits(seed, uint64_t(start),
                     llvm::MutableArrayRef<uint32_t>(bits.data(), count));
      for (int64_t j = 0; j < count; ++j)
        py[start + j] =
            !keepNone && bits[j] >= threshold32 ? px[start + j] * scale : T(0);
    }
  });
}

void registerRandomKernels(OpRegistry &registry) {
  registry.setKernel("dropout", {dropout});
}

} // namespace remat

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
/// share the mask and the scaling. Draws four mask bits per Philox call.
///
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "remat/Runtime/Random.h"

namespace remat {
using namespace kernels;

static absl::Status dropout(const KernelContext &ctx) {
  const Tensor &x = ctx.operand(0);
  const Tensor &y = ctx.result();
  REMAT_RETURN_IF_ERROR(expectDType(ctx.op().kind(), x.dtype(), {y}));
  double rate = ctx.signature().getFloat("rate");
  uint64_t seed = uint64_t(ctx.signature().getInt("seed"));
  uint64_t threshold = dropoutThreshold(rate);
  return dispatchFloat(x.dtype(), ctx.op().kind(), [&]<typename T>() {
    const T *px = x.data<T>();
    T *py = y.data<T>();
    T scale = T(1) / T(1 - rate);
    int64_t n = x.numel();
    for (int64_t block = 0; block * 4 < n; ++block) {
      std::array<uint32_t, 4> bits = randomBlock(seed, uint64_t(block));
      int64_t end = std::min<int64_t>(4, n - block * 4);
      for (int64_t w = 0; w < end; ++w) {
        int64_t i = block * 4 + w;
        py[i] = bits[w] >= threshold ? px[i] * scale : T(0);
      }
    }
  });
}

void registerRandomKernels(OpRegistry &registry) {
  registry.setKernel("dropout", {dropout});
}

} // namespace remat

//===- Pooling.cpp - Spatial pooling and upsampling -------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Window pooling over NCHW images (max_pool2d, avg_pool2d), global average
/// pooling to [N, C], and nearest-neighbour upsampling. Window output sizes
/// follow conv2d with dilation 1. A window must overlap the input (padding
/// smaller than the kernel), so no max is taken over padding alone and no
/// average divides by zero.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

#include "llvm/Support/MathExtras.h"

namespace remat {
using namespace ops;

/// The window settings of a pooling op, validated.
namespace {
struct PoolWindow {
  std::array<int64_t, 2> kernel, strides, padding;
};
} // namespace

static absl::StatusOr<PoolWindow> poolWindow(const OpSignature &sig) {
  PoolWindow window;
  REMAT_ASSIGN_OR_RETURN(window.kernel, intPairAttr(sig, "kernel", 1));
  if (sig.getIntList("strides").empty()) {
    window.strides = window.kernel;
  } else {
    REMAT_ASSIGN_OR_RETURN(window.strides, intPairAttr(sig, "strides", 1));
  }
  REMAT_ASSIGN_OR_RETURN(window.padding, intPairAttr(sig, "padding", 0));
  for (unsigned i = 0; i < 2; ++i)
    if (window.padding[i] >= window.kernel[i])
      return invalidArgument(
          "'{}' padding {} must be smaller than kernel {}: a window would "
          "cover only padding",
          sig.def().name, formatShape(window.padding),
          formatShape(window.kernel));
  return window;
}

static absl::StatusOr<TypeList> inferPool2d(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectRank(sig, 0, 4));
  if (sig.def().name == "avg_pool2d")
    REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  REMAT_ASSIGN_OR_RETURN(PoolWindow window, poolWindow(sig));
  const Type &x = sig.operand(0);
  REMAT_ASSIGN_OR_RETURN(
      int64_t ho, windowOutputSize(sig, "height", x.dim(2), window.kernel[0],
                                   window.strides[0], window.padding[0], 1));
  REMAT_ASSIGN_OR_RETURN(
      int64_t wo, windowOutputSize(sig, "width", x.dim(3), window.kernel[1],
                                   window.strides[1], window.padding[1], 1));
  return TypeList{Type(x.dtype(), {x.dim(0), x.dim(1), ho, wo})};
}

/// kh * kw per output element: one compare or add per window position.
static int64_t pool2dFlops(const OpSignature &sig, llvm::ArrayRef<Type> results) {
  llvm::ArrayRef<int64_t> kernel = sig.getIntList("kernel");
  return saturatingMul(saturatingMul(kernel[0], kernel[1]),
                       results[0].numElements());
}

static absl::StatusOr<TypeList> inferGlobalAvgPool(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectRank(sig, 0, 4));
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  const Type &x = sig.operand(0);
  return TypeList{Type(x.dtype(), {x.dim(0), x.dim(1)})};
}

static absl::StatusOr<TypeList> inferUpsampleNearest(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectRank(sig, 0, 4));
  const Type &x = sig.operand(0);
  int64_t scale = sig.getInt("scale");
  if (scale < 1)
    return invalidArgument("'upsample_nearest' scale must be >= 1, got {}",
                           scale);
  int64_t h, w;
  if (llvm::MulOverflow(x.dim(2), scale, h) ||
      llvm::MulOverflow(x.dim(3), scale, w))
    return invalidArgument(
        "'upsample_nearest' of {} by scale {} overflows int64 dims", x.str(),
        scale);
  return TypeList{Type(x.dtype(), {x.dim(0), x.dim(1), h, w})};
}

void registerPoolingOps(OpRegistry &registry) {
  std::vector<AttrSpec> windowAttrs = {
      {"kernel", AttrKind::IntList, std::nullopt},
      {"strides", AttrKind::IntList, Attribute({})},
      {"padding", AttrKind::IntList, Attribute({0, 0})}};
  registry.add(
      {.name = "max_pool2d",
       .summary = "Max over [kh, kw] windows of x [N, C, H, W] {kernel: [kh, "
                  "kw], strides = [] (= kernel), padding = [0, 0] (symmetric, "
                  "< kernel)}; result [N, C, Ho, Wo] sized as conv2d.",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = windowAttrs,
       .inferTypes = inferPool2d,
       .flops = pool2dFlops});
  registry.add(
      {.name = "avg_pool2d",
       .summary = "Mean over [kh, kw] windows of float x [N, C, H, W], padding "
                  "excluded from the divisor {kernel: [kh, kw], strides = [] (= "
                  "kernel), padding = [0, 0] (symmetric, < kernel)}; result [N, "
                  "C, Ho, Wo] sized as conv2d.",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = windowAttrs,
       .inferTypes = inferPool2d,
       .flops = pool2dFlops});
  registry.add(
      {.name = "global_avg_pool",
       .summary = "Mean over H and W of float x [N, C, H, W]; result [N, C].",
       .minOperands = 1,
       .maxOperands = 1,
       .inferTypes = inferGlobalAvgPool,
       .flops = flopsPerOperandElement(0, 1)});
  registry.add(
      {.name = "upsample_nearest",
       .summary = "Nearest-neighbour upsampling of x [N, C, H, W] {scale = 2}; "
                  "result [N, C, H*scale, W*scale].",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = {{"scale", AttrKind::Int, Attribute(2)}},
       .inferTypes = inferUpsampleNearest,
       .flops = zeroFlops});
}

} // namespace remat

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
/// average divides by zero. The backward ops max_pool2d_grad and
/// avg_pool2d_grad take the forward's window attributes and route dy back to
/// the input, at the forward's cost.
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

/// The pooled type of `x` under the window attributes of `sig`.
static absl::StatusOr<Type> pool2dResultType(const OpSignature &sig,
                                             const Type &x) {
  REMAT_ASSIGN_OR_RETURN(PoolWindow window, poolWindow(sig));
  REMAT_ASSIGN_OR_RETURN(
      int64_t ho, windowOutputSize(sig, "height", x.dim(2), window.kernel[0],
                                   window.strides[0], window.padding[0], 1));
  REMAT_ASSIGN_OR_RETURN(
      int64_t wo, windowOutputSize(sig, "width", x.dim(3), window.kernel[1],
                                   window.strides[1], window.padding[1], 1));
  return Type(x.dtype(), {x.dim(0), x.dim(1), ho, wo});
}

static absl::StatusOr<TypeList> inferPool2d(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectRank(sig, 0, 4));
  if (sig.def().name == "avg_pool2d")
    REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  REMAT_ASSIGN_OR_RETURN(Type result, pool2dResultType(sig, sig.operand(0)));
  return TypeList{result};
}

/// Fails unless `dy` has the pooled type of `x`.
static absl::Status expectPoolResult(const OpSignature &sig, const Type &x,
                                     const Type &dy) {
  REMAT_ASSIGN_OR_RETURN(Type expected, pool2dResultType(sig, x));
  if (dy == expected)
    return absl::OkStatus();
  return invalidArgument("'{}' dy {} must have the pooled type of x {}, {}",
                         sig.def().name, dy.str(), x.str(), expected.str());
}

/// max_pool2d_grad(x, dy): result x's type.
static absl::StatusOr<TypeList> inferMaxPool2dGrad(const OpSignature &sig) {
  for (unsigned i = 0; i < 2; ++i) {
    REMAT_RETURN_IF_ERROR(expectRank(sig, i, 4));
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
  }
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  REMAT_RETURN_IF_ERROR(
      expectPoolResult(sig, sig.operand(0), sig.operand(1)));
  return TypeList{sig.operand(0)};
}

/// avg_pool2d_grad(dy) {input_shape}: result input_shape (dy's dtype).
static absl::StatusOr<TypeList> inferAvgPool2dGrad(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectRank(sig, 0, 4));
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  const Type &dy = sig.operand(0);
  llvm::ArrayRef<int64_t> shape = sig.getIntList("input_shape");
  if (shape.size() != 4)
    return invalidArgument("'avg_pool2d_grad' input_shape must have 4 entries "
                           "[N, C, H, W], got {}",
                           formatShape(shape));
  for (int64_t d : shape)
    if (d < 0)
      return invalidArgument("'avg_pool2d_grad' input_shape {} has negative "
                             "entry {}",
                             formatShape(shape), d);
  Type x(dy.dtype(), shape);
  REMAT_RETURN_IF_ERROR(expectPoolResult(sig, x, dy));
  return TypeList{x};
}

/// kh * kw per element of dy: one compare or add per window position.
static int64_t pool2dGradFlops(const OpSignature &sig, llvm::ArrayRef<Type>) {
  llvm::ArrayRef<int64_t> kernel = sig.getIntList("kernel");
  const Type &dy = sig.operand(sig.numOperands() - 1);
  return saturatingMul(saturatingMul(kernel[0], kernel[1]), dy.numElements());
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
  registry.add(
      {.name = "max_pool2d_grad",
       .summary = "Backward of max_pool2d from float x and dy {max_pool2d's "
                  "attributes}: each window's dy goes to its first maximal "
                  "element in row-major order, summed over overlapping "
                  "windows; result x's type.",
       .minOperands = 2,
       .maxOperands = 2,
       .attrs = windowAttrs,
       .inferTypes = inferMaxPool2dGrad,
       .flops = pool2dGradFlops});
  std::vector<AttrSpec> avgGradAttrs = windowAttrs;
  avgGradAttrs.push_back({"input_shape", AttrKind::IntList, std::nullopt});
  registry.add(
      {.name = "avg_pool2d_grad",
       .summary = "Backward of avg_pool2d from dy {avg_pool2d's attributes, "
                  "input_shape: [N, C, H, W]}: each window's dy divided by its "
                  "non-padding count, added to each of those elements; result "
                  "input_shape (dy's dtype).",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = avgGradAttrs,
       .inferTypes = inferAvgPool2dGrad,
       .flops = pool2dGradFlops});
}

} // namespace remat

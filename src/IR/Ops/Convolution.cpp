//===- Convolution.cpp - 2-D convolution ------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `conv2d` over NCHW images with [Cout, Cin/groups, kh, kw] weights, with
/// strides, symmetric padding, dilation and grouped (depthwise) convolution.
/// Like matmul it is Expensive: recomputing it costs two FLOPs per
/// multiply-add of every output element's window.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

static absl::StatusOr<TypeList> inferConv2d(const OpSignature &sig) {
  for (unsigned i = 0; i < 2; ++i) {
    REMAT_RETURN_IF_ERROR(expectRank(sig, i, 4));
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
  }
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  REMAT_ASSIGN_OR_RETURN(auto strides, intPairAttr(sig, "strides", 1));
  REMAT_ASSIGN_OR_RETURN(auto padding, intPairAttr(sig, "padding", 0));
  REMAT_ASSIGN_OR_RETURN(auto dilation, intPairAttr(sig, "dilation", 1));
  const Type &x = sig.operand(0);
  const Type &w = sig.operand(1);
  int64_t groups = sig.getInt("groups");
  if (groups < 1)
    return invalidArgument("'conv2d' groups must be >= 1, got {}", groups);
  int64_t cin = x.dim(1);
  int64_t cout = w.dim(0);
  if (cin % groups != 0)
    return invalidArgument(
        "'conv2d' input channels {} of x {} are not divisible by groups {}", cin,
        x.str(), groups);
  if (cout % groups != 0)
    return invalidArgument(
        "'conv2d' output channels {} of w {} are not divisible by groups {}",
        cout, w.str(), groups);
  if (w.dim(1) != cin / groups)
    return invalidArgument(
        "'conv2d' w {} has {} input channels per group, but x {} with groups {} "
        "needs {}",
        w.str(), w.dim(1), x.str(), groups, cin / groups);
  int64_t kh = w.dim(2);
  int64_t kw = w.dim(3);
  if (kh < 1 || kw < 1)
    return invalidArgument("'conv2d' kernel of w {} must be at least 1x1",
                           w.str());
  REMAT_ASSIGN_OR_RETURN(int64_t ho,
                         windowOutputSize(sig, "height", x.dim(2), kh,
                                          strides[0], padding[0], dilation[0]));
  REMAT_ASSIGN_OR_RETURN(int64_t wo,
                         windowOutputSize(sig, "width", x.dim(3), kw,
                                          strides[1], padding[1], dilation[1]));
  return TypeList{Type(x.dtype(), {x.dim(0), cout, ho, wo})};
}

/// 2 * N*Cout*Ho*Wo * (Cin/groups)*kh*kw: every output element is a dot
/// product over its window in one group's input channels.
static int64_t conv2dFlops(const OpSignature &sig, llvm::ArrayRef<Type> results) {
  const Type &w = sig.operand(1);
  int64_t window = saturatingMul(saturatingMul(w.dim(1), w.dim(2)), w.dim(3));
  return saturatingMul(saturatingMul(2, results[0].numElements()), window);
}

void registerConvolutionOps(OpRegistry &registry) {
  registry.add(
      {.name = "conv2d",
       .summary = "2-D convolution of float x [N, Cin, H, W] with w [Cout, "
                  "Cin/groups, kh, kw] {strides = [1, 1], padding = [0, 0] "
                  "(symmetric), dilation = [1, 1], groups = 1}; result [N, Cout, "
                  "Ho, Wo] with Ho = (H + 2ph - dh(kh-1) - 1) / sh + 1.",
       .minOperands = 2,
       .maxOperands = 2,
       .attrs = {{"strides", AttrKind::IntList, Attribute({1, 1})},
                 {"padding", AttrKind::IntList, Attribute({0, 0})},
                 {"dilation", AttrKind::IntList, Attribute({1, 1})},
                 {"groups", AttrKind::Int, Attribute(1)}},
       .inferTypes = inferConv2d,
       .flops = conv2dFlops,
       .flags = OpFlagExpensive});
}

} // namespace remat

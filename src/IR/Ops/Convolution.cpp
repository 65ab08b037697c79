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
/// multiply-add of every output element's window. Its backward ops
/// conv2d_grad_input and conv2d_grad_filter take the same window attributes
/// plus the shape of the operand they differentiate, and cost the same.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

/// The conv2d result type for input `x` and weights `w` under the window
/// attributes of `sig`, which may be conv2d's or one of its backward ops'.
static absl::StatusOr<Type> conv2dResultType(const OpSignature &sig,
                                             const Type &x, const Type &w) {
  llvm::StringRef name = sig.def().name;
  REMAT_ASSIGN_OR_RETURN(auto strides, intPairAttr(sig, "strides", 1));
  REMAT_ASSIGN_OR_RETURN(auto padding, intPairAttr(sig, "padding", 0));
  REMAT_ASSIGN_OR_RETURN(auto dilation, intPairAttr(sig, "dilation", 1));
  int64_t groups = sig.getInt("groups");
  if (groups < 1)
    return invalidArgument("'{}' groups must be >= 1, got {}", name.str(),
                           groups);
  int64_t cin = x.dim(1);
  int64_t cout = w.dim(0);
  if (cin % groups != 0)
    return invalidArgument(
        "'{}' input channels {} of x {} are not divisible by groups {}",
        name.str(), cin, x.str(), groups);
  if (cout % groups != 0)
    return invalidArgument(
        "'{}' output channels {} of w {} are not divisible by groups {}",
        name.str(), cout, w.str(), groups);
  if (w.dim(1) != cin / groups)
    return invalidArgument(
        "'{}' w {} has {} input channels per group, but x {} with groups {} "
        "needs {}",
        name.str(), w.str(), w.dim(1), x.str(), groups, cin / groups);
  int64_t kh = w.dim(2);
  int64_t kw = w.dim(3);
  if (kh < 1 || kw < 1)
    return invalidArgument("'{}' kernel of w {} must be at least 1x1",
                           name.str(), w.str());
  REMAT_ASSIGN_OR_RETURN(int64_t ho,
                         windowOutputSize(sig, "height", x.dim(2), kh,
                                          strides[0], padding[0], dilation[0]));
  REMAT_ASSIGN_OR_RETURN(int64_t wo,
                         windowOutputSize(sig, "width", x.dim(3), kw,
                                          strides[1], padding[1], dilation[1]));
  return Type(x.dtype(), {x.dim(0), cout, ho, wo});
}

static absl::StatusOr<TypeList> inferConv2d(const OpSignature &sig) {
  for (unsigned i = 0; i < 2; ++i) {
    REMAT_RETURN_IF_ERROR(expectRank(sig, i, 4));
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
  }
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  REMAT_ASSIGN_OR_RETURN(Type result,
                         conv2dResultType(sig, sig.operand(0), sig.operand(1)));
  return TypeList{result};
}

/// The type named by the 4-entry int-list attribute `name` (input_shape,
/// filter_shape) with `dtype`.
static absl::StatusOr<Type> shapeAttrType(const OpSignature &sig,
                                          llvm::StringRef name, DType dtype) {
  llvm::ArrayRef<int64_t> shape = sig.getIntList(name);
  if (shape.size() != 4)
    return invalidArgument("'{}' {} must have 4 entries, got {}",
                           sig.def().name, name.str(), formatShape(shape));
  for (int64_t d : shape)
    if (d < 0)
      return invalidArgument("'{}' {} {} has negative entry {}", sig.def().name,
                             name.str(), formatShape(shape), d);
  return Type(dtype, shape);
}

/// Fails unless `dy` has the type of conv2d(x, w).
static absl::Status expectConvResult(const OpSignature &sig, const Type &x,
                                     const Type &w, const Type &dy) {
  REMAT_ASSIGN_OR_RETURN(Type expected, conv2dResultType(sig, x, w));
  if (dy == expected)
    return absl::OkStatus();
  return invalidArgument(
      "'{}' dy {} must have the type of conv2d of x {} with w {}, {}",
      sig.def().name, dy.str(), x.str(), w.str(), expected.str());
}

/// conv2d_grad_input(dy, w) {input_shape}: result f32[input_shape].
static absl::StatusOr<TypeList> inferConv2dGradInput(const OpSignature &sig) {
  for (unsigned i = 0; i < 2; ++i) {
    REMAT_RETURN_IF_ERROR(expectRank(sig, i, 4));
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
  }
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  const Type &dy = sig.operand(0);
  REMAT_ASSIGN_OR_RETURN(Type x,
                         shapeAttrType(sig, "input_shape", dy.dtype()));
  REMAT_RETURN_IF_ERROR(expectConvResult(sig, x, sig.operand(1), dy));
  return TypeList{x};
}

/// conv2d_grad_filter(x, dy) {filter_shape}: result f32[filter_shape].
static absl::StatusOr<TypeList> inferConv2dGradFilter(const OpSignature &sig) {
  for (unsigned i = 0; i < 2; ++i) {
    REMAT_RETURN_IF_ERROR(expectRank(sig, i, 4));
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
  }
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  const Type &x = sig.operand(0);
  REMAT_ASSIGN_OR_RETURN(Type w, shapeAttrType(sig, "filter_shape", x.dtype()));
  REMAT_RETURN_IF_ERROR(expectConvResult(sig, x, w, sig.operand(1)));
  return TypeList{w};
}

/// Both backward ops cost what the forward does: 2 * dy elements * the
/// window (Cin/groups * kh * kw) of the filter.
static int64_t conv2dGradFlops(const OpSignature &sig,
                               llvm::ArrayRef<Type> results) {
  bool gradInput = sig.def().name == "conv2d_grad_input";
  const Type &dy = sig.operand(gradInput ? 0 : 1);
  llvm::ArrayRef<int64_t> w =
      gradInput ? sig.operand(1).shape() : results[0].shape();
  int64_t window = saturatingMul(saturatingMul(w[1], w[2]), w[3]);
  return saturatingMul(saturatingMul(2, dy.numElements()), window);
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
  std::vector<AttrSpec> windowAttrs = {
      {"strides", AttrKind::IntList, Attribute({1, 1})},
      {"padding", AttrKind::IntList, Attribute({0, 0})},
      {"dilation", AttrKind::IntList, Attribute({1, 1})},
      {"groups", AttrKind::Int, Attribute(1)}};
  std::vector<AttrSpec> gradInputAttrs = windowAttrs;
  gradInputAttrs.push_back({"input_shape", AttrKind::IntList, std::nullopt});
  registry.add(
      {.name = "conv2d_grad_input",
       .summary = "Backward of conv2d to its input, from dy [N, Cout, Ho, Wo] "
                  "and w {conv2d's window attributes, input_shape: [N, Cin, H, "
                  "W]}; result input_shape (dy's dtype).",
       .minOperands = 2,
       .maxOperands = 2,
       .attrs = gradInputAttrs,
       .inferTypes = inferConv2dGradInput,
       .flops = conv2dGradFlops,
       .flags = OpFlagExpensive});
  std::vector<AttrSpec> gradFilterAttrs = windowAttrs;
  gradFilterAttrs.push_back({"filter_shape", AttrKind::IntList, std::nullopt});
  registry.add(
      {.name = "conv2d_grad_filter",
       .summary = "Backward of conv2d to its weights, from x and dy [N, Cout, "
                  "Ho, Wo] {conv2d's window attributes, filter_shape: [Cout, "
                  "Cin/groups, kh, kw]}; result filter_shape (x's dtype).",
       .minOperands = 2,
       .maxOperands = 2,
       .attrs = gradFilterAttrs,
       .inferTypes = inferConv2dGradFilter,
       .flops = conv2dGradFlops,
       .flags = OpFlagExpensive});
}

} // namespace remat

//===- ConvertNeural.cpp - ONNX convolution, pooling, matmul, softmax -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Conv (2-D, with groups, strides, dilations; asymmetric pads become a pad
/// op), MaxPool, AveragePool, GlobalAveragePool, Gemm, MatMul, Softmax,
/// LogSoftmax and Dropout.
///
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "llvm/ADT/STLExtras.h"

namespace remat::onnximport {
namespace {

/// The 2-D window attributes of Conv and the pools, with pads split into
/// their leading and trailing halves.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, low, high;
  bool symmetric() const { return low == high; }
};

/// Reads kernel_shape (or `weightShape`'s spatial dims), strides, dilations
/// and pads/auto_pad for input spatial dims `spatial`.
absl::StatusOr<Window> readWindow(ImportContext &ctx,
                                  llvm::ArrayRef<int64_t> spatial,
                                  llvm::ArrayRef<int64_t> weightKernel) {
  Window w;
  REMAT_ASSIGN_OR_RETURN(w.kernel, ctx.intsAttr("kernel_shape", weightKernel));
  if (w.kernel.size() != 2 || spatial.size() != 2)
    return ctx.error("only 2-D windows are supported, got kernel_shape of "
                     "rank {} on an input with {} spatial dims",
                     w.kernel.size(), spatial.size());
  REMAT_ASSIGN_OR_RETURN(w.strides, ctx.intsAttr("strides", {1, 1}));
  REMAT_ASSIGN_OR_RETURN(w.dilations, ctx.intsAttr("dilations", {1, 1}));
  REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> pads,
                         ctx.intsAttr("pads", {0, 0, 0, 0}));
  REMAT_ASSIGN_OR_RETURN(std::string autoPad,
                         ctx.stringAttr("auto_pad", "NOTSET"));
  if (w.strides.size() != 2 || w.dilations.size() != 2 || pads.size() != 4)
    return ctx.error("strides, dilations and pads must have 2, 2 and 4 "
                     "entries");
  for (int i = 0; i < 2; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 ||
        pads[i] < 0 || pads[i + 2] < 0)
      return ctx.error("kernel_shape, strides and dilations must be positive "
                       "and pads non-negative");
  if (autoPad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + extent - spatial[i]);
      int64_t small = total / 2, large = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : large;
      pads[i + 2] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET") {
    return ctx.error("auto_pad '{}' is not supported", autoPad);
  }
  w.low = {pads[0], pads[1]};
  w.high = {pads[2], pads[3]};
  return w;
}

absl::Status convertConv(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  REMAT_ASSIGN_OR_RETURN(Value * w, ctx.input(1));
  const Type &xt = x->type();
  if (xt.rank() != 4 || w->type().rank() != 4)
    return ctx.error("only 2-D convolutions (input rank 4) are supported, got "
                     "input {} and weight {}",
                     xt.str(), w->type().str());
  REMAT_ASSIGN_OR_RETURN(
      Window window,
      readWindow(ctx, xt.shape().drop_front(2), w->type().shape().drop_front(2)));
  if (window.kernel != std::vector<int64_t>(w->type().shape().drop_front(2)))
    return ctx.error("kernel_shape does not match the weight {}",
                     w->type().str());
  REMAT_ASSIGN_OR_RETURN(int64_t groups, ctx.intAttr("group", 1));
  std::vector<int64_t> padding = window.low;
  if (!window.symmetric()) {
    REMAT_ASSIGN_OR_RETURN(
        x, ctx.op("pad", {x},
                  {{"low", Attribute({0, 0, window.low[0], window.low[1]})},
                   {"high", Attribute({0, 0, window.high[0], window.high[1]})}}));
    padding = {0, 0};
  }
  AttrList attrs = {{"strides", Attribute(window.strides)},
                    {"padding", Attribute(padding)},
                    {"dilation", Attribute(window.dilations)},
                    {"groups", groups}};
  // PyTorch 2's exporter gives a conv without bias a known zero one
  // (Expand of a constant 0), which adds nothing.
  const KnownTensor *knownBias = ctx.maybeKnown(2);
  bool zeroBias = knownBias && knownBias->numel() == w->type().dim(0) &&
                  llvm::all_of(knownBias->floats, [](double v) {
                    return v == 0;
                  }) && llvm::all_of(knownBias->ints, [](int64_t v) {
                    return v == 0;
                  });
  if (!ctx.hasInput(2) || zeroBias)
    return ctx.op("conv2d", {x, w}, std::move(attrs), 0).status();
  REMAT_ASSIGN_OR_RETURN(Value * y, ctx.op("conv2d", {x, w}, std::move(attrs)));
  REMAT_ASSIGN_OR_RETURN(Value * bias,
                         ctx.inputAsShape(2, {w->type().dim(0), 1, 1}));
  return ctx.op("add", {y, bias}, {}, 0).status();
}

template <bool Max> absl::Status convertPool(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  if (x->type().rank() != 4)
    return ctx.error("only 2-D pooling (input rank 4) is supported, got {}",
                     x->type().str());
  if (!ctx.attr("kernel_shape"))
    return ctx.error("attribute 'kernel_shape' is missing");
  REMAT_ASSIGN_OR_RETURN(Window window,
                         readWindow(ctx, x->type().shape().drop_front(2), {}));
  REMAT_ASSIGN_OR_RETURN(int64_t ceilMode, ctx.intAttr("ceil_mode", 0));
  if (ceilMode != 0)
    return ctx.error("ceil_mode {} is not supported (only 0)", ceilMode);
  if (window.dilations != std::vector<int64_t>{1, 1})
    return ctx.error("dilated pooling is not supported");
  if (!window.symmetric())
    return ctx.error("asymmetric pads are not supported in pooling");
  REMAT_ASSIGN_OR_RETURN(int64_t storageOrder, ctx.intAttr("storage_order", 0));
  if (storageOrder != 0)
    return ctx.error("storage_order {} is not supported", storageOrder);
  REMAT_ASSIGN_OR_RETURN(int64_t includePad,
                         ctx.intAttr("count_include_pad", 0));
  if (!Max && includePad != 0 && window.low != std::vector<int64_t>{0, 0})
    return ctx.error("count_include_pad 1 with nonzero pads is not "
                     "supported (remat's avg_pool2d excludes padding)");
  if (Max && ctx.outputUsed(1))
    return ctx.error("the Indices output is not supported");
  return ctx
      .op(Max ? "max_pool2d" : "avg_pool2d", {x},
          {{"kernel", Attribute(window.kernel)},
           {"strides", Attribute(window.strides)},
           {"padding", Attribute(window.low)}},
          0)
      .status();
}

absl::Status convertGlobalAveragePool(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  if (x->type().rank() != 4)
    return ctx.error("only rank-4 inputs are supported, got {}",
                     x->type().str());
  REMAT_ASSIGN_OR_RETURN(Value * pooled, ctx.op("global_avg_pool", {x}));
  std::vector<int64_t> shape = {x->type().dim(0), x->type().dim(1), 1, 1};
  return ctx.op("reshape", {pooled}, {{"shape", Attribute(shape)}}, 0).status();
}

absl::Status convertGemm(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * a, ctx.input(0));
  REMAT_ASSIGN_OR_RETURN(Value * b, ctx.input(1));
  REMAT_ASSIGN_OR_RETURN(int64_t transA, ctx.intAttr("transA", 0));
  REMAT_ASSIGN_OR_RETURN(int64_t transB, ctx.intAttr("transB", 0));
  REMAT_ASSIGN_OR_RETURN(double alpha, ctx.floatAttr("alpha", 1.0));
  REMAT_ASSIGN_OR_RETURN(double beta, ctx.floatAttr("beta", 1.0));
  if (a->type().rank() != 2 || b->type().rank() != 2)
    return ctx.error("operands must be matrices, got {} and {}",
                     a->type().str(), b->type().str());
  bool last = alpha == 1 && !ctx.hasInput(2);
  REMAT_ASSIGN_OR_RETURN(Value * y,
                         ctx.op("matmul", {a, b},
                                {{"transpose_a", transA != 0},
                                 {"transpose_b", transB != 0}},
                                last ? 0 : -1));
  if (alpha != 1) {
    REMAT_ASSIGN_OR_RETURN(Value * s, ctx.scalar(alpha, y->type().dtype()));
    REMAT_ASSIGN_OR_RETURN(y, ctx.op("mul", {y, s}, {}, ctx.hasInput(2) ? -1 : 0));
  }
  if (!ctx.hasInput(2))
    return absl::OkStatus();
  REMAT_ASSIGN_OR_RETURN(Value * c, ctx.input(2));
  if (beta != 1) {
    REMAT_ASSIGN_OR_RETURN(Value * s, ctx.scalar(beta, c->type().dtype()));
    REMAT_ASSIGN_OR_RETURN(c, ctx.op("mul", {c, s}));
  }
  return ctx.op("add", {y, c}, {}, 0).status();
}

/// MatMul's operand `i`, and whether it is the transpose of the value
/// returned (a deferred Transpose, which matmul then transposes itself).
absl::StatusOr<std::pair<Value *, bool>> matmulOperand(ImportContext &ctx,
                                                       int i) {
  llvm::StringRef matrix = ctx.transposedMatrix(i);
  if (matrix.empty()) {
    REMAT_ASSIGN_OR_RETURN(Value * v, ctx.input(i));
    return std::make_pair(v, false);
  }
  REMAT_ASSIGN_OR_RETURN(Value * v, ctx.valueNamed(matrix.str()));
  return std::make_pair(v, true);
}

absl::Status convertMatMul(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(auto operandA, matmulOperand(ctx, 0));
  REMAT_ASSIGN_OR_RETURN(auto operandB, matmulOperand(ctx, 1));
  auto [a, transposeA] = operandA;
  auto [b, transposeB] = operandB;
  if (transposeA || transposeB)
    return ctx
        .op("matmul", {a, b},
            {{"transpose_a", transposeA}, {"transpose_b", transposeB}}, 0)
        .status();
  bool vectorA = a->type().rank() == 1, vectorB = b->type().rank() == 1;
  if (!vectorA && !vectorB)
    return ctx.op("matmul", {a, b}, {}, 0).status();
  // numpy matmul: a vector gains a unit dim for the product and loses it
  // after.
  if (vectorA) {
    REMAT_ASSIGN_OR_RETURN(
        a, ctx.op("reshape", {a},
                  {{"shape", Attribute({1, a->type().dim(0)})}}));
  }
  if (vectorB) {
    REMAT_ASSIGN_OR_RETURN(
        b, ctx.op("reshape", {b},
                  {{"shape", Attribute({b->type().dim(0), 1})}}));
  }
  REMAT_ASSIGN_OR_RETURN(Value * y, ctx.op("matmul", {a, b}));
  std::vector<int64_t> shape(y->type().shape().begin(), y->type().shape().end());
  shape.erase(shape.end() - (vectorB ? 1 : 2));
  if (vectorA && vectorB)
    shape.pop_back();
  return ctx.op("reshape", {y}, {{"shape", Attribute(shape)}}, 0).status();
}

template <bool Log> absl::Status convertSoftmax(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  REMAT_ASSIGN_OR_RETURN(int64_t axis, ctx.intAttr("axis", -1));
  REMAT_ASSIGN_OR_RETURN(axis, normaliseAxis(ctx, axis, x->type().rank()));
  return ctx.op(Log ? "log_softmax" : "softmax", {x}, {{"axis", axis}}, 0)
      .status();
}

/// A seed from the node's output name (FNV-1a), so that the same model
/// imports to the same graph and different dropouts draw different masks.
int64_t seedOf(llvm::StringRef name) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : name)
    hash = (hash ^ c) * 1099511628211ull;
  return int64_t(hash >> 1);
}

absl::Status convertDropout(ImportContext &ctx) {
  if (ctx.outputUsed(1))
    return ctx.error("the mask output is not supported");
  double ratio = 0.5;
  if (ctx.hasInput(1)) {
    REMAT_ASSIGN_OR_RETURN(KnownTensor r, ctx.knownInput(1, "ratio"));
    if (r.numel() != 1)
      return ctx.error("ratio must be a scalar");
    ratio = r.at(0);
  }
  bool training = false;
  if (ctx.hasInput(2)) {
    REMAT_ASSIGN_OR_RETURN(KnownTensor t, ctx.knownInput(2, "training_mode"));
    if (t.numel() != 1)
      return ctx.error("training_mode must be a scalar");
    training = t.at(0) != 0;
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  if (!training || ratio == 0) {
    ctx.define(0, x);
    return absl::OkStatus();
  }
  if (!(ratio > 0 && ratio < 1))
    return ctx.error("ratio {} is outside [0, 1)", ratio);
  return ctx
      .op("dropout", {x},
          {{"rate", ratio}, {"seed", seedOf(ctx.node().output(0))}}, 0)
      .status();
}

} // namespace

void addNeuralConverters(ConverterTable &table) {
  table["Conv"] = convertConv;
  table["MaxPool"] = convertPool<true>;
  table["AveragePool"] = convertPool<false>;
  table["GlobalAveragePool"] = convertGlobalAveragePool;
  table["Gemm"] = convertGemm;
  table["MatMul"] = convertMatMul;
  table["Softmax"] = convertSoftmax<false>;
  table["LogSoftmax"] = convertSoftmax<true>;
  table["Dropout"] = convertDropout;
}

} // namespace remat::onnximport

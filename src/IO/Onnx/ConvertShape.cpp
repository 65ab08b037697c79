//===- ConvertShape.cpp - ONNX shape and indexing ops -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Constant, Shape, ConstantOfShape, Reshape, Flatten, Unsqueeze, Squeeze,
/// Transpose, Concat, Split, Slice, Gather and Expand. Shape-like operands
/// (Reshape's shape, Slice's starts, ...) must be known at import time; when
/// the data is known too the node is folded, which is how the Shape ->
/// Gather -> Unsqueeze -> Concat chains of PyTorch's exports disappear.
///
//===----------------------------------------------------------------------===//

#include "Folding.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace remat::onnximport {
namespace {

/// Output 0 becomes `known` reshaped to `shape`, or a reshape of the runtime
/// input 0.
absl::Status defineReshaped(ImportContext &ctx, std::vector<int64_t> shape) {
  if (const KnownTensor *known = ctx.maybeKnown(0)) {
    KnownTensor reshaped = *known;
    reshaped.shape = std::move(shape);
    ctx.defineKnown(0, std::move(reshaped));
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  if (llvm::ArrayRef<int64_t>(shape) == x->type().shape()) {
    ctx.define(0, x);
    return absl::OkStatus();
  }
  return ctx.op("reshape", {x}, {{"shape", Attribute(shape)}}, 0).status();
}

absl::Status convertConstant(ImportContext &ctx) {
  if (ctx.node().attribute_size() != 1)
    return ctx.error("needs exactly one value attribute");
  const onnx::AttributeProto &a = ctx.node().attribute(0);
  if (a.name() == "value") {
    absl::StatusOr<KnownTensor> tensor = decodeTensor(a.t());
    if (!tensor.ok())
      return ctx.nodeError(std::string(tensor.status().message()));
    ctx.defineKnown(0, std::move(*tensor));
  } else if (a.name() == "value_float") {
    ctx.defineKnown(0, KnownTensor::ofFloats({double(a.f())}, {}));
  } else if (a.name() == "value_floats") {
    ctx.defineKnown(0, KnownTensor::ofFloats(
                           std::vector<double>(a.floats().begin(), a.floats().end()),
                           {int64_t(a.floats_size())}));
  } else if (a.name() == "value_int") {
    ctx.defineKnown(0, KnownTensor::ofInts({a.i()}, {}));
  } else if (a.name() == "value_ints") {
    ctx.defineKnown(0, KnownTensor::ofInts(
                           std::vector<int64_t>(a.ints().begin(), a.ints().end()),
                           {int64_t(a.ints_size())}));
  } else {
    return ctx.error("attribute '{}' is not supported", a.name());
  }
  return absl::OkStatus();
}

absl::Status convertShape(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  int64_t rank = type.rank();
  REMAT_ASSIGN_OR_RETURN(int64_t start, ctx.intAttr("start", 0));
  REMAT_ASSIGN_OR_RETURN(int64_t end, ctx.intAttr("end", rank));
  auto clamp = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  start = clamp(start);
  end = std::max(start, clamp(end));
  std::vector<int64_t> dims(type.shape().begin() + start,
                            type.shape().begin() + end);
  int64_t count = int64_t(dims.size());
  ctx.defineKnown(0, KnownTensor::ofInts(std::move(dims), {count}));
  return absl::OkStatus();
}

absl::Status convertConstantOfShape(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(KnownTensor shape, ctx.knownInput(0, "shape"));
  KnownTensor result = KnownTensor::ofFloats({0.0}, {}, DType::F32);
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    absl::StatusOr<KnownTensor> value = decodeTensor(a->t());
    if (!value.ok() || value->numel() != 1)
      return ctx.error("attribute 'value' must be a one-element tensor");
    result = *value;
  }
  result.shape = shape.ints;
  REMAT_ASSIGN_OR_RETURN(int64_t numel, foldedElements(ctx, result, "shape"));
  if (result.isFloat())
    result.floats.assign(numel, result.floats.front());
  else
    result.ints.assign(numel, result.ints.front());
  ctx.defineKnown(0, std::move(result));
  return absl::OkStatus();
}

absl::Status convertReshape(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  REMAT_ASSIGN_OR_RETURN(KnownTensor target, ctx.knownInput(1, "shape"));
  REMAT_ASSIGN_OR_RETURN(int64_t allowZero, ctx.intAttr("allowzero", 0));
  std::vector<int64_t> shape = target.ints;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (i >= type.rank())
        return ctx.error("shape entry {} copies a dimension the input {} "
                         "lacks",
                         i, type.str());
      shape[i] = type.dim(int(i));
    }
    if (shape[i] == -1) {
      if (inferred >= 0)
        return ctx.error("shape has more than one -1");
      inferred = int(i);
    } else if (shape[i] < 0) {
      return ctx.error("shape entry {} is negative", shape[i]);
    } else if (llvm::MulOverflow(known, shape[i], known)) {
      return ctx.error("shape [{}] has more than 2^63-1 elements",
                       fmt::join(target.ints, ", "));
    }
  }
  if (inferred >= 0) {
    if (known == 0 || type.numElements() % known != 0)
      return ctx.error("cannot reshape {} to [{}]", type.str(),
                       fmt::join(target.ints, ", "));
    shape[inferred] = type.numElements() / known;
  }
  // The product of the entries given, and the inferred one's quotient.
  int64_t total = inferred >= 0 ? type.numElements() : known;
  if (total != type.numElements())
    return ctx.error("cannot reshape {} to [{}]", type.str(),
                     fmt::join(target.ints, ", "));
  return defineReshaped(ctx, std::move(shape));
}

absl::Status convertFlatten(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  REMAT_ASSIGN_OR_RETURN(int64_t axis, ctx.intAttr("axis", 1));
  int64_t rank = type.rank();
  if (axis < -rank || axis > rank)
    return ctx.error("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0)
    axis += rank;
  // Both products from the dims: with a dim of 0 the element count says
  // nothing of the other side ([0, 4] stays [0, 4], not [0, 0]).
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (llvm::MulOverflow(d < axis ? outer : inner, type.dim(int(d)),
                          d < axis ? outer : inner))
      return ctx.error("flattening {} at axis {} gives more than 2^63-1 "
                       "elements on one side",
                       type.str(), axis);
  return defineReshaped(ctx, {outer, inner});
}

/// The axes of Unsqueeze and Squeeze: an input from opset 13.
absl::StatusOr<std::vector<int64_t>> axesOperand(ImportContext &ctx) {
  if (!ctx.hasInput(1))
    return std::vector<int64_t>();
  REMAT_ASSIGN_OR_RETURN(KnownTensor axes, ctx.knownInput(1, "axes"));
  return axes.ints;
}

absl::Status convertUnsqueeze(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axesOperand(ctx));
  int64_t rank = int64_t(type.rank() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : axes) {
    REMAT_ASSIGN_OR_RETURN(axis, normaliseAxis(ctx, axis, rank));
    if (inserted[axis])
      return ctx.error("axis {} is repeated", axis);
    inserted[axis] = true;
  }
  std::vector<int64_t> shape;
  int next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : type.dim(next++));
  return defineReshaped(ctx, std::move(shape));
}

absl::Status convertSqueeze(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axesOperand(ctx));
  int64_t rank = type.rank();
  std::vector<bool> dropped(rank, false);
  for (int64_t axis : axes) {
    REMAT_ASSIGN_OR_RETURN(axis, normaliseAxis(ctx, axis, rank));
    if (type.dim(int(axis)) != 1)
      return ctx.error("cannot squeeze dimension {} of {}, which is not 1",
                       axis, type.str());
    dropped[axis] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!(axes.empty() ? type.dim(int(d)) == 1 : dropped[d]))
      shape.push_back(type.dim(int(d)));
  return defineReshaped(ctx, std::move(shape));
}

absl::Status convertTranspose(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  int64_t rank = type.rank();
  std::vector<int64_t> reversed(rank);
  for (int64_t d = 0; d < rank; ++d)
    reversed[d] = rank - 1 - d;
  REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ctx.intsAttr("perm", reversed));
  // A transposed matrix is left for its readers: MatMul reads it as the
  // untransposed one (ImportContext::deferTranspose).
  if (perm == std::vector<int64_t>{1, 0} && !ctx.maybeKnown(0) &&
      ctx.transposedMatrix(0).empty()) {
    ctx.deferTranspose(0);
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  return ctx.op("transpose", {x}, {{"perm", Attribute(perm)}}, 0).status();
}

absl::Status convertConcat(ImportContext &ctx) {
  if (!ctx.attr("axis"))
    return ctx.error("attribute 'axis' is missing");
  REMAT_ASSIGN_OR_RETURN(int64_t axis, ctx.intAttr("axis", 0));
  int count = ctx.node().input_size();
  if (count == 0)
    return ctx.error("needs at least one input");
  REMAT_ASSIGN_OR_RETURN(Type first, ctx.inputType(0));
  REMAT_ASSIGN_OR_RETURN(axis, normaliseAxis(ctx, axis, first.rank()));
  std::vector<KnownTensor> parts;
  for (int i = 0; i < count && ctx.maybeKnown(i); ++i)
    parts.push_back(*ctx.maybeKnown(i));
  if (int(parts.size()) == count) {
    REMAT_ASSIGN_OR_RETURN(KnownTensor joined, foldConcat(ctx, parts, axis));
    ctx.defineKnown(0, std::move(joined));
    return absl::OkStatus();
  }
  std::vector<Value *> operands;
  for (int i = 0; i < count; ++i) {
    REMAT_ASSIGN_OR_RETURN(Value * v, ctx.input(i));
    operands.push_back(v);
  }
  return ctx.op("concat", operands, {{"axis", axis}}, 0).status();
}

absl::Status convertSplit(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  REMAT_ASSIGN_OR_RETURN(int64_t axis, ctx.intAttr("axis", 0));
  REMAT_ASSIGN_OR_RETURN(axis, normaliseAxis(ctx, axis, x->type().rank()));
  int64_t dim = x->type().dim(int(axis));
  int parts = ctx.numOutputs();
  std::vector<int64_t> sizes;
  if (ctx.hasInput(1)) {
    REMAT_ASSIGN_OR_RETURN(KnownTensor split, ctx.knownInput(1, "split"));
    sizes = split.ints;
  } else {
    // Opset 18's num_outputs names the count the outputs already give.
    REMAT_ASSIGN_OR_RETURN(int64_t count, ctx.intAttr("num_outputs", parts));
    if (count != parts)
      return ctx.error("num_outputs is {} for {} outputs", count, parts);
    if (parts < 1 || dim % parts != 0)
      return ctx.error("cannot split dimension {} of size {} into {} equal "
                       "parts",
                       axis, dim, parts);
    sizes.assign(parts, dim / parts);
  }
  if (int(sizes.size()) != parts)
    return ctx.error("split has {} sizes for {} outputs", sizes.size(), parts);
  AttrList attrs = {{"axis", axis}, {"sizes", Attribute(sizes)}};
  REMAT_ASSIGN_OR_RETURN(Op * split, ctx.create("split", {x}, attrs, 0));
  for (int i = 1; i < parts; ++i) {
    ctx.nameAfterOutput(split->result(i), i);
    ctx.define(i, split->result(i));
  }
  return absl::OkStatus();
}

absl::Status convertSlice(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  REMAT_ASSIGN_OR_RETURN(KnownTensor starts, ctx.knownInput(1, "starts"));
  REMAT_ASSIGN_OR_RETURN(KnownTensor ends, ctx.knownInput(2, "ends"));
  int64_t rank = type.rank();
  size_t count = starts.ints.size();
  if (ends.ints.size() != count)
    return ctx.error("starts and ends differ in length");
  std::vector<int64_t> axes(count), steps(count, 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (ctx.hasInput(3)) {
    REMAT_ASSIGN_OR_RETURN(KnownTensor a, ctx.knownInput(3, "axes"));
    axes = a.ints;
  }
  if (ctx.hasInput(4)) {
    REMAT_ASSIGN_OR_RETURN(KnownTensor s, ctx.knownInput(4, "steps"));
    steps = s.ints;
  }
  if (axes.size() != count || steps.size() != count)
    return ctx.error("starts, ends, axes and steps differ in length");
  std::vector<int64_t> lo(rank, 0), hi(type.shape().begin(), type.shape().end()),
      step(rank, 1);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < count; ++i) {
    REMAT_ASSIGN_OR_RETURN(int64_t axis, normaliseAxis(ctx, axes[i], rank));
    if (seen[axis])
      return ctx.error("axis {} is repeated", axis);
    seen[axis] = true;
    if (steps[i] < 1)
      return ctx.error("step {} is not supported (only positive steps)",
                       steps[i]);
    int64_t dim = type.dim(int(axis));
    auto clamp = [&](int64_t v) {
      if (v < 0)
        v = v < -dim ? 0 : v + dim;
      return std::min(v, dim);
    };
    lo[axis] = clamp(starts.ints[i]);
    hi[axis] = std::max(lo[axis], clamp(ends.ints[i]));
    step[axis] = steps[i];
  }
  if (const KnownTensor *known = ctx.maybeKnown(0)) {
    ctx.defineKnown(0, foldSlice(*known, lo, hi, step));
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  return ctx
      .op("slice", {x},
          {{"starts", Attribute(lo)},
           {"ends", Attribute(hi)},
           {"steps", Attribute(step)}},
          0)
      .status();
}

absl::Status convertGather(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  REMAT_ASSIGN_OR_RETURN(int64_t axis, ctx.intAttr("axis", 0));
  REMAT_ASSIGN_OR_RETURN(axis, normaliseAxis(ctx, axis, type.rank()));
  const KnownTensor *data = ctx.maybeKnown(0);
  const KnownTensor *indices = ctx.maybeKnown(1);
  if (indices && indices->isFloat())
    return ctx.error("indices must be integers");
  if (data && indices) {
    REMAT_ASSIGN_OR_RETURN(KnownTensor picked,
                           foldGather(ctx, *data, *indices, axis));
    ctx.defineKnown(0, std::move(picked));
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  if (indices) {
    // Known indices: negative ones are normalised here, where the size is
    // known; the kernel wants them in range.
    KnownTensor normal = *indices;
    int64_t size = type.dim(int(axis));
    for (int64_t &index : normal.ints) {
      if (index < -size || index >= size)
        return ctx.error("index {} is out of range for size {}", index, size);
      if (index < 0)
        index += size;
    }
    if (normal.ints.size() == 1) {
      // One index is a slice and a reshape: both views, no copy.
      std::vector<int64_t> starts(type.rank(), 0),
          ends(type.shape().begin(), type.shape().end());
      starts[axis] = normal.ints[0];
      ends[axis] = normal.ints[0] + 1;
      REMAT_ASSIGN_OR_RETURN(Value * window,
                             ctx.op("slice", {x},
                                    {{"starts", Attribute(starts)},
                                     {"ends", Attribute(ends)}}));
      std::vector<int64_t> shape(type.shape().begin(), type.shape().end());
      shape.erase(shape.begin() + axis);
      shape.insert(shape.begin() + axis, normal.shape.begin(), normal.shape.end());
      return ctx.op("reshape", {window}, {{"shape", Attribute(shape)}}, 0)
          .status();
    }
  }
  REMAT_ASSIGN_OR_RETURN(Value * index, ctx.input(1));
  return ctx.op("gather", {x, index}, {{"axis", axis}}, 0).status();
}

absl::Status convertExpand(ImportContext &ctx) {
  REMAT_ASSIGN_OR_RETURN(Type type, ctx.inputType(0));
  REMAT_ASSIGN_OR_RETURN(KnownTensor target, ctx.knownInput(1, "shape"));
  // ONNX Expand broadcasts both ways: the result is broadcast(x, shape).
  size_t rank = std::max<size_t>(type.rank(), target.ints.size());
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    size_t fromX = rank - type.rank(), fromT = rank - target.ints.size();
    int64_t dx = i < fromX ? 1 : type.dim(int(i - fromX));
    int64_t dt = i < fromT ? 1 : target.ints[i - fromT];
    if (dx != dt && dx != 1 && dt != 1)
      return ctx.error("cannot expand {} to [{}]", type.str(),
                       fmt::join(target.ints, ", "));
    shape[i] = dx == 1 ? dt : dx;
  }
  if (const KnownTensor *known = ctx.maybeKnown(0)) {
    KnownTensor ones = KnownTensor::ofInts({}, shape, known->dtype);
    REMAT_ASSIGN_OR_RETURN(int64_t numel,
                           foldedElements(ctx, ones, "expand"));
    if (ones.isFloat())
      ones.floats.assign(numel, 0.0);
    else
      ones.ints.assign(numel, 0);
    REMAT_ASSIGN_OR_RETURN(
        KnownTensor expanded,
        foldBinary(ctx, *known, ones, [](double a, double) { return a; },
                   [](int64_t a, int64_t) { return a; }));
    ctx.defineKnown(0, std::move(expanded));
    return absl::OkStatus();
  }
  REMAT_ASSIGN_OR_RETURN(Value * x, ctx.input(0));
  if (llvm::ArrayRef<int64_t>(shape) == x->type().shape()) {
    ctx.define(0, x);
    return absl::OkStatus();
  }
  return ctx.op("broadcast", {x}, {{"shape", Attribute(shape)}}, 0).status();
}

} // namespace

void addShapeConverters(ConverterTable &table) {
  table["Constant"] = convertConstant;
  table["Shape"] = convertShape;
  table["ConstantOfShape"] = convertConstantOfShape;
  table["Reshape"] = convertReshape;
  table["Flatten"] = convertFlatten;
  table["Unsqueeze"] = convertUnsqueeze;
  table["Squeeze"] = convertSqueeze;
  table["Transpose"] = convertTranspose;
  table["Concat"] = convertConcat;
  table["Split"] = convertSplit;
  table["Slice"] = convertSlice;
  table["Gather"] = convertGather;
  table["Expand"] = convertExpand;
}

} // namespace remat::onnximport

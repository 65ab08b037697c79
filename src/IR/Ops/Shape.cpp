//===- Shape.cpp - Data-movement ops --------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Ops that move or rearrange elements without arithmetic: transpose, reshape,
/// broadcast, concat, split, slice and pad, and slice's backward op
/// slice_grad. All cost 0 FLOPs; only reshape is a view, the others
/// materialise a new tensor. Axes may be negative, counted from the back.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/Support/MathExtras.h"

namespace remat {
using namespace ops;

/// Fails unless the int-list attribute `name` has one entry per dim of
/// operand 0.
static absl::Status expectOnePerDim(const OpSignature &sig,
                                    llvm::StringRef name) {
  size_t size = sig.getIntList(name).size();
  if (size == sig.operand(0).rank())
    return absl::OkStatus();
  return invalidArgument("'{}' {} has {} entries but operand 0 {} has rank {}",
                         sig.def().name, name.str(), size, sig.operand(0).str(),
                         sig.operand(0).rank());
}

/// Fails if the int list `values` (the attribute `name`) has a negative entry.
static absl::Status expectNonNegative(const OpSignature &sig,
                                      llvm::StringRef name,
                                      llvm::ArrayRef<int64_t> values) {
  for (int64_t v : values)
    if (v < 0)
      return invalidArgument("'{}' {} {} has negative entry {}", sig.def().name,
                             name.str(), formatShape(values), v);
  return absl::OkStatus();
}

static absl::StatusOr<TypeList> inferTranspose(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectOnePerDim(sig, "perm"));
  const Type &x = sig.operand(0);
  llvm::ArrayRef<int64_t> perm = sig.getIntList("perm");
  llvm::BitVector seen(x.rank());
  Shape result;
  for (int64_t p : perm) {
    REMAT_ASSIGN_OR_RETURN(unsigned axis,
                           normalizeAxis("transpose", p, x.rank()));
    if (seen.test(axis))
      return invalidArgument(
          "'transpose' perm {} is not a permutation of 0..{}",
          formatShape(perm), x.rank() - 1);
    seen.set(axis);
    result.push_back(x.dim(axis));
  }
  return TypeList{Type(x.dtype(), result)};
}

static absl::StatusOr<TypeList> inferReshape(const OpSignature &sig) {
  const Type &x = sig.operand(0);
  llvm::ArrayRef<int64_t> shape = sig.getIntList("shape");
  std::optional<unsigned> inferred;
  int64_t known = 1;
  for (unsigned i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred)
        return invalidArgument("'reshape' shape {} has more than one -1",
                               formatShape(shape));
      inferred = i;
      continue;
    }
    if (shape[i] < 0)
      return invalidArgument("'reshape' shape {} has negative dim {}",
                             formatShape(shape), shape[i]);
    if (llvm::MulOverflow(known, shape[i], known))
      return invalidArgument("'reshape' shape {} overflows int64 elements",
                             formatShape(shape));
  }
  int64_t count = x.numElements();
  Shape result(shape.begin(), shape.end());
  if (inferred) {
    if (known == 0 || count % known != 0)
      return invalidArgument(
          "'reshape' cannot infer the -1 of shape {} from {} ({} elements)",
          formatShape(shape), x.str(), count);
    result[*inferred] = count / known;
  } else if (known != count) {
    return invalidArgument(
        "'reshape' cannot reshape {} ({} elements) to {} ({} elements)",
        x.str(), count, formatShape(shape), known);
  }
  return TypeList{Type(x.dtype(), result)};
}

static absl::StatusOr<TypeList> inferBroadcast(const OpSignature &sig) {
  const Type &x = sig.operand(0);
  llvm::ArrayRef<int64_t> shape = sig.getIntList("shape");
  REMAT_RETURN_IF_ERROR(expectNonNegative(sig, "shape", shape));
  bool fits = shape.size() >= x.rank();
  for (unsigned i = 0; fits && i < x.rank(); ++i) {
    int64_t from = x.shape()[x.rank() - 1 - i];
    fits = from == 1 || from == shape[shape.size() - 1 - i];
  }
  if (!fits)
    return invalidArgument("'broadcast' cannot broadcast {} to {}", x.str(),
                           formatShape(shape));
  return TypeList{Type(x.dtype(), shape)};
}

static absl::StatusOr<TypeList> inferConcat(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  const Type &first = sig.operand(0);
  REMAT_ASSIGN_OR_RETURN(
      unsigned axis, normalizeAxis("concat", sig.getInt("axis"), first.rank()));
  Shape result(first.shape().begin(), first.shape().end());
  for (unsigned i = 1; i < sig.numOperands(); ++i) {
    const Type &t = sig.operand(i);
    if (t.rank() != first.rank())
      return invalidArgument("'concat' operand {} {} has rank {} but operand 0 "
                             "{} has rank {}",
                             i, t.str(), t.rank(), first.str(), first.rank());
    for (unsigned d = 0; d < t.rank(); ++d)
      if (d != axis && t.dim(d) != first.dim(d))
        return invalidArgument(
            "'concat' along axis {}: dim {} of operand {} {} is {} but operand "
            "0 {} has {}",
            axis, d, i, t.str(), t.dim(d), first.str(), first.dim(d));
    if (llvm::AddOverflow(result[axis], t.dim(axis), result[axis]))
      return invalidArgument("'concat' result dim {} overflows int64", axis);
  }
  return TypeList{Type(first.dtype(), result)};
}

static absl::StatusOr<TypeList> inferSplit(const OpSignature &sig) {
  const Type &x = sig.operand(0);
  REMAT_ASSIGN_OR_RETURN(unsigned axis,
                         normalizeAxis("split", sig.getInt("axis"), x.rank()));
  llvm::ArrayRef<int64_t> sizes = sig.getIntList("sizes");
  if (sizes.empty())
    return invalidArgument("'split' sizes must not be empty");
  TypeList results;
  int64_t total = 0;
  Shape shape(x.shape().begin(), x.shape().end());
  for (int64_t size : sizes) {
    if (size < 0)
      return invalidArgument("'split' sizes {} has negative size {}",
                             formatShape(sizes), size);
    if (llvm::AddOverflow(total, size, total))
      return invalidArgument("'split' sizes {} overflow int64",
                             formatShape(sizes));
    shape[axis] = size;
    results.push_back(Type(x.dtype(), shape));
  }
  if (total != x.dim(axis))
    return invalidArgument("'split' sizes {} sum to {} but dim {} of {} is {}",
                           formatShape(sizes), total, axis, x.str(),
                           x.dim(axis));
  return results;
}

static absl::StatusOr<TypeList> inferSlice(const OpSignature &sig) {
  const Type &x = sig.operand(0);
  REMAT_RETURN_IF_ERROR(expectOnePerDim(sig, "starts"));
  REMAT_RETURN_IF_ERROR(expectOnePerDim(sig, "ends"));
  llvm::ArrayRef<int64_t> starts = sig.getIntList("starts");
  llvm::ArrayRef<int64_t> ends = sig.getIntList("ends");
  llvm::ArrayRef<int64_t> steps = sig.getIntList("steps");
  if (!steps.empty())
    REMAT_RETURN_IF_ERROR(expectOnePerDim(sig, "steps"));
  Shape result;
  for (unsigned d = 0; d < x.rank(); ++d) {
    int64_t start = starts[d], end = ends[d];
    int64_t step = steps.empty() ? 1 : steps[d];
    if (start < 0 || start > end || end > x.dim(d))
      return invalidArgument("'slice' dim {}: start {} and end {} must satisfy "
                             "0 <= start <= end <= {}",
                             d, start, end, x.dim(d));
    if (step < 1)
      return invalidArgument("'slice' dim {}: step {} must be >= 1", d, step);
    int64_t span = end - start;
    result.push_back(span / step + (span % step != 0));
  }
  return TypeList{Type(x.dtype(), result)};
}

static absl::StatusOr<TypeList> inferPad(const OpSignature &sig) {
  const Type &x = sig.operand(0);
  REMAT_RETURN_IF_ERROR(expectOnePerDim(sig, "low"));
  REMAT_RETURN_IF_ERROR(expectOnePerDim(sig, "high"));
  llvm::ArrayRef<int64_t> low = sig.getIntList("low");
  llvm::ArrayRef<int64_t> high = sig.getIntList("high");
  REMAT_RETURN_IF_ERROR(expectNonNegative(sig, "low", low));
  REMAT_RETURN_IF_ERROR(expectNonNegative(sig, "high", high));
  Shape result;
  for (unsigned d = 0; d < x.rank(); ++d) {
    int64_t size;
    if (llvm::AddOverflow(x.dim(d), low[d], size) ||
        llvm::AddOverflow(size, high[d], size))
      return invalidArgument("'pad' dim {}: {} + {} + {} overflows int64", d,
                             x.dim(d), low[d], high[d]);
    result.push_back(size);
  }
  return TypeList{Type(x.dtype(), result)};
}

static absl::StatusOr<TypeList> inferSliceGrad(const OpSignature &sig) {
  const Type &dy = sig.operand(0);
  llvm::ArrayRef<int64_t> shape = sig.getIntList("shape");
  if (shape.size() != dy.rank())
    return invalidArgument("'slice_grad' shape {} has {} entries but dy {} has "
                           "rank {}",
                           formatShape(shape), shape.size(), dy.str(),
                           dy.rank());
  REMAT_RETURN_IF_ERROR(expectNonNegative(sig, "shape", shape));
  REMAT_RETURN_IF_ERROR(expectOnePerDim(sig, "starts"));
  llvm::ArrayRef<int64_t> starts = sig.getIntList("starts");
  llvm::ArrayRef<int64_t> steps = sig.getIntList("steps");
  if (!steps.empty())
    REMAT_RETURN_IF_ERROR(expectOnePerDim(sig, "steps"));
  for (unsigned d = 0; d < dy.rank(); ++d) {
    int64_t start = starts[d], count = dy.dim(d);
    int64_t step = steps.empty() ? 1 : steps[d];
    if (step < 1)
      return invalidArgument("'slice_grad' dim {}: step {} must be >= 1", d,
                             step);
    if (start < 0 || start > shape[d])
      return invalidArgument("'slice_grad' dim {}: start {} must be in [0, {}]",
                             d, start, shape[d]);
    // The last element written is start + (count-1)*step; it must be in range.
    int64_t last;
    if (count > 0 && (llvm::MulOverflow(count - 1, step, last) ||
                      llvm::AddOverflow(last, start, last) || last >= shape[d]))
      return invalidArgument(
          "'slice_grad' dim {}: dy {} has {} entries, but a slice of {} from "
          "{} with step {} has at most {}",
          d, dy.str(), count, shape[d], start, step,
          (shape[d] - start + step - 1) / step);
  }
  return TypeList{Type(dy.dtype(), shape)};
}

void registerShapeOps(OpRegistry &registry) {
  registry.add({.name = "transpose",
                .summary =
                    "Permutes dims: result dim i is x's dim perm[i]; perm is a "
                    "permutation of 0..rank-1 (negative entries count from the "
                    "back). Materialises a copy.",
                .minOperands = 1,
                .maxOperands = 1,
                .attrs = {{"perm", AttrKind::IntList, std::nullopt}},
                .inferTypes = inferTranspose,
                .flops = zeroFlops});
  registry.add(
      {.name = "reshape",
       .summary = "A view of x with the same elements in `shape`; at most one "
                  "-1 entry, inferred from the element count.",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = {{"shape", AttrKind::IntList, std::nullopt}},
       .inferTypes = inferReshape,
       .flops = zeroFlops,
       .flags = OpFlagView});
  registry.add({.name = "broadcast",
                .summary =
                    "Numpy-broadcasts x to exactly `shape` (x's dims, aligned "
                    "from the back, must equal the target or be 1).",
                .minOperands = 1,
                .maxOperands = 1,
                .attrs = {{"shape", AttrKind::IntList, std::nullopt}},
                .inferTypes = inferBroadcast,
                .flops = zeroFlops});
  registry.add({.name = "concat",
                .summary =
                    "Joins one or more tensors of equal dtype and rank along "
                    "`axis`; their other dims must match.",
                .minOperands = 1,
                .maxOperands = OpDef::kVariadic,
                .attrs = {{"axis", AttrKind::Int, std::nullopt}},
                .inferTypes = inferConcat,
                .flops = zeroFlops});
  registry.add(
      {.name = "split",
       .summary = "Cuts x along `axis` into len(sizes) results of those sizes "
                  "(each >= 0, summing to the dim).",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = {{"axis", AttrKind::Int, std::nullopt},
                 {"sizes", AttrKind::IntList, std::nullopt}},
       .inferTypes = inferSplit,
       .flops = zeroFlops});
  registry.add(
      {.name = "slice",
       .summary =
           "Strided window of x: per dim, indices start, start+step, ... "
           "below end, with 0 <= start <= end <= dim and step >= 1 "
           "(empty `steps` = all 1); result dim ceil((end-start)/step).",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = {{"starts", AttrKind::IntList, std::nullopt},
                 {"ends", AttrKind::IntList, std::nullopt},
                 {"steps", AttrKind::IntList, Attribute({})}},
       .inferTypes = inferSlice,
       .flops = zeroFlops});
  registry.add({.name = "pad",
                .summary =
                    "Pads each dim of x with low[d] entries before and high[d] "
                    "after (all >= 0), filled with `value`.",
                .minOperands = 1,
                .maxOperands = 1,
                .attrs = {{"low", AttrKind::IntList, std::nullopt},
                          {"high", AttrKind::IntList, std::nullopt},
                          {"value", AttrKind::Float, Attribute(0.0)}},
                .inferTypes = inferPad,
                .flops = zeroFlops});
  registry.add(
      {.name = "slice_grad",
       .summary =
           "Backward of slice: zeros of `shape` (dy's dtype) with dy written "
           "into the strided window that begins at `starts` with `steps` "
           "(empty = all 1); dy must fit that window.",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = {{"shape", AttrKind::IntList, std::nullopt},
                 {"starts", AttrKind::IntList, std::nullopt},
                 {"steps", AttrKind::IntList, Attribute({})}},
       .inferTypes = inferSliceGrad,
       .flops = zeroFlops});
}

} // namespace remat

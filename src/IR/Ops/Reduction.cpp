//===- Reduction.cpp - Sums, means and maxima over axes -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// reduce_sum, reduce_mean and reduce_max over a set of axes (empty = all),
/// dropping the reduced dims or keeping them as 1 with `keepdims`. Each costs
/// one FLOP per element of the input. reduce_max_grad, reduce_max's backward
/// op, routes dy to the maxima of x at 3 FLOPs per element of x.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

#include "llvm/ADT/BitVector.h"

namespace remat {
using namespace ops;

/// The dims of operand 0 that `axes` names (all of them when empty), or an
/// error on an axis out of range or named twice.
static absl::StatusOr<llvm::BitVector> reducedDims(const OpSignature &sig) {
  unsigned rank = sig.operand(0).rank();
  llvm::ArrayRef<int64_t> axes = sig.getIntList("axes");
  if (axes.empty())
    return llvm::BitVector(rank, true);
  llvm::BitVector reduced(rank);
  for (int64_t axis : axes) {
    REMAT_ASSIGN_OR_RETURN(unsigned dim,
                           normalizeAxis(sig.def().name, axis, rank));
    if (reduced.test(dim))
      return invalidArgument("'{}' axes {} name dim {} twice", sig.def().name,
                             formatShape(axes), dim);
    reduced.set(dim);
  }
  return reduced;
}

static absl::StatusOr<TypeList> inferReduction(const OpSignature &sig) {
  if (sig.def().name == "reduce_mean")
    REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  const Type &x = sig.operand(0);
  REMAT_ASSIGN_OR_RETURN(llvm::BitVector reduced, reducedDims(sig));
  bool keepdims = sig.getBool("keepdims");
  Shape result;
  for (unsigned d = 0; d < x.rank(); ++d) {
    if (!reduced.test(d))
      result.push_back(x.dim(d));
    else if (keepdims)
      result.push_back(1);
  }
  return TypeList{Type(x.dtype(), result)};
}

/// reduce_max_grad(x, y, dy): y and dy must have the type reduce_max(x) has.
static absl::StatusOr<TypeList> inferReduceMaxGrad(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  REMAT_ASSIGN_OR_RETURN(TypeList reducedType, inferReduction(sig));
  for (unsigned i = 1; i < 3; ++i)
    if (sig.operand(i) != reducedType[0])
      return invalidArgument(
          "'reduce_max_grad' operand {} {} must have the type of reduce_max of "
          "x {}, {}",
          i, sig.operand(i).str(), sig.operand(0).str(), reducedType[0].str());
  return TypeList{sig.operand(0)};
}

void registerReductionOps(OpRegistry &registry) {
  struct Entry {
    const char *name;
    const char *summary;
  };
  for (Entry e :
       {Entry{"reduce_sum", "Sum of x over `axes` (empty = all dims, negative "
                            "counts from the back, no repeats); reduced dims "
                            "are dropped, or kept as 1 with `keepdims`."},
        Entry{"reduce_mean", "Mean of float x over `axes` (empty = all dims, "
                             "negative counts from the back, no repeats); "
                             "reduced dims are dropped, or kept as 1 with "
                             "`keepdims`."},
        Entry{"reduce_max", "Maximum of x over `axes` (empty = all dims, "
                            "negative counts from the back, no repeats); "
                            "reduced dims are dropped, or kept as 1 with "
                            "`keepdims`."}})
    registry.add({.name = e.name,
                  .summary = e.summary,
                  .minOperands = 1,
                  .maxOperands = 1,
                  .attrs = {{"axes", AttrKind::IntList, Attribute({})},
                            {"keepdims", AttrKind::Bool, Attribute(false)}},
                  .inferTypes = inferReduction,
                  .flops = flopsPerOperandElement(0, 1)});
  registry.add(
      {.name = "reduce_max_grad",
       .summary = "Backward of reduce_max from float x, its result y and dy "
                  "{axes, keepdims as the forward}: each group's dy split "
                  "equally among the positions where x equals y; result x's "
                  "type.",
       .minOperands = 3,
       .maxOperands = 3,
       .attrs = {{"axes", AttrKind::IntList, Attribute({})},
                 {"keepdims", AttrKind::Bool, Attribute(false)}},
       .inferTypes = inferReduceMaxGrad,
       .flops = flopsPerOperandElement(0, 3)});
}

} // namespace remat

//===- Indexing.cpp - Embedding lookup and gather ---------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Ops that select slices by integer index: `embedding` picks rows of a
/// [V, D] table and `gather` picks entries along any axis. Both only move
/// data and cost 0 FLOPs. Their backward op `gather_grad` scatter-adds dy
/// back, at one FLOP per element of dy.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

static absl::StatusOr<TypeList> inferEmbedding(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectRank(sig, 0, 2));
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  REMAT_RETURN_IF_ERROR(expectInteger(sig, 1));
  const Type &table = sig.operand(0);
  llvm::ArrayRef<int64_t> ids = sig.operand(1).shape();
  Shape result(ids.begin(), ids.end());
  result.push_back(table.dim(1));
  return TypeList{Type(table.dtype(), result)};
}

static absl::StatusOr<TypeList> inferGather(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectInteger(sig, 1));
  const Type &x = sig.operand(0);
  REMAT_ASSIGN_OR_RETURN(unsigned axis,
                         normalizeAxis("gather", sig.getInt("axis"), x.rank()));
  llvm::ArrayRef<int64_t> outer = x.shape().take_front(axis);
  Shape result(outer.begin(), outer.end());
  llvm::append_range(result, sig.operand(1).shape());
  llvm::append_range(result, x.shape().drop_front(axis + 1));
  return TypeList{Type(x.dtype(), result)};
}

/// gather_grad(indices, dy) {axis, size}: result dy.shape[:axis] + [size] +
/// dy.shape[axis + rank(indices):], where dy holds indices' shape at `axis`.
static absl::StatusOr<TypeList> inferGatherGrad(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectInteger(sig, 0));
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 1));
  llvm::ArrayRef<int64_t> indices = sig.operand(0).shape();
  const Type &dy = sig.operand(1);
  int64_t size = sig.getInt("size");
  if (size < 0)
    return invalidArgument("'gather_grad' size must be >= 0, got {}", size);
  if (dy.rank() < indices.size())
    return invalidArgument("'gather_grad' dy {} has lower rank than indices {}",
                           dy.str(), sig.operand(0).str());
  unsigned resultRank = dy.rank() - indices.size() + 1;
  REMAT_ASSIGN_OR_RETURN(
      unsigned axis, normalizeAxis("gather_grad", sig.getInt("axis"), resultRank));
  if (dy.shape().slice(axis, indices.size()) != indices)
    return invalidArgument("'gather_grad' dy {} must hold the shape of indices "
                           "{} at dim {}",
                           dy.str(), sig.operand(0).str(), axis);
  llvm::ArrayRef<int64_t> outer = dy.shape().take_front(axis);
  Shape result(outer.begin(), outer.end());
  result.push_back(size);
  llvm::append_range(result, dy.shape().drop_front(axis + indices.size()));
  return TypeList{Type(dy.dtype(), result)};
}

void registerIndexingOps(OpRegistry &registry) {
  registry.add(
      {.name = "embedding",
       .summary = "Rows of float table [V, D] picked by integer ids of any "
                  "shape; result ids.shape + [D].",
       .minOperands = 2,
       .maxOperands = 2,
       .inferTypes = inferEmbedding,
       .flops = zeroFlops});
  registry.add(
      {.name = "gather",
       .summary = "Entries of x picked along `axis` by integer indices {axis = "
                  "0}; result x.shape[:axis] + indices.shape + "
                  "x.shape[axis+1:].",
       .minOperands = 2,
       .maxOperands = 2,
       .attrs = {{"axis", AttrKind::Int, Attribute(0)}},
       .inferTypes = inferGather,
       .flops = zeroFlops});
  registry.add(
      {.name = "gather_grad",
       .summary = "Backward of gather and embedding: scatter-adds float dy "
                  "into zeros of dy.shape[:axis] + [size] + "
                  "dy.shape[axis+rank(indices):] at the integer indices {axis = "
                  "0, size: int}.",
       .minOperands = 2,
       .maxOperands = 2,
       .attrs = {{"axis", AttrKind::Int, Attribute(0)},
                 {"size", AttrKind::Int, std::nullopt}},
       .inferTypes = inferGatherGrad,
       .flops = flopsPerOperandElement(1, 1)});
}

} // namespace remat

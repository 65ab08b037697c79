//===- Matmul.cpp - Batched matrix product --------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `matmul` contracts the last dim of `a` with the second-to-last of `b`
/// (after the optional transposes) and broadcasts the leading batch dims the
/// way numpy's matmul does. It is the archetypal Expensive op: recomputing it
/// costs 2 FLOPs per multiply-add.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

namespace {
/// The operand dims that a matmul reads, after the optional transposes.
struct MatmulDims {
  int64_t m, k, bk, n;
};
} // namespace

static MatmulDims matmulDims(const OpSignature &sig) {
  const Type &a = sig.operand(0);
  const Type &b = sig.operand(1);
  bool ta = sig.getBool("transpose_a");
  bool tb = sig.getBool("transpose_b");
  return {.m = ta ? a.dim(-1) : a.dim(-2),
          .k = ta ? a.dim(-2) : a.dim(-1),
          .bk = tb ? b.dim(-1) : b.dim(-2),
          .n = tb ? b.dim(-2) : b.dim(-1)};
}

static absl::StatusOr<TypeList> inferMatmul(const OpSignature &sig) {
  for (unsigned i = 0; i < 2; ++i) {
    REMAT_RETURN_IF_ERROR(expectFloat(sig, i));
    REMAT_RETURN_IF_ERROR(expectMinRank(sig, i, 2));
  }
  REMAT_RETURN_IF_ERROR(expectSameDType(sig));
  const Type &a = sig.operand(0);
  const Type &b = sig.operand(1);
  MatmulDims dims = matmulDims(sig);
  if (dims.k != dims.bk)
    return invalidArgument(
        "'matmul' contracts k = {} of a {} with k = {} of b {} "
        "(transpose_a = {}, transpose_b = {})",
        dims.k, a.str(), dims.bk, b.str(), sig.getBool("transpose_a"),
        sig.getBool("transpose_b"));
  absl::StatusOr<Shape> batch =
      broadcastShapes(a.shape().drop_back(2), b.shape().drop_back(2));
  if (!batch.ok())
    return invalidArgument("'matmul' batch dims of {} and {}: {}", a.str(),
                           b.str(), std::string(batch.status().message()));
  Shape result = *batch;
  result.push_back(dims.m);
  result.push_back(dims.n);
  return TypeList{Type(a.dtype(), result)};
}

/// 2 * batch * m * n * k: the result's element count times 2k.
static int64_t matmulFlops(const OpSignature &sig,
                           llvm::ArrayRef<Type> results) {
  return saturatingMul(saturatingMul(2, results[0].numElements()),
                       matmulDims(sig).k);
}

void registerMatmulOps(OpRegistry &registry) {
  registry.add(
      {.name = "matmul",
       .summary =
           "Batched matrix product of float a [..., m, k] and b [..., k, "
           "n] (transpose_a / transpose_b swap the last two dims of that "
           "operand first); batch dims broadcast; result [batch..., m, n].",
       .minOperands = 2,
       .maxOperands = 2,
       .attrs = {{"transpose_a", AttrKind::Bool, Attribute(false)},
                 {"transpose_b", AttrKind::Bool, Attribute(false)}},
       .inferTypes = inferMatmul,
       .flops = matmulFlops,
       .flags = OpFlagExpensive});
}

} // namespace remat

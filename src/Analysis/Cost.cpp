//===- Cost.cpp - FLOP costs from the registry ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Cost.h"

#include "remat/IR/Graph.h"
#include "remat/IR/OpRegistry.h"

#include "llvm/Support/MathExtras.h"

namespace remat {

/// FLOPs of `op` by the registry's rule, whatever its `cost` says.
static int64_t ruleFlops(const Op &op) {
  if (!op.def().flops)
    return 0;
  llvm::SmallVector<Type, 4> operandTypes = op.operandTypes();
  llvm::SmallVector<Type, 2> resultTypes = op.resultTypes();
  return op.def().flops(op.signature(operandTypes), resultTypes);
}

int64_t opFlops(const Op &op) {
  // The Builder only accepts an int `cost`; anything else falls back to the
  // registry's estimate.
  if (const Attribute *cost = op.findAttr(kCostAttr))
    if (cost->is(AttrKind::Int))
      return cost->asInt();
  return ruleFlops(op);
}

int64_t graphFlops(const Graph &graph) {
  int64_t total = 0;
  for (const Op &op : graph.ops())
    total += opFlops(op);
  return total;
}

bool overCheapFlops(int64_t flops, int64_t bytes) {
  int64_t cheapFlops = 0;
  return !llvm::MulOverflow(kCheapFlopsPerByte, bytes, cheapFlops) &&
         flops > cheapFlops;
}

bool isExpensive(const Op &op) {
  if (op.hasFlag(OpFlagExpensive))
    return true;
  if (op.def().name != "extern")
    return false;
  int64_t bytes = 0;
  for (const Type &type : op.resultTypes())
    bytes += type.byteSize();
  // FLOPs, not a measured `cost` (nanoseconds with `costs="measured"`).
  return overCheapFlops(ruleFlops(op), bytes);
}

} // namespace remat

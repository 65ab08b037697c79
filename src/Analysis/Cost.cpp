//===- Cost.cpp - FLOP costs from the registry ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Cost.h"

#include "remat/IR/Graph.h"

namespace remat {

int64_t opFlops(const Op &op) {
  // The Builder only accepts an int `cost`; anything else falls back to the
  // registry's estimate.
  if (const Attribute *cost = op.findAttr(kCostAttr))
    if (cost->is(AttrKind::Int))
      return cost->asInt();
  if (!op.def().flops)
    return 0;
  llvm::SmallVector<Type, 4> operandTypes = op.operandTypes();
  llvm::SmallVector<Type, 2> resultTypes = op.resultTypes();
  return op.def().flops(op.signature(operandTypes), resultTypes);
}

int64_t graphFlops(const Graph &graph) {
  int64_t total = 0;
  for (const Op &op : graph.ops())
    total += opFlops(op);
  return total;
}

} // namespace remat

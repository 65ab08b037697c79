//===- ForcedOrder.h - Control dependencies as data --------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The runtime's order follows data alone (ONNX Runtime's default is a
/// depth-first walk back from the unread nodes: a node runs just before its
/// first reader, and unread ones, the parameter gradients, all at the end).
/// So, as the ops are lowered in schedule order, each op also waits, by
/// data, for the ops it follows by control and for the unread results
/// scheduled before it: its smallest float operand `k` is read as
/// `k - (z1 + z2 + ...)`, each `z` the zero of an awaited value (Waits.h).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_FORCEDORDER_H
#define REMAT_SRC_IO_ONNXEXPORT_FORCEDORDER_H

#include "ExportContext.h"
#include "Waits.h"

#include <string>
#include <vector>

namespace remat::onnxexport {

/// One op's nodes in the exported graph, `[begin, end)` of its node list,
/// and the tensor they must follow: the zero its forced dependencies made
/// (`followsZero`), else its latest-written operand (none where every
/// operand is a leaf). Following the zero rather than the operand it
/// rebinds pins also the nodes that read only that operand: redundant as
/// dependencies, but extra edges change ONNX Runtime's depth-first order
/// (docs/export.md).
struct OpNodes {
  const Op *op = nullptr;
  int begin = 0, end = 0;
  std::string follows;
  bool followsZero = false;
};

class ForcedOrder {
public:
  ForcedOrder(Waits &waits, const ValueNames &names)
      : waits_(waits), names_(names) {}

  /// Before the op of `ctx` is lowered: rebinds its smallest float operand
  /// to wait for what the op follows. An error where a control dependency
  /// cannot be carried (no float operand, or a trigger with no float result).
  absl::Status apply(ExportContext &ctx);

  /// After the op is lowered to the nodes `[begin, end)`: records what they
  /// follow, and the op's unread results, which the next op waits for.
  /// Those of an op whose other results are read count too: a batch norm's
  /// gradient has its input's gradient read on, and the nodes of its
  /// scale's and bias's, left unread, would run at the step's end, holding
  /// two activation-sized operands until then.
  void lowered(const Op &op, int begin, int end);

  /// Every lowered op's nodes, in node order: the step's result.
  std::vector<OpNodes> takeOpNodes() { return std::move(opNodes_); }

private:
  Waits &waits_;
  const ValueNames &names_;
  std::vector<const Value *> unread_;
  /// The zero the current op's rebound operand waits for.
  std::string awaitedZero_;
  /// Each lowered op's place in the schedule.
  llvm::DenseMap<const Op *, int> position_;
  std::vector<OpNodes> opNodes_;
};

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_FORCEDORDER_H

//===- Waits.h - Nodes that wait for tensors by data -------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// ONNX has no control dependencies, and a runtime orders nodes by data
/// alone. So a node made to wait for a tensor reads one of its inputs `t` as
/// `t - z`, `z` the tensor's zero: `0 * float(bool(g0))` of its first element
/// `g0`, `+0` for every `g0` (infinities and NaN included), which no
/// optimizer folds away (docs/export.md). Every step of the export that
/// orders nodes waits through this unit: the forced order of the lowering,
/// the pins, the peak-order waits; the idle-buffer hiding computes its dims
/// from a zero too.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_WAITS_H
#define REMAT_SRC_IO_ONNXEXPORT_WAITS_H

#include "OnnxGraph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <utility>

namespace remat::onnxexport {

/// A new zero of `tensor` (of `dtype`, at least one element), of shape [1]
/// and type `dtype`: it exists only once the tensor does.
std::string makeZero(NodeBuilder &at, const std::string &tensor, DType dtype);

/// The zeros the export has made, and the waits that read them.
class Waits {
public:
  explicit Waits(OnnxGraph &graph) : graph_(graph) {}

  /// Starts a step: the zeros made before are not reused (they may lie after
  /// a node the step makes wait), though they are still known as zeros.
  void beginStep() { zeroOf_.clear(); }

  /// The zero of `tensor` (of `dtype`): made now on the step's first
  /// request, reused after.
  std::string zeroOf(NodeBuilder &at, const std::string &tensor, DType dtype);
  bool hasZeroOf(const std::string &tensor) const {
    return zeroOf_.count(tensor) != 0;
  }

  /// One zero of `dtype` that exists once every tensor of `tensors` (name,
  /// type) does: the sum of their zeros, each cast to `dtype`.
  std::string zeroOfAll(NodeBuilder &at,
                        llvm::ArrayRef<std::pair<std::string, DType>> tensors,
                        DType dtype);

  /// `input` read as `input - zero`, a new tensor.
  std::string waiting(NodeBuilder &at, const std::string &input,
                      const std::string &zero);

  /// Makes `node` wait for `tensor` (indexed): it reads input `slot` (a
  /// float tensor) as `t - z`, `z` the tensor's zero (`zeroOf`).
  void wait(NodeBuilder &at, onnx::NodeProto &node, int slot,
            const std::string &tensor);
  /// Likewise through `zero`, a zero this unit made.
  void waitThrough(NodeBuilder &at, onnx::NodeProto &node, int slot,
                   const std::string &zero);

private:
  /// `zero` as a zero of the ONNX element type `onnxType`.
  std::string zeroAs(NodeBuilder &at, const std::string &zero, int onnxType);
  /// Notes `zero` as a zero of the ONNX element type `onnxType`.
  const std::string &note(const std::string &zero, int onnxType);

  OnnxGraph &graph_;
  /// The ONNX element type of every zero made.
  llvm::StringMap<int> zeroType_;
  /// The step's zero of each tensor.
  llvm::StringMap<std::string> zeroOf_;
};

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_WAITS_H

//===- OnnxGraph.h - The ONNX graph an export writes -------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The model an export writes, as every step sees it: its node list, the
/// names it has taken, and, once the lowerings are done, every tensor's type
/// (`index`). Nodes are added through a NodeBuilder, which names them after
/// what they are added for; the steps after the lowerings rewrite the node
/// list with `rebuildNodes`.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_ONNXEXPORT_ONNXGRAPH_H
#define REMAT_SRC_IO_ONNXEXPORT_ONNXGRAPH_H

#include "TensorInfos.h"

#include "remat/IR/Type.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace remat::onnxexport {

/// The ONNX element type of `dtype`.
int onnxElementType(DType dtype);
/// The remat type of a float ONNX element type (DOUBLE, else FLOAT).
DType floatDType(int onnxType);

/// One attribute of a node, built by the helpers below.
using NodeAttr = onnx::AttributeProto;
NodeAttr intAttr(llvm::StringRef name, int64_t value);
NodeAttr floatAttr(llvm::StringRef name, double value);
NodeAttr intsAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> values);
NodeAttr stringAttr(llvm::StringRef name, llvm::StringRef value);

class OnnxGraph {
public:
  explicit OnnxGraph(onnx::ModelProto &model)
      : model_(model), graph_(*model.mutable_graph()) {}

  onnx::GraphProto &proto() { return graph_; }

  /// Keeps fresh names off `name` (every remat value's name, up front).
  void reserve(llvm::StringRef name) { taken_.insert(name); }
  /// `base.hint` (`hint` where `base` is empty), numbered where taken.
  std::string freshName(llvm::StringRef base, llvm::StringRef hint);

  /// Infers every tensor's type (TensorInfos::infer); steps that add
  /// nodes after it record the tensors they read so in `infos()`.
  absl::Status index();
  TensorInfos &infos() { return infos_; }

  /// Takes every node out and puts it back in order: `before(i, node)` runs
  /// just before node `i` is put back and `after(i)` just after, so that the
  /// nodes they add land there.
  void rebuildNodes(llvm::function_ref<void(int, onnx::NodeProto &)> before,
                    llvm::function_ref<void(int)> after = nullptr);

private:
  onnx::ModelProto &model_;
  onnx::GraphProto &graph_;
  llvm::StringSet<> taken_;
  int nextName_ = 0;
  TensorInfos infos_;
};

/// Adds nodes and constants to an OnnxGraph, each named after `base` (the
/// op being lowered, or the node a step adds them for), so that a runtime's
/// profile and errors point back at it.
class NodeBuilder {
public:
  NodeBuilder(OnnxGraph &graph, std::string base)
      : graph_(graph), base_(std::move(base)) {}

  OnnxGraph &graph() const { return graph_; }

  /// Adds a node computing `outputs` (names, unique in the model) from
  /// `inputs` (an empty name is an absent optional input).
  void emit(llvm::StringRef opType, std::vector<std::string> inputs,
            std::vector<std::string> outputs, std::vector<NodeAttr> attrs = {});
  /// Adds a node with one output of a fresh name, and returns the name.
  std::string temp(llvm::StringRef opType, std::vector<std::string> inputs,
                   std::vector<NodeAttr> attrs = {});
  std::string freshName(llvm::StringRef hint) {
    return graph_.freshName(base_, hint);
  }

  /// Constants, as initializers (a runtime folds them, never recomputes).
  std::string int64s(llvm::ArrayRef<int64_t> values);
  std::string scalar(double value, DType dtype);
  std::string scalarBool(bool value);
  std::string floats(llvm::ArrayRef<double> values,
                     llvm::ArrayRef<int64_t> shape, DType dtype);
  std::string bools(const std::vector<bool> &values,
                    llvm::ArrayRef<int64_t> shape);

  /// `name` read with the dims `shape` (a Reshape; free in every runtime).
  std::string reshaped(const std::string &name, llvm::ArrayRef<int64_t> shape);

private:
  onnx::TensorProto &initializer(int onnxType);

  OnnxGraph &graph_;
  std::string base_;
};

} // namespace remat::onnxexport

#endif // REMAT_SRC_IO_ONNXEXPORT_ONNXGRAPH_H

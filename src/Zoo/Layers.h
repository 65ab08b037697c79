//===- Layers.h - Building blocks shared by the zoo models ------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A `Net` wraps a Builder for one zoo graph and remembers the region where the
/// first error happened; the free functions build the layers several models
/// share (convolution, batch norm, dense, layer norm, the loss). Each layer
/// declares its parameters as `<name>.w`, `<name>.b`, `<name>.gamma` and
/// `<name>.beta` and names its result `<name>`. Like the sticky Builder, every
/// helper returns null once an operand is null. Private to src/Zoo.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_ZOO_LAYERS_H
#define REMAT_SRC_ZOO_LAYERS_H

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>

namespace remat::zoo {

/// One zoo graph under construction.
class Net {
public:
  explicit Net(std::string graphName)
      : graph_(std::make_unique<Graph>(std::move(graphName))),
        builder_(*graph_) {}

  Builder &builder() { return builder_; }
  Graph &graph() { return *graph_; }

  Value *input(const std::string &name, Type type) {
    return builder_.input(name, std::move(type));
  }
  Value *param(const std::string &name, Type type) {
    return builder_.param(name, std::move(type));
  }
  /// Sticky creation of a one-result op whose result is named `name`.
  Value *op(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
            AttrList attrs, const std::string &name);
  /// Sticky creation naming every result.
  Op *create(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
             AttrList attrs, llvm::ArrayRef<std::string> resultNames);

  /// Makes `loss` the first output and hands the graph over; on a build error,
  /// the error prefixed with `model` and the region of the failing op.
  absl::StatusOr<std::unique_ptr<Graph>> finish(llvm::StringRef model,
                                                Value *loss);

private:
  std::unique_ptr<Graph> graph_;
  Builder builder_;
  bool failed_ = false;
  std::string failedRegion_;
};

/// An f32 tensor type.
inline Type f32(llvm::ArrayRef<int64_t> shape) {
  return Type(DType::F32, shape);
}
/// An i32 tensor type (token ids, class labels).
inline Type i32(llvm::ArrayRef<int64_t> shape) {
  return Type(DType::I32, shape);
}

/// A square 2-D convolution.
struct ConvSpec {
  int64_t out;
  int64_t kernel;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t groups = 1;
  /// Adds a `[out, 1, 1]` bias, broadcast over N, H and W.
  bool bias = false;
};

/// conv2d of NCHW `x` with weight `<name>.w : [out, C/groups, k, k]`.
Value *conv2d(Net &net, Value *x, const ConvSpec &spec,
              const std::string &name);
/// Training-mode batch norm over axis 1; the batch statistics are results
/// `<name>.mean` and `<name>.var`.
Value *batchNorm(Net &net, Value *x, const std::string &name);
Value *relu(Net &net, Value *x, const std::string &name);
/// conv2d and batch norm, named `<name>` and `<name>.bn`.
Value *convBn(Net &net, Value *x, const ConvSpec &spec,
              const std::string &name);
/// conv2d, batch norm and relu, named `<name>`, `<name>.bn` and `<name>.relu`.
Value *convBnRelu(Net &net, Value *x, const ConvSpec &spec,
                  const std::string &name);
/// `x @ w (+ b)` for `x : [..., in]`, `w : [in, out]`, `b : [out]`.
Value *dense(Net &net, Value *x, int64_t out, const std::string &name,
             bool bias = true);
/// Layer norm over the last dimension with `<name>.gamma` and `<name>.beta`.
Value *layerNorm(Net &net, Value *x, const std::string &name);
/// Reshapes `[N, ...]` to `[N, prod(...)]`.
Value *flatten(Net &net, Value *x, const std::string &name);
/// An f32 scalar constant.
Value *scalarConstant(Net &net, double value, const std::string &name);
/// The mean softmax cross-entropy of `logits : [..., C]` against integer
/// `labels : [...]`, named `loss`.
Value *crossEntropyLoss(Net &net, Value *logits, Value *labels);

} // namespace remat::zoo

#endif // REMAT_SRC_ZOO_LAYERS_H

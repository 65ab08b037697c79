//===- OnnxTestModels.h - ONNX models built in C++ for tests -----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A small ModelProto builder, and the models the importer's tests use: so
/// that no test needs Python. `remat-onnx-fixtures DIR` writes the named
/// models as .onnx files for the CLI tests and the fuzzer's seeds.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_ONNX_ONNXTESTMODELS_H
#define REMAT_TESTS_ONNX_ONNXTESTMODELS_H

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace remat::testing {

/// Builds a ModelProto node by node. Dimensions of -1 in an input are
/// dynamic (`dim_param` "N").
class OnnxModelBuilder {
public:
  explicit OnnxModelBuilder(int64_t opset = 17);

  void input(const std::string &name, std::vector<int64_t> dims,
             int elemType = onnx::TensorProto::FLOAT);
  void output(const std::string &name, std::vector<int64_t> dims);
  void floats(const std::string &name, std::vector<int64_t> dims,
              std::vector<float> values);
  void ints(const std::string &name, std::vector<int64_t> dims,
            std::vector<int64_t> values);
  /// Float initializer of `dims` filled with a deterministic pattern.
  void weights(const std::string &name, std::vector<int64_t> dims,
               float scale = 0.3f);
  /// A Constant node holding int64 `values` (rank 1, or a scalar if `scalar`).
  void constInts(const std::string &name, std::vector<int64_t> values,
                 bool scalar = false);
  void constFloat(const std::string &name, float value);

  onnx::NodeProto &node(const std::string &opType,
                        std::vector<std::string> inputs,
                        std::vector<std::string> outputs);

  std::string bytes() const;
  onnx::ModelProto &model() { return model_; }

private:
  onnx::ModelProto model_;
  int nodes_ = 0;
};

void setAttr(onnx::NodeProto &node, const std::string &name, int64_t value);
void setAttr(onnx::NodeProto &node, const std::string &name, float value);
void setAttr(onnx::NodeProto &node, const std::string &name,
             std::vector<int64_t> values);
void setAttr(onnx::NodeProto &node, const std::string &name,
             const std::string &value);

/// conv (bias, pads) -> BatchNormalization (training mode at `opset`, or eval)
/// -> Relu -> MaxPool -> grouped conv with asymmetric pads -> Clip (ReLU6)
/// -> AveragePool -> GlobalAveragePool -> Flatten -> Gemm (transB, alpha):
/// input `x` [N, 3, H, W] (all three dynamic), output `logits` [N, 5].
std::string tinyConvNet(int64_t opset, bool training);

/// One post-norm transformer encoder layer as PyTorch 1.13 exports it:
/// self-attention with heads split by Shape/Gather/Concat/Reshape chains,
/// Softmax, an erf-form Gelu MLP, Dropout in training mode and
/// LayerNormalization (opset 17) or its ReduceMean/Pow/Sqrt form (13):
/// input `x` [4, 16, 32], output `y` [4, 16, 32]. At opset 20, as PyTorch 2
/// writes: Split by num_outputs, a CastLike constant, ReduceMean with an
/// axes input, and the Gelu op.
std::string tinyTransformerLayer(int64_t opset);

/// A model without nodes: input `x` [2, 3], output `nope`, which nothing
/// defines (a malformed model, and a seed of the import fuzzer's corpus).
std::string noNodesUndefinedOutput();

/// A model whose large float initializers (raw data of more than 16
/// elements, as `weights` writes) keep their data in an external file, and
/// that file's bytes.
struct ExternalModel {
  std::string model, data;
};

/// `bytes` with its large float initializers moved to `location`.
ExternalModel withExternalData(const std::string &bytes,
                               const std::string &location);

/// Every named model, for the fixtures tool.
std::vector<std::pair<std::string, std::string>> allTestModels();

/// Files by name: a conv net (opset 20) with its weights in
/// `convnet-external-op20.onnx.data`, and models whose external data is
/// short, outside their directory or missing.
std::vector<std::pair<std::string, std::string>> externalDataFiles();

/// Well-formed models the importer refuses, each with one located line:
/// opset 21, Gelu's tanh form, an op of opset 18 remat does not convert.
std::vector<std::pair<std::string, std::string>> unsupportedModels();

} // namespace remat::testing

#endif // REMAT_TESTS_ONNX_ONNXTESTMODELS_H

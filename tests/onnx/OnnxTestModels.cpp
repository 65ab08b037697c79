//===- OnnxTestModels.cpp - ONNX models built in C++ for tests -------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestModels.h"

#include <cmath>
#include <cstring>

namespace remat::testing {

OnnxModelBuilder::OnnxModelBuilder(int64_t opset) {
  // Opsets 19 and 20 came with IR version 9, which libonnx 1.12 predates.
  model_.set_ir_version(opset >= 19 ? 9 : 8);
  model_.set_producer_name("remat-tests");
  onnx::OperatorSetIdProto *id = model_.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

void OnnxModelBuilder::input(const std::string &name, std::vector<int64_t> dims,
                             int elemType) {
  onnx::ValueInfoProto *info = model_.mutable_graph()->add_input();
  info->set_name(name);
  onnx::TypeProto_Tensor *tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elemType);
  onnx::TensorShapeProto *shape = tensor->mutable_shape();
  for (int64_t dim : dims) {
    if (dim < 0)
      shape->add_dim()->set_dim_param("N");
    else
      shape->add_dim()->set_dim_value(dim);
  }
}

void OnnxModelBuilder::output(const std::string &name,
                              std::vector<int64_t> dims) {
  onnx::ValueInfoProto *info = model_.mutable_graph()->add_output();
  info->set_name(name);
  onnx::TypeProto_Tensor *tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto *shape = tensor->mutable_shape();
  for (int64_t dim : dims) {
    if (dim < 0)
      shape->add_dim()->set_dim_param("N");
    else
      shape->add_dim()->set_dim_value(dim);
  }
}

static onnx::TensorProto tensorProto(const std::string &name,
                                     const std::vector<int64_t> &dims, int type) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(type);
  for (int64_t dim : dims)
    proto.add_dims(dim);
  return proto;
}

void OnnxModelBuilder::floats(const std::string &name, std::vector<int64_t> dims,
                              std::vector<float> values) {
  onnx::TensorProto proto = tensorProto(name, dims, onnx::TensorProto::FLOAT);
  for (float v : values)
    proto.add_float_data(v);
  *model_.mutable_graph()->add_initializer() = std::move(proto);
}

void OnnxModelBuilder::ints(const std::string &name, std::vector<int64_t> dims,
                            std::vector<int64_t> values) {
  onnx::TensorProto proto = tensorProto(name, dims, onnx::TensorProto::INT64);
  for (int64_t v : values)
    proto.add_int64_data(v);
  *model_.mutable_graph()->add_initializer() = std::move(proto);
}

void OnnxModelBuilder::weights(const std::string &name,
                               std::vector<int64_t> dims, float scale) {
  int64_t count = 1;
  for (int64_t dim : dims)
    count *= dim;
  // Raw little-endian bytes, as PyTorch writes them.
  onnx::TensorProto proto = tensorProto(name, dims, onnx::TensorProto::FLOAT);
  std::string raw(size_t(count) * 4, '\0');
  for (int64_t i = 0; i < count; ++i) {
    float v = scale * float(std::sin(double(i) * 1.7 + double(name.size())));
    std::memcpy(&raw[size_t(i) * 4], &v, 4);
  }
  proto.set_raw_data(raw);
  *model_.mutable_graph()->add_initializer() = std::move(proto);
}

void OnnxModelBuilder::constInts(const std::string &name,
                                 std::vector<int64_t> values, bool scalar) {
  onnx::NodeProto &n = node("Constant", {}, {name});
  onnx::AttributeProto *a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto proto = tensorProto(
      name, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(values.size())},
      onnx::TensorProto::INT64);
  for (int64_t v : values)
    proto.add_int64_data(v);
  *a->mutable_t() = std::move(proto);
}

void OnnxModelBuilder::constFloat(const std::string &name, float value) {
  onnx::NodeProto &n = node("Constant", {}, {name});
  onnx::AttributeProto *a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto proto = tensorProto(name, {}, onnx::TensorProto::FLOAT);
  proto.add_float_data(value);
  *a->mutable_t() = std::move(proto);
}

onnx::NodeProto &OnnxModelBuilder::node(const std::string &opType,
                                        std::vector<std::string> inputs,
                                        std::vector<std::string> outputs) {
  onnx::NodeProto *n = model_.mutable_graph()->add_node();
  n->set_op_type(opType);
  n->set_name("/" + opType + "_" + std::to_string(nodes_++));
  for (const std::string &in : inputs)
    n->add_input(in);
  for (const std::string &out : outputs)
    n->add_output(out);
  return *n;
}

std::string OnnxModelBuilder::bytes() const {
  return model_.SerializeAsString();
}

void setAttr(onnx::NodeProto &node, const std::string &name, int64_t value) {
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void setAttr(onnx::NodeProto &node, const std::string &name, float value) {
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

void setAttr(onnx::NodeProto &node, const std::string &name,
             std::vector<int64_t> values) {
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    a->add_ints(v);
}

void setAttr(onnx::NodeProto &node, const std::string &name,
             const std::string &value) {
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

std::string tinyConvNet(int64_t opset, bool training) {
  OnnxModelBuilder b(opset);
  b.input("x", {-1, 3, -1, -1});
  b.weights("conv1.weight", {4, 3, 3, 3});
  b.weights("conv1.bias", {4}, 0.1f);
  onnx::NodeProto &conv1 = b.node("Conv", {"x", "conv1.weight", "conv1.bias"}, {"c1"});
  setAttr(conv1, "pads", std::vector<int64_t>{1, 1, 1, 1});
  setAttr(conv1, "kernel_shape", std::vector<int64_t>{3, 3});
  b.floats("bn1.weight", {4}, {1.0f, 0.9f, 1.1f, 1.2f});
  b.floats("bn1.bias", {4}, {0.0f, 0.1f, -0.1f, 0.2f});
  b.floats("bn1.running_mean", {4}, {0.1f, -0.2f, 0.0f, 0.3f});
  b.floats("bn1.running_var", {4}, {1.0f, 0.5f, 2.0f, 1.5f});
  std::vector<std::string> bnOutputs = {"b1"};
  if (training) {
    bnOutputs = {"b1", "bn1.mean_out", "bn1.var_out"};
    if (opset < 14) {
      bnOutputs.push_back("bn1.saved_mean");
      bnOutputs.push_back("bn1.saved_var");
    }
  }
  onnx::NodeProto &bn = b.node("BatchNormalization",
                               {"c1", "bn1.weight", "bn1.bias",
                                "bn1.running_mean", "bn1.running_var"},
                               bnOutputs);
  setAttr(bn, "epsilon", 1e-5f);
  setAttr(bn, "momentum", 0.9f);
  if (opset >= 14 && training)
    setAttr(bn, "training_mode", int64_t(1));
  b.node("Relu", {"b1"}, {"r1"});
  onnx::NodeProto &pool = b.node("MaxPool", {"r1"}, {"p1"});
  setAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  setAttr(pool, "strides", std::vector<int64_t>{2, 2});
  b.weights("conv2.weight", {4, 2, 3, 3});
  onnx::NodeProto &conv2 = b.node("Conv", {"p1", "conv2.weight"}, {"c2"});
  setAttr(conv2, "group", int64_t(2));
  setAttr(conv2, "pads", std::vector<int64_t>{0, 0, 1, 1});
  b.constFloat("zero", 0.0f);
  b.constFloat("six", 0.5f);
  b.node("Clip", {"c2", "zero", "six"}, {"r2"});
  onnx::NodeProto &avg = b.node("AveragePool", {"r2"}, {"a2"});
  setAttr(avg, "kernel_shape", std::vector<int64_t>{2, 2});
  setAttr(avg, "strides", std::vector<int64_t>{1, 1});
  setAttr(avg, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("GlobalAveragePool", {"a2"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  b.weights("fc.weight", {5, 4});
  b.weights("fc.bias", {5}, 0.1f);
  onnx::NodeProto &gemm = b.node("Gemm", {"f", "fc.weight", "fc.bias"}, {"logits"});
  setAttr(gemm, "transB", int64_t(1));
  setAttr(gemm, "alpha", 1.5f);
  b.output("logits", {-1, 5});
  return b.bytes();
}

std::string tinyTransformerLayer(int64_t opset) {
  OnnxModelBuilder b(opset);
  const int64_t batch = 4, seq = 16, dim = 32, heads = 2, headDim = 16,
                ffn = 64;
  b.input("x", {batch, seq, dim});
  b.weights("attn.in_proj_weight_t", {dim, 3 * dim});
  b.weights("attn.in_proj_bias", {3 * dim}, 0.1f);
  b.node("MatMul", {"x", "attn.in_proj_weight_t"}, {"qkv0"});
  b.node("Add", {"qkv0", "attn.in_proj_bias"}, {"qkv"});
  if (opset >= 18) {
    onnx::NodeProto &split = b.node("Split", {"qkv"}, {"q", "k", "v"});
    setAttr(split, "axis", int64_t(-1));
    setAttr(split, "num_outputs", int64_t(3));
  } else {
    b.ints("split_sizes", {3}, {dim, dim, dim});
    onnx::NodeProto &split =
        b.node("Split", {"qkv", "split_sizes"}, {"q", "k", "v"});
    setAttr(split, "axis", int64_t(-1));
  }
  // The exporter's shape chain: [Shape(q)[0], Shape(q)[1], heads, headDim].
  b.node("Shape", {"q"}, {"q_shape"});
  b.constInts("zero_index", {0}, /*scalar=*/true);
  b.constInts("one_index", {1}, /*scalar=*/true);
  b.node("Gather", {"q_shape", "zero_index"}, {"n"});
  b.node("Gather", {"q_shape", "one_index"}, {"s"});
  b.constInts("unsq_axes", {0});
  b.node("Unsqueeze", {"n", "unsq_axes"}, {"n1"});
  b.node("Unsqueeze", {"s", "unsq_axes"}, {"s1"});
  b.constInts("head_dims", {heads, headDim});
  setAttr(b.node("Concat", {"n1", "s1", "head_dims"}, {"head_shape"}), "axis",
          int64_t(0));
  for (const char *t : {"q", "k", "v"}) {
    std::string name = t;
    b.node("Reshape", {name, "head_shape"}, {name + "_heads"});
    setAttr(b.node("Transpose", {name + "_heads"}, {name + "_t"}), "perm",
            name == "k" ? std::vector<int64_t>{0, 2, 3, 1}
                        : std::vector<int64_t>{0, 2, 1, 3});
  }
  b.node("MatMul", {"q_t", "k_t"}, {"scores0"});
  if (opset >= 15) {
    // PyTorch 2's exporter types its constants with CastLike.
    b.constFloat("scale_any", 4.0f);
    b.node("CastLike", {"scale_any", "scores0"}, {"scale"});
  } else {
    b.constFloat("scale", 4.0f);
  }
  b.node("Div", {"scores0", "scale"}, {"scores"});
  setAttr(b.node("Softmax", {"scores"}, {"probs"}), "axis", int64_t(-1));
  b.node("MatMul", {"probs", "v_t"}, {"ctx_t"});
  setAttr(b.node("Transpose", {"ctx_t"}, {"ctx"}), "perm",
          std::vector<int64_t>{0, 2, 1, 3});
  b.constInts("model_shape", {batch, seq, dim});
  b.node("Reshape", {"ctx", "model_shape"}, {"ctx_flat"});
  b.weights("attn.out_proj.weight_t", {dim, dim});
  b.node("MatMul", {"ctx_flat", "attn.out_proj.weight_t"}, {"attn_out"});
  b.floats("ratio", {}, {0.25f});
  std::vector<float> trueBit = {1.0f};
  onnx::TensorProto mode;
  mode.set_name("training");
  mode.set_data_type(onnx::TensorProto::BOOL);
  mode.add_int32_data(1);
  *b.model().mutable_graph()->add_initializer() = mode;
  b.node("Dropout", {"attn_out", "ratio", "training"}, {"attn_drop"});
  b.node("Add", {"x", "attn_drop"}, {"res1"});
  b.weights("norm1.weight", {dim}, 1.0f);
  b.weights("norm1.bias", {dim}, 0.1f);
  if (opset == 17) {
    setAttr(b.node("LayerNormalization", {"res1", "norm1.weight", "norm1.bias"},
                   {"h"}),
            "axis", int64_t(-1));
  } else {
    // The decomposition PyTorch exports below opset 17; from opset 18,
    // ReduceMean takes its axes as an input.
    auto mean = [&](const std::string &in, const std::string &out) {
      if (opset >= 18) {
        b.node("ReduceMean", {in, "last_axis"}, {out});
      } else {
        setAttr(b.node("ReduceMean", {in}, {out}), "axes",
                std::vector<int64_t>{-1});
      }
    };
    if (opset >= 18)
      b.constInts("last_axis", {-1});
    mean("res1", "mu");
    b.node("Sub", {"res1", "mu"}, {"centred"});
    b.constFloat("two", 2.0f);
    b.node("Pow", {"centred", "two"}, {"sq"});
    mean("sq", "var");
    b.constFloat("eps", 1e-5f);
    b.node("Add", {"var", "eps"}, {"var_eps"});
    b.node("Sqrt", {"var_eps"}, {"std"});
    b.node("Div", {"centred", "std"}, {"normal"});
    b.node("Mul", {"normal", "norm1.weight"}, {"scaled"});
    b.node("Add", {"scaled", "norm1.bias"}, {"h"});
  }
  b.weights("linear1.weight", {ffn, dim});
  b.weights("linear1.bias", {ffn}, 0.1f);
  // Linear on a 3-D input: MatMul by the transposed weight, then Add.
  setAttr(b.node("Transpose", {"linear1.weight"}, {"w1_t"}), "perm",
          std::vector<int64_t>{1, 0});
  b.node("MatMul", {"h", "w1_t"}, {"m1"});
  b.node("Add", {"m1", "linear1.bias"}, {"m1b"});
  if (opset >= 20) {
    setAttr(b.node("Gelu", {"m1b"}, {"gelu"}), "approximate",
            std::string("none"));
  } else {
    // Gelu as exported below opset 20: x * 0.5 * (1 + erf(x / sqrt(2))).
    b.constFloat("sqrt2", 1.41421354f);
    b.node("Div", {"m1b", "sqrt2"}, {"g0"});
    b.node("Erf", {"g0"}, {"g1"});
    b.constFloat("one", 1.0f);
    b.node("Add", {"g1", "one"}, {"g2"});
    b.node("Mul", {"m1b", "g2"}, {"g3"});
    b.constFloat("half", 0.5f);
    b.node("Mul", {"g3", "half"}, {"gelu"});
  }
  b.weights("linear2.weight_t", {ffn, dim});
  b.node("MatMul", {"gelu", "linear2.weight_t"}, {"m2"});
  b.node("Add", {"h", "m2"}, {"y"});
  b.output("y", {batch, seq, dim});
  return b.bytes();
}

std::string noNodesUndefinedOutput() {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.output("nope", {2, 3});
  return b.bytes();
}

ExternalModel withExternalData(const std::string &bytes,
                                const std::string &location) {
  onnx::ModelProto model;
  model.ParseFromString(bytes);
  ExternalModel result;
  for (onnx::TensorProto &init : *model.mutable_graph()->mutable_initializer()) {
    if (init.data_type() != onnx::TensorProto::FLOAT ||
        init.raw_data().size() <= 16 * 4)
      continue;
    size_t offset = result.data.size();
    result.data += init.raw_data();
    init.clear_raw_data();
    init.set_data_location(onnx::TensorProto::EXTERNAL);
    auto entry = [&](const char *key, const std::string &value) {
      onnx::StringStringEntryProto *e = init.add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    entry("location", location);
    entry("offset", std::to_string(offset));
    entry("length", std::to_string(result.data.size() - offset));
  }
  result.model = model.SerializeAsString();
  return result;
}

std::vector<std::pair<std::string, std::string>> allTestModels() {
  return {{"convnet-train-op13", tinyConvNet(13, true)},
          {"convnet-train-op15", tinyConvNet(15, true)},
          {"convnet-eval-op17", tinyConvNet(17, false)},
          {"convnet-train-op20", tinyConvNet(20, true)},
          {"transformer-op13", tinyTransformerLayer(13)},
          {"transformer-op17", tinyTransformerLayer(17)},
          {"transformer-op20", tinyTransformerLayer(20)},
          {"no-nodes-undefined-output", noNodesUndefinedOutput()}};
}

std::vector<std::pair<std::string, std::string>> externalDataFiles() {
  const std::string net = tinyConvNet(20, true);
  ExternalModel good = withExternalData(net, "convnet-external-op20.onnx.data");
  std::vector<std::pair<std::string, std::string>> files = {
      {"convnet-external-op20.onnx", good.model},
      {"convnet-external-op20.onnx.data", good.data},
      // Its data cut in half.
      {"external-short.onnx",
       withExternalData(net, "external-short.onnx.data").model},
      {"external-short.onnx.data", good.data.substr(0, good.data.size() / 2)}};
  // Locations that leave the model's directory or name nothing;
  // external-link.data is a symbolic link the test makes.
  for (const auto &[name, location] :
       std::vector<std::pair<std::string, std::string>>{
           {"external-parent", "../convnet-external-op20.onnx.data"},
           {"external-absolute", "/etc/hostname"},
           {"external-missing", "missing.onnx.data"},
           {"external-link", "external-link.data"}})
    files.push_back({name + ".onnx", withExternalData(net, location).model});
  return files;
}

std::vector<std::pair<std::string, std::string>> unsupportedModels() {
  std::vector<std::pair<std::string, std::string>> models;
  auto relu = [](int64_t opset) {
    OnnxModelBuilder b(opset);
    b.input("x", {2, 3});
    b.node("Relu", {"x"}, {"y"});
    b.output("y", {2, 3});
    return b.bytes();
  };
  models.push_back({"opset-21", relu(21)});
  OnnxModelBuilder gelu(20);
  gelu.input("x", {2, 3});
  setAttr(gelu.node("Gelu", {"x"}, {"y"}), "approximate", std::string("tanh"));
  gelu.output("y", {2, 3});
  models.push_back({"gelu-tanh-op20", gelu.bytes()});
  // Mish (opset 18) is unknown to libonnx 1.12 and unsupported by remat.
  OnnxModelBuilder mish(20);
  mish.input("x", {2, 3});
  mish.node("Mish", {"x"}, {"y"});
  mish.output("y", {2, 3});
  models.push_back({"mish-op20", mish.bytes()});
  return models;
}

} // namespace remat::testing

//===- Importer.cpp - ONNX model to remat graph -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The import driver: check the model, declare its inputs, convert its nodes
/// in their (topological) order with one converter per op type, then add the
/// loss. Names are kept as ONNX has them; the text IR quotes those it must.
///
//===----------------------------------------------------------------------===//

#include "ImportContext.h"
#include "Loss.h"
#include "OnnxModel.h"

#include "remat/IO/Onnx.h"
#include "remat/IR/Verifier.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <optional>

namespace remat {
namespace onnximport {
namespace {

const ConverterTable &converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    addElementwiseConverters(t);
    addNeuralConverters(t);
    addNormalizationConverters(t);
    addShapeConverters(t);
    return t;
  }();
  return table;
}

/// Checks the type the importer gave output `i` of the node against the one
/// ONNX's shape inference recorded, when it recorded a static one.
absl::Status checkInferred(ImportContext &ctx,
                           const llvm::StringMap<const onnx::ValueInfoProto *> &infos,
                           const onnx::NodeProto &node) {
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &name = node.output(i);
    auto it = infos.find(name);
    // Known tensors are checked by their folding, deferred transposes by
    // their readers; neither must be materialised just to be looked at.
    if (name.empty() || it == infos.end() || ctx.knownNamed(name) ||
        ctx.isDeferred(name))
      continue;
    absl::StatusOr<Type> expected =
        staticType(*it->second, ctx.fileName(), "value");
    if (!expected.ok())
      continue;
    absl::StatusOr<Value *> value = ctx.valueNamed(name);
    if (!value.ok())
      continue;
    if ((*value)->type().shape() != expected->shape())
      return ctx.error("output '{}' imports as {} but ONNX infers {}", name,
                       (*value)->type().str(), expected->str());
  }
  return absl::OkStatus();
}

/// The region of a node named as PyTorch names them,
/// `/layer1/layer1.0/conv1/Conv`: its module path `layer1/layer1.0/conv1`.
std::string regionOf(llvm::StringRef nodeName) {
  if (!nodeName.startswith("/"))
    return "";
  llvm::StringRef path = nodeName.drop_front().rsplit('/').first;
  return path == nodeName.drop_front() ? "" : path.str();
}

/// The converter of the current node of `ctx`, or the error that it has
/// none.
absl::StatusOr<Converter> converterFor(const ImportContext &ctx) {
  const onnx::NodeProto &node = ctx.node();
  if (!isDefaultDomain(node.domain()))
    return ctx.error("op domain '{}' is not supported", node.domain());
  const ConverterTable &table = converters();
  auto it = table.find(node.op_type());
  if (it == table.end())
    return ctx.error("op type {} (opset {}) is not supported; see "
                     "docs/import.md for the supported ops",
                     node.op_type(), ctx.opset());
  return it->second;
}

absl::StatusOr<std::unique_ptr<Graph>>
importModel(onnx::ModelProto &model, llvm::StringRef fileName,
            const OnnxImportOptions &options) {
  REMAT_ASSIGN_OR_RETURN(int64_t opset, defaultOpset(model, fileName));
  REMAT_RETURN_IF_ERROR(applyInputShapes(model, fileName, options.inputShapes));
  const onnx::GraphProto &graphProto = model.graph();
  auto graph = std::make_unique<Graph>(
      graphProto.name().empty() ? "main" : graphProto.name());
  graph->setSourceName(fileName.str());
  ImportContext ctx(*graph, fileName.str(), opset);

  // libonnx checks a newer model through a view at opset 17
  // (LibOnnxView.cpp), which writes only the ops the importer converts: an
  // op it does not is reported as such first, not as the view's.
  bool viewed = needsLibOnnxView(model);
  if (viewed) {
    for (const onnx::NodeProto &node : graphProto.node()) {
      ctx.setNode(&node);
      REMAT_RETURN_IF_ERROR(converterFor(ctx).status());
    }
    ctx.setNode(nullptr);
    auto noAxes = [](const std::string &) {
      return std::optional<std::vector<int64_t>>();
    };
    REMAT_RETURN_IF_ERROR(checkModel(libOnnxView(model, noAxes), fileName));
  } else {
    REMAT_RETURN_IF_ERROR(checkModel(model, fileName));
  }

  llvm::StringMap<bool> isInitializer;
  for (const onnx::TensorProto &init : graphProto.initializer()) {
    ctx.addInitializer(&init);
    isInitializer[init.name()] = true;
  }
  for (const onnx::ValueInfoProto &input : graphProto.input()) {
    if (isInitializer.count(input.name()))
      continue;
    REMAT_ASSIGN_OR_RETURN(Type type,
                           staticType(input, fileName, "graph input"));
    ctx.addGraphValue(input.name(), ctx.builder().input(input.name(), type));
  }
  for (const onnx::NodeProto &node : graphProto.node())
    for (const std::string &name : node.input())
      ctx.markUsed(name);
  for (const onnx::ValueInfoProto &output : graphProto.output())
    ctx.markUsed(output.name());
  for (const onnx::NodeProto &node : graphProto.node()) {
    ctx.setNode(&node);
    REMAT_ASSIGN_OR_RETURN(Converter convert, converterFor(ctx));
    ctx.builder().setRegion(regionOf(node.name()));
    REMAT_RETURN_IF_ERROR(convert(ctx));
  }
  // Only now, with every node accepted by its converter, is the model safe
  // to hand to libonnx's shape inference (see inferShapes); a view gets the
  // axes the converters found.
  std::optional<onnx::ModelProto> view;
  if (viewed)
    view = libOnnxView(model, [&](const std::string &name) {
      const KnownTensor *known = ctx.knownNamed(name);
      return known && !known->isFloat()
                 ? std::optional<std::vector<int64_t>>(known->ints)
                 : std::nullopt;
    });
  onnx::ModelProto &inferred = view ? *view : model;
  REMAT_RETURN_IF_ERROR(inferShapes(inferred, fileName));
  llvm::StringMap<const onnx::ValueInfoProto *> infos;
  for (const onnx::ValueInfoProto &info : inferred.graph().value_info())
    infos[info.name()] = &info;
  for (const onnx::NodeProto &node : graphProto.node()) {
    ctx.setNode(&node);
    REMAT_RETURN_IF_ERROR(checkInferred(ctx, infos, node));
  }
  ctx.builder().setRegion("");
  ctx.setNode(nullptr);
  if (graphProto.output_size() == 0)
    return invalidArgument("{}: error: the model has no outputs", fileName.str());
  std::vector<Value *> outputs;
  for (const onnx::ValueInfoProto &output : graphProto.output()) {
    absl::StatusOr<Value *> value = ctx.valueNamed(output.name());
    if (!value.ok())
      return invalidArgument("{}: error: graph output '{}' is not defined",
                             fileName.str(), output.name());
    outputs.push_back(*value);
  }
  REMAT_RETURN_IF_ERROR(addLoss(ctx, options.loss, outputs));
  for (Value *output : outputs)
    graph->addOutput(output);
  if (absl::Status verified = verify(*graph); !verified.ok())
    return invalidArgument("{}: error: the imported graph does not verify: {}",
                           fileName.str(), std::string(verified.message()));
  return graph;
}

} // namespace
} // namespace onnximport

using namespace onnximport;

absl::StatusOr<OnnxLoss> parseOnnxLoss(llvm::StringRef name) {
  if (name == "softmax_cross_entropy")
    return OnnxLoss::SoftmaxCrossEntropy;
  if (name == "mse")
    return OnnxLoss::Mse;
  if (name == "sum")
    return OnnxLoss::Sum;
  if (name == "output")
    return OnnxLoss::Output;
  return invalidArgument("unknown loss '{}' (losses: softmax_cross_entropy, "
                         "mse, sum, output)",
                         name.str());
}

absl::StatusOr<std::unique_ptr<Graph>>
importOnnx(llvm::StringRef bytes, llvm::StringRef fileName,
           const OnnxImportOptions &options) {
  REMAT_ASSIGN_OR_RETURN(onnx::ModelProto model, parseModel(bytes, fileName));
  return importModel(model, fileName, options);
}

/// The bytes of `path`, or an error naming it.
static absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>>
readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false);
  if (!buffer)
    return invalidArgument("{}: error: cannot read: {}", path.str(),
                           buffer.getError().message());
  return std::move(*buffer);
}

absl::StatusOr<std::unique_ptr<Graph>>
importOnnxFile(llvm::StringRef path, const OnnxImportOptions &options) {
  REMAT_ASSIGN_OR_RETURN(auto buffer, readFile(path));
  return importOnnx(buffer->getBuffer(), path == "-" ? "<stdin>" : path,
                    options);
}

absl::StatusOr<std::map<std::string, HostTensor, std::less<>>>
readOnnxTensorsFile(llvm::StringRef path) {
  REMAT_ASSIGN_OR_RETURN(auto buffer, readFile(path));
  return readOnnxTensors(buffer->getBuffer(), path == "-" ? "<stdin>" : path);
}

} // namespace remat

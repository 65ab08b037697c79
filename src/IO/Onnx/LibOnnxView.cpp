//===- LibOnnxView.cpp - Newer models as libonnx 1.12 reads them ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// libonnx 1.12, whose checker and shape inference the importer runs, knows
/// default-domain opsets up to 17 and IR versions up to 8. A newer model is
/// checked as a view of it at opset 17 and IR 8: the same graph, with each
/// node whose operator changed its signature in opsets 18 to 20 written in
/// its opset-17 form. Only the checks see the view; the converters read the
/// model itself.
///
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"

namespace remat::onnximport {
namespace {

/// The reductions whose axes moved from an attribute to input 1 in opset 18
/// (ReduceSum's moved in 13).
bool axesBecameInput(llvm::StringRef op) {
  return op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" ||
         op == "ReduceProd" || op == "ReduceL1" || op == "ReduceL2" ||
         op == "ReduceLogSum" || op == "ReduceLogSumExp" ||
         op == "ReduceSumSquare";
}


void eraseAttribute(onnx::NodeProto &node, llvm::StringRef name) {
  auto *attributes = node.mutable_attribute();
  for (int i = attributes->size() - 1; i >= 0; --i)
    if (attributes->Get(i).name() == name)
      attributes->DeleteSubrange(i, 1);
}

/// A reduction of opset 18 in its opset-13 form: known axes become the
/// attribute (unknown ones are dropped), and a reduction over no axes with
/// noop_with_empty_axes is an Identity.
void viewReduction(onnx::NodeProto &node, const KnownAxes &knownAxes) {
  std::vector<int64_t> axes;
  if (node.input_size() > 1) {
    if (std::optional<std::vector<int64_t>> known = knownAxes(node.input(1)))
      axes = *known;
    node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
  }
  bool noop = false;
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == "noop_with_empty_axes")
      noop = a.i() != 0;
  eraseAttribute(node, "noop_with_empty_axes");
  if (axes.empty() && noop) {
    node.set_op_type("Identity");
    node.clear_attribute();
    return;
  }
  if (axes.empty())
    return;
  onnx::AttributeProto *attr = node.add_attribute();
  attr->set_name("axes");
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t axis : axes)
    attr->add_ints(axis);
}

/// Writes `node`, of an opset from 18 to 20, in its opset-17 form.
void viewNode(onnx::NodeProto &node, const KnownAxes &knownAxes) {
  const std::string &op = node.op_type();
  if (axesBecameInput(op)) {
    viewReduction(node, knownAxes);
  } else if (op == "Split") {
    // Without it, Split-13 splits into as many equal parts as it has
    // outputs, as num_outputs does when the dimension divides evenly (the
    // converter rejects the uneven case).
    eraseAttribute(node, "num_outputs");
  } else if (op == "Gelu") {
    // Opset 20's Gelu: for the checks, an elementwise op of the same shape.
    node.set_op_type("Erf");
    node.clear_attribute();
  } else if (op == "Cast" || op == "CastLike") {
    eraseAttribute(node, "saturate"); // opset 19: float8 targets only
  } else if (op == "AveragePool") {
    eraseAttribute(node, "dilations"); // opset 19; the converter checks it
  }
}

} // namespace

bool needsLibOnnxView(const onnx::ModelProto &model) {
  if (model.ir_version() > kLibOnnxIrVersion)
    return true;
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    if (isDefaultDomain(opset.domain()) &&
        opset.version() > kLibOnnxOpset)
      return true;
  return false;
}

onnx::ModelProto libOnnxView(const onnx::ModelProto &model,
                             const KnownAxes &knownAxes) {
  onnx::ModelProto view = model;
  view.set_ir_version(std::min<int64_t>(view.ir_version(), kLibOnnxIrVersion));
  bool newerOpset = false;
  for (onnx::OperatorSetIdProto &opset : *view.mutable_opset_import())
    if (isDefaultDomain(opset.domain()) &&
        opset.version() > kLibOnnxOpset) {
      opset.set_version(kLibOnnxOpset);
      newerOpset = true;
    }
  // Functions import their own opsets; the importer calls none (their
  // nodes are of other domains or unknown op types, errors of their own).
  view.clear_functions();
  if (!newerOpset)
    return view;
  for (onnx::NodeProto &node : *view.mutable_graph()->mutable_node())
    if (isDefaultDomain(node.domain()))
      viewNode(node, knownAxes);
  return view;
}

} // namespace remat::onnximport

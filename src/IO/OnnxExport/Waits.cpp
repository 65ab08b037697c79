//===- Waits.cpp - Nodes that wait for tensors by data ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Waits.h"

namespace remat::onnxexport {

std::string makeZero(NodeBuilder &at, const std::string &tensor, DType dtype) {
  std::string first =
      at.temp("Slice", {at.reshaped(tensor, {-1}), at.int64s({0}),
                        at.int64s({1})});
  // 0 or 1 whatever the element, infinities and NaN included: times 0,
  // always +0 (a product of the element itself would be NaN for those).
  std::string flag =
      at.temp("Cast", {first}, {intAttr("to", onnx::TensorProto::BOOL)});
  std::string unit =
      at.temp("Cast", {flag}, {intAttr("to", onnxElementType(dtype))});
  return at.temp("Mul", {unit, at.scalar(0.0, dtype)});
}

const std::string &Waits::note(const std::string &zero, int onnxType) {
  zeroType_[zero] = onnxType;
  return zero;
}

std::string Waits::zeroOf(NodeBuilder &at, const std::string &tensor,
                          DType dtype) {
  if (auto it = zeroOf_.find(tensor); it != zeroOf_.end())
    return it->second;
  std::string zero = makeZero(at, tensor, dtype);
  note(zero, onnxElementType(dtype));
  zeroOf_[tensor] = zero;
  return zero;
}

std::string Waits::zeroAs(NodeBuilder &at, const std::string &zero,
                          int onnxType) {
  if (zeroType_.lookup(zero) == onnxType)
    return zero;
  return note(at.temp("Cast", {zero}, {intAttr("to", onnxType)}), onnxType);
}

std::string
Waits::zeroOfAll(NodeBuilder &at,
                 llvm::ArrayRef<std::pair<std::string, DType>> tensors,
                 DType dtype) {
  int type = onnxElementType(dtype);
  std::string total;
  for (const auto &[tensor, tensorType] : tensors) {
    std::string zero = zeroAs(at, zeroOf(at, tensor, tensorType), type);
    total = total.empty() ? zero : note(at.temp("Add", {total, zero}), type);
  }
  return total;
}

std::string Waits::waiting(NodeBuilder &at, const std::string &input,
                           const std::string &zero) {
  return at.temp("Sub", {input, zero});
}

void Waits::waitThrough(NodeBuilder &at, onnx::NodeProto &node, int slot,
                        const std::string &zero) {
  TensorInfos &infos = graph_.infos();
  TensorInfo read = *infos.find(node.input(slot));
  std::string waited = waiting(at, node.input(slot), zeroAs(at, zero, read.type));
  infos.add(waited, std::move(read));
  node.set_input(slot, waited);
}

void Waits::wait(NodeBuilder &at, onnx::NodeProto &node, int slot,
                 const std::string &tensor) {
  // Any float type makes a zero; the tensor's own spares a Cast.
  const TensorInfo *info = graph_.infos().find(tensor);
  DType dtype = info ? floatDType(info->type) : DType::F32;
  waitThrough(at, node, slot, zeroOf(at, tensor, dtype));
}

} // namespace remat::onnxexport

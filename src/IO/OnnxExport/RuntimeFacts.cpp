//===- RuntimeFacts.cpp - What ONNX Runtime does with an op type -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "RuntimeFacts.h"

#include "llvm/ADT/StringSet.h"

namespace remat::onnxexport {

bool isViewOp(const std::string &opType) {
  return opType == "Reshape" || opType == "Identity" ||
         opType == "Squeeze" || opType == "Unsqueeze" || opType == "Flatten";
}

bool mayRunInPlace(const std::string &opType) {
  static const llvm::StringSet<> kinds = {
      "Relu", "Sigmoid",  "Tanh",     "LeakyRelu",   "Elu",
      "Selu", "Softplus", "Softsign", "HardSigmoid", "ThresholdedRelu",
      "Cast", "Dropout"};
  return kinds.contains(opType);
}

bool dimsFromValues(const std::string &opType) {
  return opType == "Expand" || opType == "ConstantOfShape" ||
         opType == "Shape" || opType == "Size" || opType == "Range";
}

} // namespace remat::onnxexport

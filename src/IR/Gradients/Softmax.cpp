//===- Softmax.cpp - Gradient rules of the Softmax family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerSoftmaxGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

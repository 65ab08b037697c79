//===- Elementwise.cpp - Gradient rules of the Elementwise family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerElementwiseGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

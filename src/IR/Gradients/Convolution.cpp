//===- Convolution.cpp - Gradient rules of the Convolution family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerConvolutionGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

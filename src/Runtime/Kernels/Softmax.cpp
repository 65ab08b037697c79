//===- Softmax.cpp - Kernels of the Softmax family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerSoftmaxKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

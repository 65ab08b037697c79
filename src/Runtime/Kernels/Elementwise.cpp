//===- Elementwise.cpp - Kernels of the Elementwise family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerElementwiseKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

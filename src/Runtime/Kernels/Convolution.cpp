//===- Convolution.cpp - Kernels of the Convolution family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerConvolutionKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

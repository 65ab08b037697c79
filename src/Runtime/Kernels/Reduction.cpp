//===- Reduction.cpp - Kernels of the Reduction family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerReductionKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

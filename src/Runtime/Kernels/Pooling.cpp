//===- Pooling.cpp - Kernels of the Pooling family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerPoolingKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

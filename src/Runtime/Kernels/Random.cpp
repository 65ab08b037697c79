//===- Random.cpp - Kernels of the Random family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerRandomKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

//===- Loss.cpp - Kernels of the Loss family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerLossKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

//===- GraphOps.cpp - Kernels of the GraphOps family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerGraphOpKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

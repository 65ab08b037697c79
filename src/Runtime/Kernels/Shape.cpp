//===- Shape.cpp - Kernels of the Shape family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerShapeKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

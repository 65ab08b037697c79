//===- Matmul.cpp - Kernels of the Matmul family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerMatmulKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

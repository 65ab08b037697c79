//===- Normalization.cpp - Kernels of the Normalization family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerNormalizationKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

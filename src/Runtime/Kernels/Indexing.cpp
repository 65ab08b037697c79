//===- Indexing.cpp - Kernels of the Indexing family ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerIndexingKernels(OpRegistry &registry) { (void)registry; }

} // namespace remat

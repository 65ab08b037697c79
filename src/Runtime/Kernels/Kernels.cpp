//===- Kernels.cpp - Attaching every built-in kernel --------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Kernel.h"

namespace remat {

void registerAllKernels(OpRegistry &registry) {
  registerGraphOpKernels(registry);
  registerElementwiseKernels(registry);
  registerMatmulKernels(registry);
  registerShapeKernels(registry);
  registerReductionKernels(registry);
  registerSoftmaxKernels(registry);
  registerNormalizationKernels(registry);
  registerConvolutionKernels(registry);
  registerPoolingKernels(registry);
  registerIndexingKernels(registry);
  registerRandomKernels(registry);
  registerLossKernels(registry);
  registerCommunicationKernels(registry);
}

} // namespace remat

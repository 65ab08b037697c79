//===- Gradients.cpp - Attaching every built-in gradient rule ---------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerAllGradients(OpRegistry &registry) {
  registerGraphOpGradients(registry);
  registerElementwiseGradients(registry);
  registerMatmulGradients(registry);
  registerShapeGradients(registry);
  registerReductionGradients(registry);
  registerSoftmaxGradients(registry);
  registerNormalizationGradients(registry);
  registerConvolutionGradients(registry);
  registerPoolingGradients(registry);
  registerIndexingGradients(registry);
  registerRandomGradients(registry);
  registerLossGradients(registry);
  registerCommunicationGradients(registry);
}

} // namespace remat

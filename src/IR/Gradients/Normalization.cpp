//===- Normalization.cpp - Gradient rules of the Normalization family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerNormalizationGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

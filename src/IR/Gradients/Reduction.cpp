//===- Reduction.cpp - Gradient rules of the Reduction family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerReductionGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

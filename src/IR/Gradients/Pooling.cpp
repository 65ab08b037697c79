//===- Pooling.cpp - Gradient rules of the Pooling family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerPoolingGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

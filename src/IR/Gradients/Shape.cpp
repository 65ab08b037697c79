//===- Shape.cpp - Gradient rules of the Shape family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerShapeGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

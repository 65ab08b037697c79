//===- Random.cpp - Gradient rules of the Random family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerRandomGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

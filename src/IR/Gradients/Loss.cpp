//===- Loss.cpp - Gradient rules of the Loss family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerLossGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

//===- GraphOps.cpp - Gradient rules of the GraphOps family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerGraphOpGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

//===- Matmul.cpp - Gradient rules of the Matmul family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerMatmulGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

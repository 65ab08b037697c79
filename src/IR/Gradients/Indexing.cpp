//===- Indexing.cpp - Gradient rules of the Indexing family -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

void registerIndexingGradients(OpRegistry &registry) { (void)registry; }

} // namespace remat

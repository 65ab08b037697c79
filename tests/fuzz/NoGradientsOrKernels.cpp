//===- NoGradientsOrKernels.cpp - Registry hooks the fuzz build leaves out -===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The fuzz library compiles only the IR and the text format, so the registry
/// gets no gradient rules and no kernels: the parser needs neither.
///
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"
#include "remat/Runtime/Kernel.h"

namespace remat {

void registerAllGradients(OpRegistry &) {}
void registerAllKernels(OpRegistry &) {}

} // namespace remat

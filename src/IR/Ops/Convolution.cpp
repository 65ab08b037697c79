// Placeholder: the Convolution op family is being written.
#include "OpDefUtils.h"
namespace remat {
void registerConvolutionOps(OpRegistry &) {}
} // namespace remat

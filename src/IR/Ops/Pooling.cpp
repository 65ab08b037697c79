// Placeholder: the Pooling op family is being written.
#include "OpDefUtils.h"
namespace remat {
void registerPoolingOps(OpRegistry &) {}
} // namespace remat

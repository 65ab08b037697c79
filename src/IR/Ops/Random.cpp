// Placeholder: the Random op family is being written.
#include "OpDefUtils.h"
namespace remat {
void registerRandomOps(OpRegistry &) {}
} // namespace remat

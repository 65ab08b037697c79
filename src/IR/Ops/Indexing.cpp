// Placeholder: the Indexing op family is being written.
#include "OpDefUtils.h"
namespace remat {
void registerIndexingOps(OpRegistry &) {}
} // namespace remat

#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt {

void register_linalg_kernels(KernelRegistry& r) {}

}  // namespace sod2::rt

#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt {

void register_math_kernels(KernelRegistry& r) {}

}  // namespace sod2::rt

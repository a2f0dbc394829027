// The registry of every kernel family, kept apart from the registry class so a family's tests
// can link that family alone.
#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt {

const KernelRegistry& KernelRegistry::standard() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    register_math_kernels(r);
    register_linalg_kernels(r);
    register_data_kernels(r);
    register_sequence_kernels(r);
    register_string_kernels(r);
    return r;
  }();
  return registry;
}

}  // namespace sod2::rt

// The sequence family's registration, one function per file.
#pragma once

#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt {

void register_sequence_element_kernels(KernelRegistry& r);
void register_sequence_split_concat_kernels(KernelRegistry& r);
void register_optional_kernels(KernelRegistry& r);

}  // namespace sod2::rt

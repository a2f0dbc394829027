// The strings family's registration, one function per file.
#pragma once

#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt {

void register_string_normalizer(KernelRegistry& r);
void register_string_concat_split(KernelRegistry& r);
// Only in builds with RE2 (not the runtime-only cross builds).
void register_regex_full_match(KernelRegistry& r);

}  // namespace sod2::rt

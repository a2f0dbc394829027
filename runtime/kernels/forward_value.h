// Handing an input on to an output unchanged, whatever it is: what Identity, Optional,
// OptionalGetElement and SequenceAt do.
#pragma once

#include "runtime/kernels/kernel.h"

namespace sod2::rt {

// Output `o` becomes `x`: a tensor's elements copied (bytes, or a string tensor's strings), a
// sequence shared, an empty optional as is.
Status forward_value(KernelContext& ctx, size_t o, const Tensor& x);

}  // namespace sod2::rt

#include "runtime/kernels/forward_value.h"

#include "runtime/tensor/sequence.h"

namespace sod2::rt {

Status forward_value(KernelContext& ctx, size_t o, const Tensor& x) {
  if (!x.is_tensor()) return ctx.output_value(o, own_non_tensor(x));
  SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(o, x.dtype, x.shape));
  if (y->data != x.data) copy_elements(x, *y);
  return Status::ok_status();
}

}  // namespace sod2::rt

// The math family: elementwise, activations, normalisation and reductions.
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/math/math_common.h"

namespace sod2::rt {

void register_math_kernels(KernelRegistry& r) {
  math::register_unary(r);
  math::register_binary(r);
  math::register_variadic(r);
  math::register_where_clip(r);
  math::register_cast(r);
  math::register_softmax(r);
  math::register_normalization(r);
  math::register_reduce(r);
  math::register_arg_reduce(r);
  math::register_topk(r);
  math::register_cumsum(r);
  math::register_loss(r);
  math::register_dropout(r);
  math::register_optimizers(r);
  math::register_signal(r);
  math::register_tfidf(r);
  math::register_gelu_rms(r);
  math::register_bitwise(r);
  math::register_dft20(r);
  math::register_random(r);
  math::register_fused_elementwise(r);
  math::register_fused_softmax(r);
}

}  // namespace sod2::rt

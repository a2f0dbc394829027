#include "runtime/kernels/math/quantize_rows.h"

#include "runtime/kernels/cpu_clones.h"
#include "runtime/kernels/linalg/quantize.h"

// Cloned per x86-64 level (cpu_clones.h): baseline x86-64's 4-wide division made the
// quantization of a fused group cost more than its Mul.

namespace sod2::rt::math {

SOD2_CPU_CLONES void quantize_rows(const float* x, int64_t n, float scale, int32_t zero_point,
                                   uint8_t* y) {
  quant::quantize_floats(x, n, scale, zero_point, y);
}
SOD2_CPU_CLONES void quantize_rows(const float* x, int64_t n, float scale, int32_t zero_point,
                                   int8_t* y) {
  quant::quantize_floats(x, n, scale, zero_point, y);
}

}  // namespace sod2::rt::math

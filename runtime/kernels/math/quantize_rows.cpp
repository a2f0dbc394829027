#include "runtime/kernels/math/quantize_rows.h"

#include "runtime/kernels/linalg/quantize.h"

// One clone per x86-64 level, chosen at load time: the library is built for baseline x86-64,
// whose 4-wide division made the quantization of a fused group cost more than its Mul.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SOD2_QUANTIZE_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SOD2_QUANTIZE_CLONES
#endif

namespace sod2::rt::math {

SOD2_QUANTIZE_CLONES void quantize_rows(const float* x, int64_t n, float scale, int32_t zero_point,
                                        uint8_t* y) {
  quant::quantize_floats(x, n, scale, zero_point, y);
}
SOD2_QUANTIZE_CLONES void quantize_rows(const float* x, int64_t n, float scale, int32_t zero_point,
                                        int8_t* y) {
  quant::quantize_floats(x, n, scale, zero_point, y);
}

}  // namespace sod2::rt::math

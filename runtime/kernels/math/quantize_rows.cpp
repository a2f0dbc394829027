#include "runtime/kernels/math/quantize_rows.h"

#include "runtime/kernels/cpu_clones.h"
#include "runtime/kernels/linalg/quantize.h"
#include "runtime/kernels/linalg/simd.h"

#if SOD2_SIMD_X86
#include "runtime/kernels/linalg/quantize_avx512.h"
#endif

// Cloned per x86-64 level (cpu_clones.h): baseline x86-64's 4-wide division made the
// quantization of a fused group cost more than its Mul. With AVX-512, quantize_avx512.h's
// vectors instead: twice the speed of the v4 clone.

namespace sod2::rt::math {
namespace {

template <class Q>
SOD2_CPU_CLONES void quantize_cloned(const float* x, int64_t n, float scale, int32_t zero_point,
                                     Q* y) {
  quant::quantize_floats(x, n, scale, zero_point, y);
}

#if SOD2_SIMD_X86
template <class Q>
SOD2_TARGET_AVX512_QUANTIZE void quantize_avx512(const float* x, int64_t n, float scale,
                                                 int32_t zero_point, Q* y) {
  const float zpf = static_cast<float>(zero_point), lo = quant::kQMin<Q>, hi = quant::kQMax<Q>;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    quant::store_bytes16(quant::quantize16(_mm512_loadu_ps(x + i), scale, zpf, lo, hi), y + i,
                         0xffff);
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    quant::store_bytes16(quant::quantize16(_mm512_maskz_loadu_ps(mask, x + i), scale, zpf, lo, hi),
                         y + i, mask);
  }
}
#endif

template <class Q>
void quantize_typed(const float* x, int64_t n, float scale, int32_t zero_point, Q* y) {
#if SOD2_SIMD_X86
  if (simd::simd_level() == simd::Level::kAvx512)
    return quantize_avx512(x, n, scale, zero_point, y);
#endif
  quantize_cloned(x, n, scale, zero_point, y);
}

}  // namespace

void quantize_rows(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y) {
  quantize_typed(x, n, scale, zero_point, y);
}
void quantize_rows(const float* x, int64_t n, float scale, int32_t zero_point, int8_t* y) {
  quantize_typed(x, n, scale, zero_point, y);
}

}  // namespace sod2::rt::math

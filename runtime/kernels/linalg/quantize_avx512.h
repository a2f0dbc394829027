// QuantizeLinear's per-tensor arithmetic (quantize.h's quantize_floats) on 16 floats in an
// AVX-512 register: one copy for the VNNI kernels' stores (int8_vnni_simd.h) and the quantized
// rows of QuantizeLinear and the fused elementwise groups (math/quantize_rows.cpp). GCC's own
// vectorisation of quantize_floats' loop ran at a little under half this speed (its clamps and
// the narrowing become chains of mask operations). x86-64 only.
#pragma once

#include <immintrin.h>

#include <cstdint>

#define SOD2_TARGET_AVX512_QUANTIZE __attribute__((target("avx512f,avx512bw,avx512vl")))

namespace sod2::rt::quant {

// round_half_even(x / scale) + zero point, a NaN to the zero point, saturated to [qlo, qhi]:
// exact integers as floats, the bytes quantize_floats writes. Rounding to the nearest integer
// needs no clamp first (round_half_even's is there only for its magic constant): beyond 2^22
// both saturate the same way.
SOD2_TARGET_AVX512_QUANTIZE inline __m512 quantize16(__m512 x, float scale, float zero_point,
                                                     float qlo, float qhi) {
  const __m512 v = _mm512_div_ps(x, _mm512_set1_ps(scale));
  const __m512 zpf = _mm512_set1_ps(zero_point);
  __m512 r =
      _mm512_add_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zpf);
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), zpf);
  return _mm512_min_ps(_mm512_max_ps(r, _mm512_set1_ps(qlo)), _mm512_set1_ps(qhi));
}

// 16 exact integers in [-128, 255] as floats to their low bytes, stored under `mask`.
SOD2_TARGET_AVX512_QUANTIZE inline void store_bytes16(__m512 q, void* dst, __mmask16 mask) {
  _mm_mask_storeu_epi8(dst, mask, _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(q)));
}

}  // namespace sod2::rt::quant

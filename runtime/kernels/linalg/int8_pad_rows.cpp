// pad_rows on AVX-512BW: per 64 bytes of a padded row, one masked load of the input bytes it
// holds (the masked-off lanes are neither read nor able to fault), the zero point blended around
// them and one store; for stride 2, a vpermb (AVX512-VBMI) first splits the 64 into the two
// phases' 32. The byte loops and a memset per row cost a stage of ResNet's int8 3x3 convs (7 or
// 14 columns) a tenth of its time on one thread, and its stride-2 convs a fifth.
#include <cstdint>

#include "runtime/kernels/linalg/int8_conv_layout.h"
#include "runtime/kernels/linalg/int8_vnni.h"

namespace sod2::rt::quant {
namespace {

#if SOD2_SIMD_X86
#define SOD2_TARGET_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))

// Padded columns [c0, c0 + 64) of a row: the input bytes there xor flip, the zero point around
// them (src null: all zero point). Masked-off lanes are neither read nor able to fault.
SOD2_TARGET_AVX512 inline __m512i padded_chunk(const uint8_t* src, int64_t x0, int64_t w,
                                               int64_t c0, __m512i pad_v, __m512i flip_v) {
  // Lanes [lo, hi) of this chunk hold input columns c0 + lane - x0.
  const int64_t lo = std::max(x0, c0) - c0, hi = std::min(x0 + w, c0 + 64) - c0;
  if (!src || hi <= lo) return pad_v;
  const __mmask64 m = bit_range(lo, hi);
  const auto* from = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(src) +
                                                      static_cast<uintptr_t>(c0 - x0));
  return _mm512_mask_blend_epi8(m, pad_v,
                                _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, from), flip_v));
}

// Stride 2: each 64 padded columns split by vpermb into their even (phase 0) and odd (phase 1)
// 32, stored at the same index of each phase's row.
SOD2_TARGET_AVX512_VBMI void pad_rows_s2_vbmi(const Window3& g, const Padded& p, const uint8_t* x,
                                              uint8_t flip, int8_t pad, int64_t r0, int64_t r1,
                                              int8_t* out, bool may_overrun) {
  const int64_t rb = p.row_bytes(), wp = p.wp, x0 = g.pad_begin[2], w = g.in[2];
  const __m512i pad_v = _mm512_set1_epi8(pad), flip_v = _mm512_set1_epi8(static_cast<char>(flip));
  alignas(64) uint8_t split[64];
  for (int i = 0; i < 32; ++i) {
    split[i] = static_cast<uint8_t>(2 * i);
    split[32 + i] = static_cast<uint8_t>(2 * i + 1);
  }
  const __m512i perm = _mm512_load_si512(split);
  PaddedRowWalk walk(g, p, r0);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t at = walk.next();
    const uint8_t* src = at < 0 ? nullptr : x + at;
    int8_t* dst = out + r * rb;
    for (int64_t i0 = 0; i0 < wp; i0 += 32) {
      const __m512i v =
          _mm512_permutexvar_epi8(perm, padded_chunk(src, x0, w, 2 * i0, pad_v, flip_v));
      const __m256i even = _mm512_castsi512_si256(v), odd = _mm512_extracti64x4_epi64(v, 1);
      const int64_t left = wp - i0;
      // Phase 0's last store must stop at phase 1's start; phase 1's may run on where allowed.
      if (left >= 32) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i0), even);
      } else {
        _mm256_mask_storeu_epi8(dst + i0, static_cast<__mmask32>(bit_range(0, left)), even);
      }
      if (left >= 32 || may_overrun) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + wp + i0), odd);
      } else {
        _mm256_mask_storeu_epi8(dst + wp + i0, static_cast<__mmask32>(bit_range(0, left)), odd);
      }
    }
  }
}

SOD2_TARGET_AVX512 void pad_rows_avx512(const Window3& g, const Padded& p, const uint8_t* x,
                                        uint8_t flip, int8_t pad, int64_t r0, int64_t r1,
                                        int8_t* out, bool may_overrun) {
  const int64_t rb = p.row_bytes(), x0 = g.pad_begin[2], w = g.in[2];
  const __m512i pad_v = _mm512_set1_epi8(pad), flip_v = _mm512_set1_epi8(static_cast<char>(flip));
  PaddedRowWalk walk(g, p, r0);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t at = walk.next();
    const uint8_t* src = at < 0 ? nullptr : x + at;
    int8_t* dst = out + r * rb;
    for (int64_t c0 = 0; c0 < rb; c0 += 64) {
      const __m512i v = padded_chunk(src, x0, w, c0, pad_v, flip_v);
      const int64_t left = rb - c0;
      if (left >= 64 || may_overrun)
        _mm512_storeu_si512(dst + c0, v);
      else
        _mm512_mask_storeu_epi8(dst + c0, bit_range(0, left), v);
    }
  }
}
#endif

}  // namespace

bool pad_rows_vector(const Window3& g, const Padded& p, const void* x, uint8_t flip, int8_t pad,
                     int64_t r0, int64_t r1, int8_t* out, bool may_overrun) {
#if SOD2_SIMD_X86
  if (simd::simd_level() != simd::Level::kAvx512) return false;
  const auto* bytes = static_cast<const uint8_t*>(x);
  if (p.s == 1) {
    pad_rows_avx512(g, p, bytes, flip, pad, r0, r1, out, may_overrun);
    return true;
  }
  if (p.s == 2 && vbmi_available()) {
    pad_rows_s2_vbmi(g, p, bytes, flip, pad, r0, r1, out, may_overrun);
    return true;
  }
  return false;
#else
  (void)g, (void)p, (void)x, (void)flip, (void)pad, (void)r0, (void)r1, (void)out,
      (void)may_overrun;
  return false;
#endif
}

}  // namespace sod2::rt::quant

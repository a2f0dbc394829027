// pad_rows' stride-1 rows on AVX-512BW: per 64 bytes of a padded row, one masked load of the
// input bytes it holds (the masked-off lanes are neither read nor able to fault), the zero point
// blended around them and one store. The byte loop and a memset per row cost a stage of ResNet's
// int8 3x3 convs (7 or 14 columns) a tenth of its time on one thread.
#include <cstdint>

#include "runtime/kernels/linalg/int8_conv_layout.h"

namespace sod2::rt::quant {
namespace {

#if SOD2_SIMD_X86
// Bits [lo, hi) of a 64-bit mask (0 <= lo <= hi <= 64).
inline uint64_t bit_range(int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  const uint64_t below_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return below_hi & ~((uint64_t{1} << lo) - 1);
}

SOD2_TARGET_AVX512 void pad_rows_avx512(const Window3& g, const Padded& p, const uint8_t* x,
                                        uint8_t flip, int8_t pad, int64_t r0, int64_t r1,
                                        int8_t* out, bool may_overrun) {
  const int64_t rb = p.row_bytes(), x0 = g.pad_begin[2], w = g.in[2];
  const __m512i pad_v = _mm512_set1_epi8(pad), flip_v = _mm512_set1_epi8(static_cast<char>(flip));
  int64_t y = r0 % p.py, z = r0 / p.py % p.pz, ch = r0 / (p.py * p.pz);
  for (int64_t r = r0; r < r1; ++r, ++y) {
    if (y == p.py) {
      y = 0;
      if (++z == p.pz) {
        z = 0;
        ++ch;
      }
    }
    int8_t* dst = out + r * rb;
    const int64_t iy = y - g.pad_begin[1], iz = z - g.pad_begin[0];
    const bool inside = iy >= 0 && iy < g.in[1] && iz >= 0 && iz < g.in[0];
    const uint8_t* src = inside ? x + ((ch * g.in[0] + iz) * g.in[1] + iy) * w : nullptr;
    for (int64_t c0 = 0; c0 < rb; c0 += 64) {
      __m512i v = pad_v;
      // Lanes [lo, hi) of this chunk hold input columns c0 + lane - x0.
      const int64_t lo = std::max(x0, c0) - c0, hi = std::min(x0 + w, c0 + 64) - c0;
      if (src && hi > lo) {
        const __mmask64 m = bit_range(lo, hi);
        const auto* from = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(src) +
                                                            static_cast<uintptr_t>(c0 - x0));
        v = _mm512_mask_blend_epi8(m, pad_v,
                                   _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, from), flip_v));
      }
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
  if (p.s != 1 || simd::simd_level() != simd::Level::kAvx512) return false;
  pad_rows_avx512(g, p, static_cast<const uint8_t*>(x), flip, pad, r0, r1, out, may_overrun);
  return true;
#else
  (void)g, (void)p, (void)x, (void)flip, (void)pad, (void)r0, (void)r1, (void)out,
      (void)may_overrun;
  return false;
#endif
}

}  // namespace sod2::rt::quant

#include "runtime/tensor/narrow_float.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define SOD2_NARROW_F16C 1
#else
#define SOD2_NARROW_F16C 0
#endif
// arm64: fcvtl/fcvtn convert four halves at a time in every ARMv8-A core's Advanced SIMD (no
// FEAT_FP16 arithmetic needed).
#if defined(__aarch64__)
#include <arm_neon.h>
#define SOD2_NARROW_NEON 1
#else
#define SOD2_NARROW_NEON 0
#endif

namespace sod2::rt {
namespace {

// float -> bfloat16, round to nearest even, as double_to_bfloat16 (bfloat16 has float's
// exponent range, so rounding the float's bits is exact for every finite value; NaN becomes the
// quiet NaN of its sign). Branch-free, so the loop vectorises.
void narrow_bfloat16(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &src[i], sizeof bits);
    const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
    dst[i] = static_cast<uint16_t>(nan ? ((bits >> 16) & 0x8000u) | 0x7fc0u : rounded);
  }
}

#if SOD2_NARROW_F16C
bool has_f16c() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2");
  }();
  return yes;
}

__attribute__((target("f16c,avx2"))) void widen_half_f16c(const uint16_t* src, float* dst,
                                                          int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = half_to_float(src[i]);
}

// cvtps2ph rounds to nearest even like double_to_half; NaNs are rewritten to its quiet NaN (the
// instruction keeps payload bits).
__attribute__((target("f16c,avx2"))) void narrow_half_f16c(const float* src, uint16_t* dst,
                                                           int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_loadu_ps(src + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)) != 0)
      for (int64_t j = i; j < i + 8; ++j)
        if (src[j] != src[j]) dst[j] = double_to_half(src[j]);
  }
  for (; i < n; ++i) dst[i] = double_to_half(src[i]);
}
#endif

#if SOD2_NARROW_NEON
void widen_half_neon(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
  for (; i < n; ++i) dst[i] = half_to_float(src[i]);
}

// fcvtn rounds to nearest even (the default FPCR mode) like double_to_half; NaNs are rewritten to
// its quiet NaN (the instruction keeps payload bits).
void narrow_half_neon(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t f = vld1q_f32(src + i);
    vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(f)));
    // Lanes equal to themselves are not NaN: all four are when the minimum of the mask is set.
    if (vminvq_u32(vceqq_f32(f, f)) == 0)
      for (int64_t j = i; j < i + 4; ++j)
        if (src[j] != src[j]) dst[j] = double_to_half(src[j]);
  }
  for (; i < n; ++i) dst[i] = double_to_half(src[i]);
}
#endif

}  // namespace

void widen_to_float(DType type, const uint16_t* src, float* dst, int64_t n) {
  if (type == DType::kFloat16) {
#if SOD2_NARROW_F16C
    if (has_f16c()) return widen_half_f16c(src, dst, n);
#endif
#if SOD2_NARROW_NEON
    return widen_half_neon(src, dst, n);
#endif
    for (int64_t i = 0; i < n; ++i) dst[i] = half_to_float(src[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = bfloat16_to_float(src[i]);
  }
}

void narrow_from_float(DType type, const float* src, uint16_t* dst, int64_t n) {
  if (type == DType::kFloat16) {
#if SOD2_NARROW_F16C
    if (has_f16c()) return narrow_half_f16c(src, dst, n);
#endif
#if SOD2_NARROW_NEON
    return narrow_half_neon(src, dst, n);
#endif
    for (int64_t i = 0; i < n; ++i) dst[i] = double_to_half(src[i]);
  } else {
    narrow_bfloat16(src, dst, n);
  }
}

}  // namespace sod2::rt

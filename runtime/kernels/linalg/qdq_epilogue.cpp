#include "runtime/kernels/linalg/qdq_epilogue.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/linalg/quantize.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt::quant {
namespace {

// Writes one output channel's `count` requantized values: clamp(round(acc * mult) + zp).
template <class Q>
SOD2_SIMD_INLINE void requantize_body(const int32_t* __restrict acc, int64_t count, int32_t bias,
                                      float mult, int32_t zp, int32_t lo, int32_t hi,
                                      Q* __restrict out) {
  const float zpf = static_cast<float>(zp), lof = static_cast<float>(lo),
              hif = static_cast<float>(hi);
  for (int64_t t = 0; t < count; ++t) {
    // Sums wrap modulo 2^32 as ONNX's int32 does (a crafted K can overflow; no UB).
    const auto sum =
        static_cast<int32_t>(static_cast<uint32_t>(acc[t]) + static_cast<uint32_t>(bias));
    const float v = round_half_even(static_cast<float>(sum) * mult) + zpf;
    // Through int32: float to int32 vectorises on every x86-64, float to 8 bits does not.
    out[t] = static_cast<Q>(static_cast<int32_t>(std::min(std::max(v, lof), hif)));
  }
}
#if SOD2_SIMD_X86
template <class Q>
SOD2_TARGET_AVX2 void requantize_avx2(const int32_t* acc, int64_t count, int32_t bias, float mult,
                                      int32_t zp, int32_t lo, int32_t hi, Q* out) {
  requantize_body(acc, count, bias, mult, zp, lo, hi, out);
}
template <class Q>
SOD2_TARGET_AVX512 void requantize_avx512(const int32_t* acc, int64_t count, int32_t bias,
                                          float mult, int32_t zp, int32_t lo, int32_t hi, Q* out) {
  requantize_body(acc, count, bias, mult, zp, lo, hi, out);
}
#endif
template <class Q>
void requantize_dispatch(const int32_t* acc, int64_t count, int32_t bias, float mult, int32_t zp,
                         int32_t lo, int32_t hi, Q* out) {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return requantize_avx512(acc, count, bias, mult, zp, lo, hi, out);
    case simd::Level::kAvx2: return requantize_avx2(acc, count, bias, mult, zp, lo, hi, out);
    default: break;
  }
#endif
  requantize_body(acc, count, bias, mult, zp, lo, hi, out);
}

// A QDQ group's float epilogue on n sums: (acc + bias) * scale (+ offset, in one fused
// multiply-add: kOffset), the activation, clamped to [lo, hi]. The plain-arithmetic activations
// are inlined (the operations of EpilogueRun::apply, so a float-ended group computes what the
// float kernels would); `A` kNone leaves others to the caller.
template <Activation A, bool kOffset>
SOD2_SIMD_INLINE void dequantize_activate(const int32_t* __restrict acc, int64_t n, int32_t bias,
                                          float scale, float offset, float alpha, float beta,
                                          float lo, float hi, float* __restrict v) {
  for (int64_t t = 0; t < n; ++t) {
    // Sums wrap modulo 2^32, as ONNX's int32 does.
    const uint32_t sum = static_cast<uint32_t>(acc[t]) + static_cast<uint32_t>(bias);
    const float d = static_cast<float>(static_cast<int32_t>(sum));
    float x = kOffset ? std::fma(d, scale, offset) : d * scale;
    if constexpr (A == Activation::kRelu) {
      x = x > 0.f ? x : 0.f;
    } else if constexpr (A == Activation::kLeakyRelu) {
      x = x < 0.f ? x * alpha : x;
    } else if constexpr (A == Activation::kHardSigmoid) {
      float u = alpha * x + beta;
      u = u > 0.f ? u : 0.f;
      x = u < 1.f ? u : 1.f;
    } else if constexpr (A == Activation::kHardSwish) {
      float u = x * (1.f / 6.f) + 0.5f;
      u = u > 0.f ? u : 0.f;
      x = x * (u < 1.f ? u : 1.f);
    }
    x = x < lo ? lo : x;
    v[t] = x > hi ? hi : x;
  }
}
template <bool kOffset>
SOD2_SIMD_INLINE void dequantize_activate_as(Activation a, const int32_t* acc, int64_t n,
                                             int32_t bias, float scale, float offset, float alpha,
                                             float beta, float lo, float hi, float* v) {
  switch (a) {
    case Activation::kRelu:
      return dequantize_activate<Activation::kRelu, kOffset>(acc, n, bias, scale, offset, alpha,
                                                             beta, lo, hi, v);
    case Activation::kLeakyRelu:
      return dequantize_activate<Activation::kLeakyRelu, kOffset>(acc, n, bias, scale, offset,
                                                                  alpha, beta, lo, hi, v);
    case Activation::kHardSigmoid:
      return dequantize_activate<Activation::kHardSigmoid, kOffset>(acc, n, bias, scale, offset,
                                                                    alpha, beta, lo, hi, v);
    case Activation::kHardSwish:
      return dequantize_activate<Activation::kHardSwish, kOffset>(acc, n, bias, scale, offset,
                                                                  alpha, beta, lo, hi, v);
    default:
      return dequantize_activate<Activation::kNone, kOffset>(acc, n, bias, scale, offset, alpha,
                                                             beta, lo, hi, v);
  }
}
SOD2_SIMD_INLINE void dequantize_activate_any(Activation a, const int32_t* acc, int64_t n,
                                              int32_t bias, float scale, float offset, float alpha,
                                              float beta, float lo, float hi, float* v) {
  if (offset != 0.f)
    return dequantize_activate_as<true>(a, acc, n, bias, scale, offset, alpha, beta, lo, hi, v);
  dequantize_activate_as<false>(a, acc, n, bias, scale, offset, alpha, beta, lo, hi, v);
}
#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void dequantize_activate_avx512(Activation a, const int32_t* acc, int64_t n,
                                                   int32_t bias, float scale, float offset,
                                                   float alpha, float beta, float lo, float hi,
                                                   float* v) {
  dequantize_activate_any(a, acc, n, bias, scale, offset, alpha, beta, lo, hi, v);
}
SOD2_TARGET_AVX2 void dequantize_activate_avx2(Activation a, const int32_t* acc, int64_t n,
                                               int32_t bias, float scale, float offset, float alpha,
                                               float beta, float lo, float hi, float* v) {
  dequantize_activate_any(a, acc, n, bias, scale, offset, alpha, beta, lo, hi, v);
}
#endif
}  // namespace

void requantize_row(const int32_t* acc, int64_t count, int32_t bias, float mult, int32_t zp,
                    int32_t lo, int32_t hi, uint8_t* out) {
  requantize_dispatch(acc, count, bias, mult, zp, lo, hi, out);
}
void requantize_row(const int32_t* acc, int64_t count, int32_t bias, float mult, int32_t zp,
                    int32_t lo, int32_t hi, int8_t* out) {
  requantize_dispatch(acc, count, bias, mult, zp, lo, hi, out);
}

void dequantize_activate_row(Activation a, const int32_t* acc, int64_t n, int32_t bias, float scale,
                             float offset, float alpha, float beta, float lo, float hi, float* v) {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512:
      return dequantize_activate_avx512(a, acc, n, bias, scale, offset, alpha, beta, lo, hi, v);
    case simd::Level::kAvx2:
      return dequantize_activate_avx2(a, acc, n, bias, scale, offset, alpha, beta, lo, hi, v);
    default: break;
  }
#endif
  dequantize_activate_any(a, acc, n, bias, scale, offset, alpha, beta, lo, hi, v);
}

}  // namespace sod2::rt::quant

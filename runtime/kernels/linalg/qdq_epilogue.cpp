#include "runtime/kernels/linalg/qdq_epilogue.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

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
// One dequantized value through activation A (inlined, the float kernels' operations) and the
// clamp to [lo, hi].
template <Activation A>
SOD2_SIMD_INLINE float activate_clamp(float x, float alpha, float beta, float lo, float hi) {
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
  return x > hi ? hi : x;
}

template <Activation A, bool kOffset>
SOD2_SIMD_INLINE void dequantize_activate(const int32_t* __restrict acc, int64_t n, int32_t bias,
                                          float scale, float offset, float alpha, float beta,
                                          float lo, float hi, float* __restrict v) {
  for (int64_t t = 0; t < n; ++t) {
    // Sums wrap modulo 2^32, as ONNX's int32 does.
    const uint32_t sum = static_cast<uint32_t>(acc[t]) + static_cast<uint32_t>(bias);
    const float d = static_cast<float>(static_cast<int32_t>(sum));
    const float x = kOffset ? std::fma(d, scale, offset) : d * scale;
    v[t] = activate_clamp<A>(x, alpha, beta, lo, hi);
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
// epilogue_float_sums with output type Q and activation A (float epilogue) or none
// (requantization: kRequant).
template <class Q, Activation A, bool kRequant>
SOD2_SIMD_INLINE void float_sums_planes(const ChannelEpilogue& e, const float* sums, int64_t count,
                                        int64_t p0, int64_t p1, int64_t channels, Q* out) {
  const float alpha = e.alpha, beta = e.beta, lo = e.clip_lo, hi = e.clip_hi, ys = e.y_scale;
  const float zpf = static_cast<float>(e.zp), lof = static_cast<float>(e.lo),
              hif = static_cast<float>(e.hi);
  const int32_t zp = e.zp;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t ch = p % channels;
    const uint32_t b = e.bias ? static_cast<uint32_t>(e.bias[ch]) : 0u;
    const float* __restrict in = sums + p * count;
    Q* __restrict dst = out + p * count;
    if constexpr (kRequant) {
      const float mult = e.mult[ch];
      for (int64_t t = 0; t < count; ++t) {
        const auto sum =
            static_cast<int32_t>(static_cast<uint32_t>(static_cast<int32_t>(in[t])) + b);
        const float v = round_half_even(static_cast<float>(sum) * mult) + zpf;
        dst[t] = static_cast<Q>(static_cast<int32_t>(std::min(std::max(v, lof), hif)));
      }
    } else {
      const float scale = e.scale[ch], offset = e.float_bias ? e.float_bias[ch] : 0.f;
      const bool fused = offset != 0.f;
      for (int64_t t = 0; t < count; ++t) {
        const auto sum =
            static_cast<int32_t>(static_cast<uint32_t>(static_cast<int32_t>(in[t])) + b);
        const float d = static_cast<float>(sum);
        const float x =
            activate_clamp<A>(fused ? std::fma(d, scale, offset) : d * scale, alpha, beta, lo, hi);
        if constexpr (std::is_same_v<Q, float>)
          dst[t] = x;
        else
          dst[t] = quantize_value<Q>(x, ys, zp);
      }
    }
  }
}
template <class Q>
SOD2_SIMD_INLINE void float_sums_typed(const ChannelEpilogue& e, const float* sums, int64_t count,
                                       int64_t p0, int64_t p1, int64_t channels, Q* out) {
  if (!e.float_epilogue) {
    if constexpr (!std::is_same_v<Q, float>)
      float_sums_planes<Q, Activation::kNone, true>(e, sums, count, p0, p1, channels, out);
    return;
  }
  switch (e.activation) {
    case Activation::kRelu:
      return float_sums_planes<Q, Activation::kRelu, false>(e, sums, count, p0, p1, channels, out);
    case Activation::kLeakyRelu:
      return float_sums_planes<Q, Activation::kLeakyRelu, false>(e, sums, count, p0, p1, channels,
                                                                 out);
    case Activation::kHardSigmoid:
      return float_sums_planes<Q, Activation::kHardSigmoid, false>(e, sums, count, p0, p1, channels,
                                                                   out);
    case Activation::kHardSwish:
      return float_sums_planes<Q, Activation::kHardSwish, false>(e, sums, count, p0, p1, channels,
                                                                 out);
    default:
      return float_sums_planes<Q, Activation::kNone, false>(e, sums, count, p0, p1, channels, out);
  }
}
SOD2_SIMD_INLINE void float_sums_any(const ChannelEpilogue& e, const float* sums, int64_t count,
                                     int64_t p0, int64_t p1, int64_t channels, void* out) {
  switch (e.out_type) {
    case DType::kUint8:
      return float_sums_typed(e, sums, count, p0, p1, channels, static_cast<uint8_t*>(out));
    case DType::kInt8:
      return float_sums_typed(e, sums, count, p0, p1, channels, static_cast<int8_t*>(out));
    default: return float_sums_typed(e, sums, count, p0, p1, channels, static_cast<float*>(out));
  }
}
#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void float_sums_avx512(const ChannelEpilogue& e, const float* sums,
                                          int64_t count, int64_t p0, int64_t p1, int64_t channels,
                                          void* out) {
  float_sums_any(e, sums, count, p0, p1, channels, out);
}
SOD2_TARGET_AVX2 void float_sums_avx2(const ChannelEpilogue& e, const float* sums, int64_t count,
                                      int64_t p0, int64_t p1, int64_t channels, void* out) {
  float_sums_any(e, sums, count, p0, p1, channels, out);
}
#endif

}  // namespace

void epilogue_float_sums(const ChannelEpilogue& e, const float* sums, int64_t count, int64_t p0,
                         int64_t p1, int64_t channels, void* out) {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return float_sums_avx512(e, sums, count, p0, p1, channels, out);
    case simd::Level::kAvx2: return float_sums_avx2(e, sums, count, p0, p1, channels, out);
    default: break;
  }
#endif
  float_sums_any(e, sums, count, p0, p1, channels, out);
}

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

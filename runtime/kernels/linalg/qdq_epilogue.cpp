#include "runtime/kernels/linalg/qdq_epilogue.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "runtime/kernels/linalg/int8_vnni.h"
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
// value(sum) for n sums held as exact integer floats, each sum plus bias modulo 2^32, narrowed to
// Q in a second loop over each chunk's int32 results: a loop that stored bytes directly was
// vectorised 64 wide, so a 7x7 plane (49 values) ran scalar.
constexpr int64_t kNarrowChunk = 64;
template <class Q, class F>
SOD2_SIMD_INLINE void narrowed(const float* __restrict in, int64_t n, uint32_t bias,
                               Q* __restrict out, F value) {
  alignas(64) int32_t q[kNarrowChunk];
  for (int64_t t0 = 0; t0 < n; t0 += kNarrowChunk) {
    const int64_t m = std::min(kNarrowChunk, n - t0);
    const float* __restrict src = in + t0;
    for (int64_t t = 0; t < m; ++t)
      q[t] =
          value(static_cast<int32_t>(static_cast<uint32_t>(static_cast<int32_t>(src[t])) + bias));
    for (int64_t t = 0; t < m; ++t) out[t0 + t] = static_cast<Q>(q[t]);
  }
}

// One plane's part of epilogue_float_sums, requantized: requantize_body's operations.
template <class Q>
SOD2_SIMD_INLINE void requantize_floats(const float* in, int64_t n, uint32_t bias, float mult,
                                        float zpf, float lof, float hif, Q* out) {
  narrowed(in, n, bias, out, [=](int32_t sum) {
    const float v = round_half_even(static_cast<float>(sum) * mult) + zpf;
    return static_cast<int32_t>(std::min(std::max(v, lof), hif));
  });
}
// Or through the float epilogue: dequantize_activate's operations, then quantize_floats's (or
// the floats themselves for Q float).
template <class Q, Activation A, bool kOffset>
SOD2_SIMD_INLINE void activate_floats(const float* __restrict in, int64_t n, uint32_t bias,
                                      float scale, float offset, const ChannelEpilogue& e,
                                      Q* __restrict out) {
  const float alpha = e.alpha, beta = e.beta, lo = e.clip_lo, hi = e.clip_hi, ys = e.y_scale;
  auto dequantized = [=](int32_t sum) {
    const float d = static_cast<float>(sum);
    return activate_clamp<A>(kOffset ? std::fma(d, scale, offset) : d * scale, alpha, beta, lo, hi);
  };
  if constexpr (std::is_same_v<Q, float>) {
    for (int64_t t = 0; t < n; ++t)
      out[t] = dequantized(
          static_cast<int32_t>(static_cast<uint32_t>(static_cast<int32_t>(in[t])) + bias));
  } else {
    const float zpf = static_cast<float>(e.zp), qlo = kQMin<Q>, qhi = kQMax<Q>;
    narrowed(in, n, bias, out, [=](int32_t sum) {  // quantize_floats's operations
      const float v = dequantized(sum) / ys;
      float r = round_half_even(v) + zpf;
      r = v != v ? zpf : r;
      return static_cast<int32_t>(std::min(std::max(r, qlo), qhi));
    });
  }
}
// epilogue_float_sums with output type Q and activation A (float epilogue) or none
// (requantization: kRequant).
template <class Q, Activation A, bool kRequant>
SOD2_SIMD_INLINE void float_sums_planes(const ChannelEpilogue& e, const FloatSums& s, Q* out) {
  const float zpf = static_cast<float>(e.zp), lof = static_cast<float>(e.lo),
              hif = static_cast<float>(e.hi);
  const int64_t count = s.q1 - s.q0;
  for (int64_t p = s.p0; p < s.p1; ++p) {
    const int64_t ch = p % s.channels;
    const uint32_t b = e.bias ? static_cast<uint32_t>(e.bias[ch]) : 0u;
    const float* in = s.sums + p * s.plane + s.q0;
    Q* dst = out + p * s.plane + s.q0;
    if constexpr (kRequant) {
      requantize_floats(in, count, b, e.mult[ch], zpf, lof, hif, dst);
    } else {
      const float scale = e.scale[ch], offset = e.float_bias ? e.float_bias[ch] : 0.f;
      // dequantize_activate's rule: the offset in one fused multiply-add where it is not 0.
      if (offset != 0.f)
        activate_floats<Q, A, true>(in, count, b, scale, offset, e, dst);
      else
        activate_floats<Q, A, false>(in, count, b, scale, offset, e, dst);
    }
  }
}
template <class Q>
SOD2_SIMD_INLINE void float_sums_typed(const ChannelEpilogue& e, const FloatSums& s, Q* out) {
  if (!e.float_epilogue) {
    if constexpr (!std::is_same_v<Q, float>)
      float_sums_planes<Q, Activation::kNone, true>(e, s, out);
    return;
  }
  switch (e.activation) {
    case Activation::kRelu: return float_sums_planes<Q, Activation::kRelu, false>(e, s, out);
    case Activation::kLeakyRelu:
      return float_sums_planes<Q, Activation::kLeakyRelu, false>(e, s, out);
    case Activation::kHardSigmoid:
      return float_sums_planes<Q, Activation::kHardSigmoid, false>(e, s, out);
    case Activation::kHardSwish:
      return float_sums_planes<Q, Activation::kHardSwish, false>(e, s, out);
    default: return float_sums_planes<Q, Activation::kNone, false>(e, s, out);
  }
}
SOD2_SIMD_INLINE void float_sums_any(const ChannelEpilogue& e, const FloatSums& s, void* out) {
  switch (e.out_type) {
    case DType::kUint8: return float_sums_typed(e, s, static_cast<uint8_t*>(out));
    case DType::kInt8: return float_sums_typed(e, s, static_cast<int8_t*>(out));
    default: return float_sums_typed(e, s, static_cast<float*>(out));
  }
}
#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void float_sums_avx512(const ChannelEpilogue& e, const FloatSums& s, void* out) {
  float_sums_any(e, s, out);
}
SOD2_TARGET_AVX2 void float_sums_avx2(const ChannelEpilogue& e, const FloatSums& s, void* out) {
  float_sums_any(e, s, out);
}
#endif

}  // namespace

void epilogue_float_sums(const ChannelEpilogue& e, const FloatSums& sums, void* out) {
  // Where the CPU has AVX512-VNNI, the VNNI GEMM's own store, in intrinsics: GCC compiles the
  // loops above to compare-and-blend chains.
  if (vnni_available()) {
    const size_t bytes = dtype_size(e.out_type);
    for (int64_t p = sums.p0; p < sums.p1; ++p) {
      const int64_t at = p * sums.plane + sums.q0;
      vnni_finish_float_sums(e, p % sums.channels, sums.sums + at, sums.q1 - sums.q0,
                             static_cast<char*>(out) + static_cast<size_t>(at) * bytes);
    }
    return;
  }
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return float_sums_avx512(e, sums, out);
    case simd::Level::kAvx2: return float_sums_avx2(e, sums, out);
    default: break;
  }
#endif
  float_sums_any(e, sums, out);
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

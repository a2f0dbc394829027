// What the VNNI kernels share: the dot product, and the store that finishes 16 int32 sums of one
// output channel in registers, as qdq_epilogue.h's ChannelEpilogue says (the requantization, or
// the float epilogue), with an optional residual join (QuantizedAdd), under a mask. The int8 GEMM
// (int8_vnni.cpp) and the depthwise convolution (int8_depthwise_vnni.cpp) both store through it,
// so every int8 path writes the bytes the per-row functions of quantize.h write. x86-64 only.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <limits>

#include "runtime/kernels/linalg/qdq_epilogue.h"
#include "runtime/kernels/linalg/quantize_avx512.h"

#define SOD2_TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace sod2::rt::quant::vnni_store {

// acc += the dot products of x's uint8 and w's int8 quads. Written in asm: GCC 12 copies every
// accumulator around each _mm512_dpbusd_epi32 of an unrolled tile (twice the instructions).
SOD2_TARGET_VNNI inline __m512i dpbusd(__m512i acc, __m512i x, __m512i w) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
  return acc;
}

// quantize_avx512.h's quantize16 with `type`'s range.
SOD2_TARGET_VNNI inline __m512 quantize16(__m512 x, float scale, int32_t zp, DType type) {
  const bool u8 = type == DType::kUint8;
  return quant::quantize16(x, scale, static_cast<float>(zp), u8 ? 0.f : -128.f, u8 ? 255.f : 127.f);
}

// Bytes of type `type` widened to int32.
SOD2_TARGET_VNNI inline __m512i widen8(__m128i bytes, DType type) {
  return type == DType::kUint8 ? _mm512_cvtepu8_epi32(bytes) : _mm512_cvtepi8_epi32(bytes);
}

// 16 8-bit values q (integers as floats) stored under `mask` at dst; with a join, the
// QuantizedAdd of their bytes (what an unfused store would have written, NaN included) and the
// residual's bytes at `residual` instead, in add_body's operations (qlinear_add.cpp): each
// product rounds on its own, as in the unfused nodes (the asm keeps GCC from contracting a
// product and the sum into a fused multiply-add).
SOD2_TARGET_VNNI inline void store_8bit(__m512 q, const QuantizedAdd* join, const void* residual,
                                        void* dst, __mmask16 mask) {
  if (!join) {
    store_bytes16(q, dst, mask);
    return;
  }
  const QuantizedAdd& p = *join;
  const __m512i a = widen8(_mm512_cvtepi32_epi8(_mm512_cvttps_epi32(q)), p.a_type);
  const __m512i b = widen8(_mm_maskz_loadu_epi8(mask, residual), p.b_type);
  __m512 da = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(a, _mm512_set1_epi32(p.a_zp))),
                            _mm512_set1_ps(p.a_scale));
  __m512 db = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(b, _mm512_set1_epi32(p.b_zp))),
                            _mm512_set1_ps(p.b_scale));
  asm("" : "+v"(da), "+v"(db));
  __m512 v = _mm512_add_ps(da, db);
  v = _mm512_max_ps(_mm512_set1_ps(p.lo), v);  // std::max(v, lo)
  v = _mm512_min_ps(_mm512_set1_ps(p.hi), v);  // std::min(v, hi)
  const __m512 z = quantize16(v, p.y_scale, p.y_zp, p.y_type);
  store_bytes16(z, dst, mask);
}

// ChannelEpilogue's float epilogue on 16 biased sums of one row, stored under `mask` at `dst`
// (floats or 8-bit values): dequantize_activate's operations, then quantize_floats's, in their
// order. `a > b ? a : b` is vmaxps(a, b) and `a < b ? a : b` vminps(a, b), NaN included; the
// AVX-512 build of dequantize_activate contracts `alpha * x + beta` into one fused multiply-add, as
// here.
SOD2_TARGET_VNNI inline void float_epilogue(__m512i biased, float scale, float offset,
                                            const ChannelEpilogue& q, void* dst, __mmask16 mask,
                                            const QuantizedAdd* join, const void* residual) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.f);
  // dequantize_activate's offset rule: a zero offset is no addition (the sign of a zero
  // product stays).
  __m512 x = offset != 0.f ? _mm512_fmadd_ps(_mm512_cvtepi32_ps(biased), _mm512_set1_ps(scale),
                                             _mm512_set1_ps(offset))
                           : _mm512_mul_ps(_mm512_cvtepi32_ps(biased), _mm512_set1_ps(scale));
  switch (q.activation) {
    case Activation::kRelu: x = _mm512_max_ps(x, zero); break;
    case Activation::kLeakyRelu:
      x = _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x,
                             _mm512_set1_ps(q.alpha));
      break;
    case Activation::kHardSigmoid: {
      const __m512 u = _mm512_fmadd_ps(_mm512_set1_ps(q.alpha), x, _mm512_set1_ps(q.beta));
      x = _mm512_min_ps(_mm512_max_ps(u, zero), one);
      break;
    }
    case Activation::kHardSwish: {
      const __m512 u = _mm512_fmadd_ps(x, _mm512_set1_ps(1.f / 6.f), _mm512_set1_ps(0.5f));
      x = _mm512_mul_ps(x, _mm512_min_ps(_mm512_max_ps(u, zero), one));
      break;
    }
    default: break;
  }
  // x < lo ? lo : x and x > hi ? hi : x; an infinite bound changes nothing, NaN included (vmaxps
  // and vminps return their second operand then), so it is skipped.
  if (q.clip_lo != -std::numeric_limits<float>::infinity())
    x = _mm512_max_ps(_mm512_set1_ps(q.clip_lo), x);
  if (q.clip_hi != std::numeric_limits<float>::infinity())
    x = _mm512_min_ps(_mm512_set1_ps(q.clip_hi), x);
  if (q.out_type == DType::kFloat) {
    _mm512_mask_storeu_ps(dst, mask, x);
    return;
  }
  store_8bit(quantize16(x, q.y_scale, q.zp, q.out_type), join, residual, dst, mask);
}

// The store of 16 biased sums of row r (q's arrays indexed by r) under `mask`, at element `at`
// of out (and of residual, for a join): the float epilogue, or the requantization.
SOD2_TARGET_VNNI inline void store_row(__m512i biased, const ChannelEpilogue& q, int64_t r,
                                       void* out, int64_t at, __mmask16 mask,
                                       const QuantizedAdd* join = nullptr,
                                       const void* residual = nullptr) {
  const void* res = join ? static_cast<const char*>(residual) + at : nullptr;
  if (q.float_epilogue) {
    float_epilogue(biased, q.scale[r], q.float_bias ? q.float_bias[r] : 0.f, q,
                   q.out_type == DType::kFloat ? static_cast<void*>(static_cast<float*>(out) + at)
                                               : static_cast<void*>(static_cast<char*>(out) + at),
                   mask, join, res);
    return;
  }
  // requantize_body's operations, in its order; max(lo, x) and min(hi, x) keep a NaN as
  // std::max(x, lo) and std::min(x, hi) do, so both paths write the same bytes.
  __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(biased), _mm512_set1_ps(q.mult[r]));
  x = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm512_add_ps(x, _mm512_set1_ps(static_cast<float>(q.zp)));
  x = _mm512_max_ps(_mm512_set1_ps(static_cast<float>(q.lo)), x);
  x = _mm512_min_ps(_mm512_set1_ps(static_cast<float>(q.hi)), x);
  store_8bit(x, join, res, static_cast<char*>(out) + at, mask);
}

}  // namespace sod2::rt::quant::vnni_store

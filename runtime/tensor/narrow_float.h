// float16 and bfloat16 as bit patterns: the one conversion to and from float/double that kernels,
// loaders and comparisons share. Narrowing rounds to nearest, ties to even, in one step from double
// (no double rounding through float); values past the largest finite one become infinity, NaN
// stays a quiet NaN of the same sign, and subnormals are kept.
#pragma once

#include <cstdint>
#include <cstring>

#include "runtime/tensor/dtype.h"

namespace sod2::rt {

// The bits of `d` as a binary float with `E` exponent and `M` mantissa bits (IEEE layout).
template <int E, int M>
inline uint16_t encode_narrow(double d) {
  uint64_t x;
  std::memcpy(&x, &d, sizeof x);
  const auto sign = static_cast<uint32_t>(x >> 63) << (E + M);
  const uint64_t abs = x & 0x7fffffffffffffffull;
  constexpr uint32_t kInf = ((1u << E) - 1) << M;
  if (abs >= 0x7ff0000000000000ull) {
    const uint32_t nan = abs > 0x7ff0000000000000ull ? (1u << (M - 1)) : 0u;
    return static_cast<uint16_t>(sign | kInf | nan);
  }
  const int biased = static_cast<int>(abs >> 52);
  if (biased == 0) return static_cast<uint16_t>(sign);  // double subnormals round to zero
  constexpr int kBias = (1 << (E - 1)) - 1;
  const int exp = biased - 1023 + kBias;  // the target's biased exponent
  if (exp >= (1 << E) - 1) return static_cast<uint16_t>(sign | kInf);
  const uint64_t mant = (abs & ((1ull << 52) - 1)) | (1ull << 52);  // with the implicit one
  // Normal results keep M bits below the implicit one (which, added to (exp - 1) << M, lands in
  // the exponent field); subnormal ones shift further right. A rounding carry moves into the
  // exponent, up to infinity, as the bit layout intends.
  int shift = 52 - M;
  uint32_t base = 0;
  if (exp >= 1) {
    base = static_cast<uint32_t>(exp - 1) << M;
  } else {
    shift += 1 - exp;
    if (shift > 53) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
  }
  uint64_t r = mant >> shift;
  const uint64_t rem = mant & ((1ull << shift) - 1);
  const uint64_t halfway = 1ull << (shift - 1);
  if (rem > halfway || (rem == halfway && (r & 1))) ++r;
  uint32_t out = base + static_cast<uint32_t>(r);
  if (out > kInf) out = kInf;
  return static_cast<uint16_t>(sign | out);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal: normalise the mantissa into a float exponent.
    int e = -1;
    do {
      mant <<= 1;
      ++e;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float bfloat16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t double_to_half(double d) { return encode_narrow<5, 10>(d); }
inline uint16_t double_to_bfloat16(double d) { return encode_narrow<8, 7>(d); }

// Whole arrays, `type` being kFloat16 or kBFloat16: what a loader or a kernel that computes in
// float32 widens its half-precision data with, and narrows its results back with. The same bits
// as the functions above, element by element, except that widening may quiet a signalling NaN
// (narrow_float.cpp: F16C on x86-64 CPUs that have it, vectorisable integer code for bfloat16).
void widen_to_float(DType type, const uint16_t* src, float* dst, int64_t n);
void narrow_from_float(DType type, const float* src, uint16_t* dst, int64_t n);

}  // namespace sod2::rt

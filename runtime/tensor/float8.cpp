#include "runtime/tensor/float8.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace sod2::rt {
namespace {

struct Format {
  int exp_bits;
  int mant_bits;
  int bias;
  bool uz;       // unsigned zero: 0x80 is the one NaN, and there is no -0
  bool has_inf;  // e5m2 only
  uint8_t max;   // the largest finite code, without the sign
  uint8_t nan;   // the NaN code written (the sign is added for the non-uz types)
};

constexpr Format kE4M3FN{4, 3, 7, false, false, 0x7e, 0x7f};
constexpr Format kE4M3FNUZ{4, 3, 8, true, false, 0x7f, 0x80};
constexpr Format kE5M2{5, 2, 15, false, true, 0x7b, 0x7f};
constexpr Format kE5M2FNUZ{5, 2, 16, true, false, 0x7f, 0x80};

const Format& format_of(DType type) {
  switch (type) {
    case DType::kFloat8E4M3FNUZ: return kE4M3FNUZ;
    case DType::kFloat8E5M2: return kE5M2;
    case DType::kFloat8E5M2FNUZ: return kE5M2FNUZ;
    default: return kE4M3FN;
  }
}

float decode(const Format& f, uint8_t bits) {
  const bool negative = (bits & 0x80) != 0;
  const uint32_t exp = (bits & 0x7f) >> f.mant_bits;
  const uint32_t mant = bits & ((1u << f.mant_bits) - 1);
  const uint32_t exp_all_ones = (1u << f.exp_bits) - 1;
  float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.uz) {
    if (bits == 0x80) return -nan;
  } else if (f.has_inf) {
    if (exp == exp_all_ones) {
      const float v = mant == 0 ? std::numeric_limits<float>::infinity() : nan;
      return negative ? -v : v;
    }
  } else if ((bits & 0x7f) == 0x7f) {
    return negative ? -nan : nan;
  }
  // Every float8 value is a small integer times a power of two, so ldexp is exact.
  const float v = exp == 0 ? std::ldexp(static_cast<float>(mant), 1 - f.bias - f.mant_bits)
                           : std::ldexp(static_cast<float>(mant | (1u << f.mant_bits)),
                                        static_cast<int>(exp) - f.bias - f.mant_bits);
  return negative ? -v : v;
}

uint8_t encode(const Format& f, double v, bool saturate) {
  uint64_t x;
  std::memcpy(&x, &v, sizeof x);
  const uint8_t sign = (x >> 63) != 0 ? 0x80 : 0;
  const uint8_t zero = f.uz ? 0 : sign;
  const uint64_t abs = x & 0x7fffffffffffffffull;
  const uint8_t nan = f.uz ? f.nan : static_cast<uint8_t>(sign | f.nan);
  if (abs > 0x7ff0000000000000ull) return nan;
  // Past the largest finite value: the largest finite value (saturate), else infinity where the
  // type has one, else NaN.
  const uint8_t overflow = saturate    ? static_cast<uint8_t>(sign | f.max)
                           : f.has_inf ? static_cast<uint8_t>(sign | 0x7c)
                                       : nan;
  if (abs == 0x7ff0000000000000ull) return f.uz ? nan : overflow;
  const int biased = static_cast<int>(abs >> 52);
  if (biased == 0) return zero;  // double subnormals are far below the smallest float8
  // The value's exponent in the target's bias; below 1 the target is subnormal, with the quantum
  // of exponent 1.
  const int exp = biased - 1023 + f.bias;
  if (exp > (1 << f.exp_bits) + 1) return overflow;  // far past any code; keeps the shift sane
  const uint64_t mant = (abs & ((1ull << 52) - 1)) | (1ull << 52);
  int shift = 52 - f.mant_bits;
  uint32_t base = 0;
  if (exp >= 1) {
    base = static_cast<uint32_t>(exp - 1) << f.mant_bits;
  } else {
    shift += 1 - exp;
    if (shift > 53) return zero;  // below half the smallest subnormal
  }
  uint64_t r = mant >> shift;
  const uint64_t rem = mant & ((1ull << shift) - 1);
  const uint64_t halfway = 1ull << (shift - 1);
  if (rem > halfway || (rem == halfway && (r & 1))) ++r;
  // A rounding carry moves into the exponent field, as the layout intends.
  const uint32_t code = base + static_cast<uint32_t>(r);
  if (code > f.max) return overflow;
  if (code == 0) return zero;
  return static_cast<uint8_t>(sign | code);
}

}  // namespace

float float8_to_float(DType type, uint8_t bits) { return decode(format_of(type), bits); }

uint8_t float8_from_double(DType type, double v, bool saturate) {
  return encode(format_of(type), v, saturate);
}

void widen_float8(DType type, const uint8_t* src, float* dst, int64_t n) {
  // 256 codes: a table is cheaper than decoding each element.
  float table[256];
  const Format& f = format_of(type);
  for (int b = 0; b < 256; ++b) table[b] = decode(f, static_cast<uint8_t>(b));
  for (int64_t i = 0; i < n; ++i) dst[i] = table[src[i]];
}

void narrow_to_float8(DType type, const float* src, uint8_t* dst, int64_t n, bool saturate) {
  const Format& f = format_of(type);
  for (int64_t i = 0; i < n; ++i) dst[i] = encode(f, static_cast<double>(src[i]), saturate);
}

}  // namespace sod2::rt

// Branch-free float exp and tanh that the compiler vectorises (libm's expf/tanhf are scalar
// calls, and dominate Sigmoid/Softmax/Tanh). Cephes' polynomials: within 2 ulp of the true
// value over the whole range; NaN and +-inf give what libm gives; results below FLT_MIN
// (x < -87.34) flush to 0.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace sod2::rt::math {

inline float vec_expf(float x) {
  constexpr float kHi = 88.7228394f, kLo = -87.3365479f;
  float xc = x > kHi ? kHi : x;
  xc = xc < kLo ? kLo : xc;
  // n = round(x / ln2) by the 1.5 * 2^23 trick: the sum's low mantissa bits are n.
  constexpr float kMagic = 12582912.0f;
  const float r = xc * 1.44269504088896341f + kMagic;
  const float nf = r - kMagic;
  const int32_t n = std::bit_cast<int32_t>(r) - std::bit_cast<int32_t>(kMagic);
  // f = x - n ln2 in two steps (Cody-Waite) so f keeps its low bits.
  float f = xc - nf * 0.693359375f;
  f = f - nf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * f + 1.3981999507e-3f;
  p = p * f + 8.3334519073e-3f;
  p = p * f + 4.1665795894e-2f;
  p = p * f + 1.6666665459e-1f;
  p = p * f + 5.0000001201e-1f;
  p = p * f * f + f + 1.0f;
  // 2^n as two normal factors, since n reaches 128 near the top of the range.
  const int32_t n1 = n >> 1, n2 = n - n1;
  const float y =
      p * std::bit_cast<float>((n1 + 127) << 23) * std::bit_cast<float>((n2 + 127) << 23);
  const float under = x < kLo ? 0.0f : y;
  return x > kHi ? std::numeric_limits<float>::infinity() : under;
}

inline float vec_tanhf(float x) {
  const float ax = x < 0 ? -x : x;
  // Small |x|: odd polynomial (keeps relative accuracy near 0).
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  // Otherwise 1 - 2 / (e^{2|x|} + 1), with x's sign; saturates to 1 for large |x|.
  const float big_abs = 1.0f - 2.0f / (vec_expf(2.0f * ax) + 1.0f);
  const float big = x < 0 ? -big_abs : big_abs;
  return ax < 0.625f ? small : big;
}

}  // namespace sod2::rt::math

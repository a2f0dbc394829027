// quantize_rows (QuantizeLinear's rows, and a fused elementwise group's 8-bit output) against the
// per-value reference of quantize.h, at every SIMD level this CPU has: the AVX-512 loop must write
// the bytes the cloned loop writes, ties, NaN, infinities and saturation included, for any length.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "runtime/kernels/linalg/quantize.h"
#include "runtime/kernels/linalg/simd.h"
#include "runtime/kernels/math/quantize_rows.h"

namespace sod2::rt::math {
namespace {

// Values whose quotients by `scale` land on and beside every rounding decision: ties (odd and
// even), a float either side of them, zeros of both signs, beyond 2^22, infinities and NaN.
std::vector<float> awkward_values(float scale) {
  std::vector<float> v;
  for (int k = -300; k <= 300; ++k) {
    const float tie = (static_cast<float>(k) + 0.5f) * scale;
    v.push_back(tie);
    v.push_back(std::nextafter(tie, 1e30f));
    v.push_back(std::nextafter(tie, -1e30f));
    v.push_back(static_cast<float>(k) * scale);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x :
       {0.f, -0.f, 5e6f * scale, -5e6f * scale, 1e30f, -1e30f, inf, -inf,
        std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()})
    v.push_back(x);
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.f, 100.f * scale);
  for (int i = 0; i < 1000; ++i) v.push_back(d(rng));
  return v;
}

template <class Q>
void expect_reference_bytes(float scale, int32_t zero_point) {
  const std::vector<float> x = awkward_values(scale);
  const auto n = static_cast<int64_t>(x.size());
  std::vector<Q> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = quant::quantize_value<Q>(x[i], scale, zero_point);
  for (int level = 0; level <= static_cast<int>(simd::detected_level()); ++level) {
    simd::force_simd_level(level);
    std::vector<Q> got(x.size());
    quantize_rows(x.data(), n, scale, zero_point, got.data());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(int{got[i]}, int{want[i]})
          << "level " << level << ", x = " << x[i] << ", scale " << scale << ", zp " << zero_point;
    // Every length from 0 to 40 at an odd offset: the vector body, its masked tail, and
    // nothing written past the end.
    for (int64_t len = 0; len <= 40; ++len) {
      std::vector<Q> part(static_cast<size_t>(len) + 1, Q{42});
      quantize_rows(x.data() + 3, len, scale, zero_point, part.data());
      for (int64_t i = 0; i < len; ++i)
        ASSERT_EQ(int{part[static_cast<size_t>(i)]}, int{want[static_cast<size_t>(i) + 3]})
            << "level " << level << ", length " << len << ", element " << i;
      EXPECT_EQ(int{part.back()}, 42) << "level " << level << ", length " << len;
    }
  }
  simd::force_simd_level(-1);
}

TEST(QuantizeRows, EveryLevelWritesTheReferenceBytes) {
  expect_reference_bytes<int8_t>(0.0371f, 3);
  expect_reference_bytes<int8_t>(1.f, -128);
  expect_reference_bytes<uint8_t>(0.0371f, 128);
  expect_reference_bytes<uint8_t>(2.5e-3f, 0);
  expect_reference_bytes<uint8_t>(1e-30f, 255);
}

}  // namespace
}  // namespace sod2::rt::math

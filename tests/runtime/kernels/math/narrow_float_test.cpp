// float16 / bfloat16: the conversions of runtime/tensor/narrow_float.h against the compiler's
// _Float16 (where it has one) and hand-computed bit patterns, Cast / CastLike to and from them, the
// elementwise ops that compute them through float, and Pow with every exponent type.
#include <cmath>
#include <cstring>
#include <limits>

#include "math_test_util.h"
#include "runtime/kernels/math/half_float.h"

namespace sod2::rt::math_test {
namespace {

using rt::bfloat16_to_float;
using rt::double_to_bfloat16;
using rt::double_to_half;
using rt::half_to_float;

Attrs cast_to(DType t) { return attrs({{"to", attr_int(static_cast<int64_t>(t))}}); }

HostTensor f16(Shape s, const std::vector<uint16_t>& bits) {
  return make_tensor(DType::kFloat16, s, bits);
}
HostTensor f16_of(Shape s, const std::vector<float>& v) {
  std::vector<uint16_t> bits;
  for (float f : v) bits.push_back(double_to_half(f));
  return f16(s, bits);
}
std::vector<float> f16_values(const HostTensor& t) {
  std::vector<float> out;
  for (uint16_t h : values<uint16_t>(t)) out.push_back(half_to_float(h));
  return out;
}
uint32_t float_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
float bits_float(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

TEST(MathHalfFloat, HandComputedPatterns) {
  EXPECT_EQ(double_to_half(1.0), 0x3c00);
  EXPECT_EQ(double_to_half(-2.0), 0xc000);
  EXPECT_EQ(double_to_half(65504.0), 0x7bff);  // the largest finite half
  EXPECT_EQ(double_to_half(65519.99), 0x7bff);
  EXPECT_EQ(double_to_half(65520.0), 0x7c00);               // the tie rounds to even: infinity
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -25)), 0x0000);  // its half ties to even: zero
  EXPECT_EQ(double_to_half(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(double_to_half(std::ldexp(1023.0, -24)), 0x03ff);  // the largest subnormal
  EXPECT_EQ(double_to_half(std::ldexp(1023.5, -24)), 0x0400);  // rounds up into the normals
  EXPECT_EQ(double_to_half(-0.0), 0x8000);
  EXPECT_EQ(double_to_half(1e-300), 0x0000);
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::denorm_min()), 0x0000);
  EXPECT_EQ(double_to_half(1e300), 0x7c00);
  EXPECT_EQ(double_to_half(-std::numeric_limits<double>::infinity()), 0xfc00);
  EXPECT_EQ(double_to_half(std::nan("")), 0x7e00);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 1. Just above it rounds up.
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11) + 1e-12), 0x3c01);
  EXPECT_EQ(double_to_half(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  EXPECT_EQ(half_to_float(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(float_bits(half_to_float(0x8000)), 0x80000000u);
}

TEST(MathHalfFloat, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (nan) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_EQ(double_to_half(f) & 0xfe00, (h & 0x8000) | 0x7e00) << h;
    } else {
      ASSERT_EQ(double_to_half(f), h) << h;
    }
  }
}

#if defined(__FLT16_MAX__)
// The compiler's own conversions (IEEE, round to nearest even) as the reference.
TEST(MathHalfFloat, MatchesTheCompilersFloat16) {
  std::mt19937 gen(17);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    // Random floats; every other one with an exponent in or near half's range (2^-27..2^18).
    uint32_t x = bits(gen);
    if (i % 2) x = (x & 0x807fffffu) | ((100u + x % 46u) << 23);
    const float f = bits_float(x);
    if (std::isnan(f)) continue;
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, 2);
    ASSERT_EQ(double_to_half(f), ref_bits) << std::hexfloat << f;
    const double d = static_cast<double>(f) * (1.0 + 1e-9);  // not a float: no double rounding
    const _Float16 ref_d = static_cast<_Float16>(d);
    std::memcpy(&ref_bits, &ref_d, 2);
    ASSERT_EQ(double_to_half(d), ref_bits) << std::hexfloat << d;
  }
}
#endif

// The array conversions (F16C on x86-64 where the CPU has it, branch-free bfloat16) give the
// scalar functions' bits for every half pattern and for floats around every rounding case,
// at every length (vector bodies and scalar tails). A signalling NaN may come back quiet.
TEST(MathHalfFloat, ArrayConversionsMatchTheScalarOnes) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> wide(all.size());
  widen_to_float(DType::kFloat16, all.data(), wide.data(), static_cast<int64_t>(all.size()));
  for (size_t i = 0; i < all.size(); ++i) {
    const float want = half_to_float(all[i]);
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(wide[i])) << i;
    else
      ASSERT_EQ(float_bits(wide[i]), float_bits(want)) << i;
  }
  // Floats: specials, every half's neighbourhood (ties, just above and below), random patterns.
  std::vector<float> f = {0.0f,
                          -0.0f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::nanf(""),
                          bits_float(0x7fa00001u),
                          bits_float(0xffc00123u),
                          65504.0f,
                          65520.0f,
                          65519.99f,
                          1e-8f,
                          -6e-8f,
                          3e38f,
                          1.17549435e-38f,
                          1e-45f};
  for (uint32_t h = 0; h < 0x7c00u; h += 7) {
    const uint32_t b = float_bits(half_to_float(static_cast<uint16_t>(h)));
    for (uint32_t d : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x2000u})
      for (uint32_t sign : {0u, 0x80000000u}) f.push_back(bits_float((b + d) | sign));
  }
  uint32_t state = 12345;
  for (int i = 0; i < 100000; ++i) {
    state = state * 1664525u + 1013904223u;
    f.push_back(bits_float(state));
  }
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    for (size_t len : {f.size(), size_t{7}, size_t{13}}) {
      std::vector<uint16_t> got(len);
      narrow_from_float(t, f.data(), got.data(), static_cast<int64_t>(len));
      for (size_t i = 0; i < len; ++i) {
        const uint16_t want =
            t == DType::kFloat16 ? double_to_half(f[i]) : double_to_bfloat16(f[i]);
        ASSERT_EQ(got[i], want) << dtype_name(t) << " element " << i << " bits "
                                << float_bits(f[i]);
      }
    }
  }
}

TEST(MathHalfFloat, BFloat16RoundsToNearestEven) {
  std::mt19937 gen(5);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 100000; ++i) {
    const uint32_t x = bits(gen);
    const float f = bits_float(x);
    if (std::isnan(f)) {
      EXPECT_EQ(double_to_bfloat16(f) & 0x7fc0, 0x7fc0);
      continue;
    }
    // The usual bit trick, valid for non-NaN floats (a carry into the exponent is intended).
    const auto ref = static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
    ASSERT_EQ(double_to_bfloat16(f), ref) << std::hexfloat << f;
    ASSERT_EQ(float_bits(bfloat16_to_float(ref)), static_cast<uint32_t>(ref) << 16);
  }
  EXPECT_EQ(double_to_bfloat16(std::nan("")), 0x7fc0);
  EXPECT_EQ(double_to_bfloat16(std::numeric_limits<double>::infinity()), 0x7f80);
  EXPECT_EQ(double_to_bfloat16(3.5e38), 0x7f80);  // above bfloat16's largest finite, 3.39e38
}

TEST(MathCastNarrow, FloatToFloat16AndBack) {
  const HostTensor x = f32({8}, {0.5f, -1.25f, 65504.f, 70000.f, 1e-8f, std::nanf(""),
                                 -std::numeric_limits<float>::infinity(), 0.1f});
  const auto h = run_ok("Cast", 13, {&x}, 1, cast_to(DType::kFloat16));
  ASSERT_EQ(h[0].dtype(), DType::kFloat16);
  EXPECT_EQ(values<uint16_t>(h[0]), (std::vector<uint16_t>{0x3800, 0xbd00, 0x7bff, 0x7c00, 0x0000,
                                                           0x7e00, 0xfc00, 0x2e66}));
  const auto back = run_ok("Cast", 13, {&h[0]}, 1, cast_to(DType::kFloat));
  expect_near_all<float>(back[0], {0.5, -1.25, 65504, INFINITY, 0, NAN, -INFINITY, 0.0999755859375},
                         0);
  const auto d = run_ok("Cast", 13, {&h[0]}, 1, cast_to(DType::kDouble));
  expect_near_all<double>(d[0], {0.5, -1.25, 65504, INFINITY, 0, NAN, -INFINITY, 0.0999755859375},
                          0);
}

TEST(MathCastNarrow, DoubleToFloat16RoundsOnce) {
  // 1 + 2^-11 + 2^-30 is just above a half-way point; through float it would land on the tie
  // (float keeps 23 bits) and round to even (down). Rounded once it goes up.
  const HostTensor x = f64({1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)});
  EXPECT_EQ(values<uint16_t>(run_ok("Cast", 13, {&x}, 1, cast_to(DType::kFloat16))[0]),
            (std::vector<uint16_t>{0x3c01}));
}

TEST(MathCastNarrow, IntegersBoolAndBFloat16) {
  const HostTensor i = i64({4}, {3, -70000, 2049, 0});
  EXPECT_EQ(values<uint16_t>(run_ok("Cast", 13, {&i}, 1, cast_to(DType::kFloat16))[0]),
            (std::vector<uint16_t>{0x4200, 0xfc00, 0x6800, 0x0000}));  // 2049 ties to 2048
  const HostTensor h = f16_of({4}, {2.75f, -3.5f, 70000.f, std::nanf("")});
  EXPECT_EQ(values<int32_t>(run_ok("Cast", 13, {&h}, 1, cast_to(DType::kInt32))[0]),
            (std::vector<int32_t>{2, -3, std::numeric_limits<int32_t>::max(), 0}));
  EXPECT_EQ(values<uint8_t>(run_ok("Cast", 13, {&h}, 1, cast_to(DType::kBool))[0]),
            (std::vector<uint8_t>{1, 1, 1, 1}));
  const HostTensor b = b8({2}, {1, 0});
  EXPECT_EQ(values<uint16_t>(run_ok("Cast", 13, {&b}, 1, cast_to(DType::kBFloat16))[0]),
            (std::vector<uint16_t>{0x3f80, 0x0000}));
  // float16 -> bfloat16 through float: 2.75 and -3.5 are exact in both.
  EXPECT_EQ(values<uint16_t>(run_ok("Cast", 13, {&h}, 1, cast_to(DType::kBFloat16))[0]),
            (std::vector<uint16_t>{0x4030, 0xc060, 0x7f80, 0x7fc0}));
  const HostTensor x = f32({3}, {0.48033666f, 0.81910545f, -1e-3f});
  const auto bf = run_ok("CastLike", 15, {&x, &b}, 1);
  EXPECT_EQ(bf[0].dtype(), DType::kBool);
  const HostTensor like = make_tensor<uint16_t>(DType::kBFloat16, {1}, {0});
  const auto out = run_ok("CastLike", 15, {&x, &like});
  ASSERT_EQ(out[0].dtype(), DType::kBFloat16);
  EXPECT_EQ(values<uint16_t>(out[0]), (std::vector<uint16_t>{0x3ef6, 0x3f52, 0xba83}));
}

TEST(MathCastNarrow, HalfFloatsWriteAndReadStrings) {
  // Through float: the shortest text that reads back as the float16 value.
  const HostTensor x = f16_of({3}, {1.f, -2.5f, 0.125f});
  const HostTensor s = run_ok("Cast", 13, {&x}, 1, cast_to(DType::kString))[0];
  EXPECT_EQ(s.strings(), (std::vector<std::string>{"1", "-2.5", "0.125"}));
  EXPECT_EQ(f16_values(run_ok("Cast", 13, {&s}, 1, cast_to(DType::kFloat16))[0]),
            f16_values(x));
}

TEST(MathNarrowElementwise, UnaryBinaryAndVariadicComputeInFloat) {
  const HostTensor x = f16_of({4}, {-1.5f, 0.f, 2.f, 3.f});
  const HostTensor y = f16_of({4}, {1.f, -2.f, 2.5f, -4.f});
  EXPECT_EQ(f16_values(run_ok("Relu", 14, {&x})[0]), (std::vector<float>{0, 0, 2, 3}));
  EXPECT_EQ(f16_values(run_ok("Add", 14, {&x, &y})[0]), (std::vector<float>{-0.5f, -2, 4.5f, -1}));
  EXPECT_EQ(values<uint8_t>(run_ok("Less", 13, {&x, &y})[0]), (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(f16_values(run_ok("Max", 13, {&x, &y})[0]), (std::vector<float>{1, 0, 2.5f, 3}));
  EXPECT_EQ(f16_values(run_ok("Min", 13, {&x, &y})[0]), (std::vector<float>{-1.5f, -2, 2, -4}));
  EXPECT_EQ(f16_values(run_ok("Mean", 13, {&x, &y})[0]),
            (std::vector<float>{-0.25f, -1, 2.25f, -0.5f}));
  // Mod with fmod=1 (sign of the dividend) and fmod=0 (sign of the divisor).
  const HostTensor a = f16_of({3}, {-4.3f, 7.2f, 5.f});
  const HostTensor b = f16_of({3}, {2.1f, -3.4f, 3.f});
  const auto fm = f16_values(run_ok("Mod", 13, {&a, &b}, 1, attrs({{"fmod", attr_int(1)}}))[0]);
  const auto pm = f16_values(run_ok("Mod", 13, {&a, &b})[0]);
  for (int i = 0; i < 3; ++i) {
    const float av = f16_values(a)[i], bv = f16_values(b)[i];
    EXPECT_EQ(fm[i], half_to_float(double_to_half(std::fmod(av, bv))));
    float r = std::fmod(av, bv);
    if (r != 0 && ((r < 0) != (bv < 0))) r += bv;
    EXPECT_EQ(pm[i], half_to_float(double_to_half(r)));
  }
  // Mixed types stay an error; bool inputs of float ops stay unsupported.
  const HostTensor f = f32({4}, {1, 2, 3, 4});
  EXPECT_EQ(run_status("Add", 14, {&x, &f}).code(), StatusCode::kInvalidArgument);
  const HostTensor bits = make_tensor<uint16_t>(DType::kBFloat16, {1}, {0x3f80});
  EXPECT_EQ(
      run_status("BitShift", 11, {&bits, &bits}, 1, attrs({{"direction", attr_string("LEFT")}}))
          .code(),
      StatusCode::kUnsupported);
}

TEST(MathNarrowElementwise, ClipAndWhere) {
  const HostTensor x = f16_of({5}, {-3.f, -0.5f, 0.25f, 7.f, std::nanf("")});
  const HostTensor lo = f16_of({}, {-1.f});
  const HostTensor hi = f16_of({}, {2.f});
  const auto both = f16_values(run_ok("Clip", 13, {&x, &lo, &hi})[0]);
  EXPECT_EQ(std::vector<float>(both.begin(), both.begin() + 4),
            (std::vector<float>{-1, -0.5f, 0.25f, 2}));
  EXPECT_TRUE(std::isnan(both[4]));
  const auto upper = f16_values(run_ok("Clip", 13, {&x, nullptr, &hi})[0]);
  EXPECT_EQ(std::vector<float>(upper.begin(), upper.begin() + 4),
            (std::vector<float>{-3, -0.5f, 0.25f, 2}));
  const auto attr = f16_values(
      run_ok("Clip", 6, {&x}, 1, attrs({{"min", attr_float(0)}, {"max", attr_float(5)}}))[0]);
  EXPECT_EQ(std::vector<float>(attr.begin(), attr.begin() + 4),
            (std::vector<float>{0, 0, 0.25f, 5}));
  const HostTensor wrong = f32({}, {1.f});
  EXPECT_EQ(run_status("Clip", 13, {&x, &wrong}).code(), StatusCode::kInvalidArgument);
  const HostTensor c = b8({5}, {1, 0, 1, 0, 1});
  EXPECT_EQ(f16_values(run_ok("Where", 16, {&c, &lo, &hi})[0]),
            (std::vector<float>{-1, 2, -1, 2, -1}));
}

TEST(MathPow, EveryExponentType) {
  const HostTensor x = f32({3}, {1, 2, 3});
  const HostTensor eu32 = make_tensor<uint32_t>(DType::kUint32, {3}, {4, 5, 6});
  const HostTensor eu64 = make_tensor<uint64_t>(DType::kUint64, {3}, {4, 5, 6});
  const HostTensor ei8 = make_tensor<int8_t>(DType::kInt8, {3}, {-1, 0, 2});
  const HostTensor ef16 = f16_of({3}, {0.5f, 2, -1});
  EXPECT_EQ(values<float>(run_ok("Pow", 15, {&x, &eu32})[0]), (std::vector<float>{1, 32, 729}));
  EXPECT_EQ(values<float>(run_ok("Pow", 15, {&x, &eu64})[0]), (std::vector<float>{1, 32, 729}));
  EXPECT_EQ(values<float>(run_ok("Pow", 15, {&x, &ei8})[0]), (std::vector<float>{1, 1, 9}));
  expect_near_all<float>(run_ok("Pow", 15, {&x, &ef16})[0], {1, 4, 1.0 / 3}, 1e-6);
  const HostTensor xi = i64({3}, {2, -3, 10});
  EXPECT_EQ(values<int64_t>(run_ok("Pow", 15, {&xi, &eu32})[0]),
            (std::vector<int64_t>{16, -243, 1000000}));
  const HostTensor xh = f16_of({2}, {2, 3});
  const HostTensor e2 = i32({2}, {3, 2});
  EXPECT_EQ(f16_values(run_ok("Pow", 15, {&xh, &e2})[0]), (std::vector<float>{8, 9}));
  const HostTensor eb = b8({3}, {1, 0, 1});
  EXPECT_EQ(run_status("Pow", 15, {&x, &eb}).code(), StatusCode::kUnsupported);
  const HostTensor xu = make_tensor<uint8_t>(DType::kUint8, {3}, {1, 2, 3});
  EXPECT_EQ(run_status("Pow", 15, {&xu, &x}).code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace sod2::rt::math_test

// The float8 types (opset 19): the conversions of runtime/tensor/float8.h against the ONNX spec
// (onnx/docs/technical/float8.md: its value formulas and its Cast tables), exhaustively over the
// 256 codes of each type and against a brute-force nearest-value reference; then Cast/CastLike to
// and from them, and the arithmetic kernels' refusal of them.
#include <cmath>
#include <cstring>
#include <limits>

#include "math_test_util.h"
#include "runtime/tensor/float8.h"
#include "runtime/tensor/narrow_float.h"

namespace sod2::rt::math_test {
namespace {

constexpr DType kF8[] = {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                         DType::kFloat8E5M2FNUZ};
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::nanf("");

struct Layout {
  int mant_bits, bias;
  bool uz, has_inf;
};
Layout layout(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FNUZ: return {3, 8, true, false};
    case DType::kFloat8E5M2: return {2, 15, false, true};
    case DType::kFloat8E5M2FNUZ: return {2, 16, true, false};
    default: return {3, 7, false, false};
  }
}

// The spec's value of a code, from its formulas (exponent != 0: 2^(e - bias) (1 + m / 2^M); else
// 2^(1 - bias) m / 2^M), written independently of float8.cpp; NaN and infinity by the tables.
double spec_value(DType t, int code) {
  const Layout l = layout(t);
  const int e = (code & 0x7f) >> l.mant_bits, m = code & ((1 << l.mant_bits) - 1);
  const int e_max = (1 << (7 - l.mant_bits)) - 1;
  if (l.uz && code == 0x80) return std::nan("");
  if (!l.uz && !l.has_inf && (code & 0x7f) == 0x7f) return std::nan("");
  if (l.has_inf && e == e_max) return m == 0 ? ((code & 0x80) ? -kInf : kInf) : std::nan("");
  const double frac = static_cast<double>(m) / (1 << l.mant_bits);
  const double v =
      e == 0 ? std::pow(2.0, 1 - l.bias) * frac : std::pow(2.0, e - l.bias) * (1 + frac);
  return (code & 0x80) ? -v : v;
}

TEST(Float8, NamesSizesAndKnownTypes) {
  EXPECT_STREQ(dtype_name(DType::kFloat8E4M3FN), "float8e4m3fn");
  EXPECT_STREQ(dtype_name(DType::kFloat8E4M3FNUZ), "float8e4m3fnuz");
  EXPECT_STREQ(dtype_name(DType::kFloat8E5M2), "float8e5m2");
  EXPECT_STREQ(dtype_name(DType::kFloat8E5M2FNUZ), "float8e5m2fnuz");
  for (DType t : kF8) {
    EXPECT_EQ(dtype_size(t), 1u);
    EXPECT_TRUE(is_float8(t));
    EXPECT_TRUE(is_known_dtype(static_cast<uint8_t>(t)));
  }
  // int4, uint4 and float4 stay unknown to the runtime (4-bit constants are widened at import).
  for (uint8_t raw : {21, 22, 23, 24}) EXPECT_FALSE(is_known_dtype(raw)) << int(raw);
  EXPECT_FALSE(is_float8(DType::kUint8));
}

TEST(Float8, EveryCodeWidensToTheSpecValueAndRoundTrips) {
  for (DType t : kF8) {
    for (int code = 0; code < 256; ++code) {
      const float f = float8_to_float(t, static_cast<uint8_t>(code));
      const double want = spec_value(t, code);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(f)) << dtype_name(t) << " code " << code;
        // NaN narrows to a NaN code, saturating or not.
        for (bool sat : {true, false})
          EXPECT_TRUE(std::isnan(float8_to_float(t, float8_from_float(t, f, sat))));
        continue;
      }
      EXPECT_EQ(static_cast<double>(f), want) << dtype_name(t) << " code " << code;
      EXPECT_EQ(std::signbit(f), (code & 0x80) != 0) << dtype_name(t) << " code " << code;
      // Without saturation every code reads back as itself (infinities included); with it,
      // every finite one.
      EXPECT_EQ(float8_from_float(t, f, false), code) << dtype_name(t) << " code " << code;
      if (std::isfinite(f)) {
        EXPECT_EQ(float8_from_float(t, f, true), code) << dtype_name(t) << " code " << code;
      }
      EXPECT_EQ(float8_from_double(t, want, false), code) << dtype_name(t) << " code " << code;
    }
  }
}

// The nearest finite code by search over all of them (ties to the even code), or -1 when the
// value rounds past the largest finite one: what the spec's RNE column and [x] > FLT_MAX row mean.
struct BruteForce {
  explicit BruteForce(DType type) : t(type) {
    for (int code = 0; code < 128; ++code) {
      value[code] = spec_value(t, code);
      if (std::isfinite(value[code])) max_code = code;
    }
    // The step above the largest value is the step below it (its code never starts a binade).
    overflow_at = value[max_code] + (value[max_code] - value[max_code - 1]) / 2;
  }
  int operator()(double x) const {
    const double ax = std::fabs(x);
    if (ax > overflow_at || (ax == overflow_at && (max_code & 1))) return -1;
    int best = -1;
    double best_d = 0;
    for (int code = 0; code <= max_code; ++code) {
      if (!std::isfinite(value[code])) continue;
      const double d = std::fabs(ax - value[code]);
      if (best < 0 || d < best_d || (d == best_d && (code & 1) == 0)) {
        best = code;
        best_d = d;
      }
    }
    if (best == 0) return layout(t).uz || !std::signbit(x) ? 0 : 0x80;
    return std::signbit(x) ? best | 0x80 : best;
  }
  DType t;
  double value[128];
  int max_code = 0;
  double overflow_at = 0;
};

TEST(Float8, NarrowingRoundsToNearestEvenLikeABruteForceSearch) {
  for (DType t : kF8) {
    const BruteForce brute_force(t);
    std::vector<double> xs;
    // Every midpoint between neighbouring codes, and either side of it.
    for (int code = 0; code < 127; ++code) {
      const double a = spec_value(t, code), b = spec_value(t, code + 1);
      if (!std::isfinite(a) || !std::isfinite(b)) continue;
      const double mid = (a + b) / 2;
      for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), a})
        for (double s : {1.0, -1.0}) xs.push_back(s * x);
    }
    // A sweep of float32 patterns over the whole range.
    for (uint32_t bits = 0; bits < 0x7f800000u; bits += 16411u) {
      float f;
      std::memcpy(&f, &bits, sizeof f);
      xs.push_back(f);
      xs.push_back(-f);
    }
    int mismatches = 0;
    for (double x : xs) {
      const int want = brute_force(x);
      const Layout l = layout(t);
      const uint8_t sign = std::signbit(x) ? 0x80 : 0;
      const int max_code = l.has_inf ? 0x7b : l.uz ? 0x7f : 0x7e;
      const int sat = want >= 0 ? want : sign | max_code;
      const int nosat = want >= 0 ? want : l.has_inf ? sign | 0x7c : l.uz ? 0x80 : sign | 0x7f;
      if (float8_from_double(t, x, true) != sat || float8_from_double(t, x, false) != nosat) {
        if (++mismatches < 5)
          ADD_FAILURE() << dtype_name(t) << " x=" << x << " got "
                        << int(float8_from_double(t, x, true)) << "/"
                        << int(float8_from_double(t, x, false)) << " want " << sat << "/" << nosat;
      }
    }
    EXPECT_EQ(mismatches, 0) << dtype_name(t);
  }
}

// The spec's Cast tables, row by row, and hand-picked values around the ends of each range.
TEST(Float8, SpecTablesAndEdges) {
  struct Row {
    DType t;
    float x;
    int saturated, unsaturated;
  };
  const DType fn = DType::kFloat8E4M3FN, fnuz = DType::kFloat8E4M3FNUZ, e5 = DType::kFloat8E5M2,
              e5uz = DType::kFloat8E5M2FNUZ;
  const Row rows[] = {
      // 0 and -0: -0 is kept where the type has one.
      {fn, 0.f, 0x00, 0x00},
      {fn, -0.f, 0x80, 0x80},
      {fnuz, -0.f, 0x00, 0x00},
      {e5, -0.f, 0x80, 0x80},
      {e5uz, -0.f, 0x00, 0x00},
      // NaN: S.1111.111 (e4m3fn), S.11111.11 (e5m2, one of its NaNs), 0x80 (fnuz).
      {fn, kNaN, 0x7f, 0x7f},
      {fn, -kNaN, 0xff, 0xff},
      {fnuz, -kNaN, 0x80, 0x80},
      {e5, kNaN, 0x7f, 0x7f},
      {e5uz, kNaN, 0x80, 0x80},
      // Infinity: the largest finite value when saturating, except fnuz (NaN); unsaturated,
      // NaN (e4m3fn keeps the sign), infinity (e5m2), NaN (fnuz).
      {fn, kInf, 0x7e, 0x7f},
      {fn, -kInf, 0xfe, 0xff},
      {fnuz, kInf, 0x80, 0x80},
      {fnuz, -kInf, 0x80, 0x80},
      {e5, kInf, 0x7b, 0x7c},
      {e5, -kInf, 0xfb, 0xfc},
      {e5uz, kInf, 0x80, 0x80},
      // The largest finite values, and just past them: 448 / 240 / 57344 / 57344.
      {fn, 448.f, 0x7e, 0x7e},
      {fn, 449.f, 0x7e, 0x7e},  // rounds down to 448
      {fn, 464.f, 0x7e, 0x7e},  // the tie goes to 448 (even mantissa)
      {fn, 465.f, 0x7e, 0x7f},
      {fn, -1e6f, 0xfe, 0xff},
      {fnuz, 240.f, 0x7f, 0x7f},
      {fnuz, 248.f, 0x7f, 0x80},  // tie: 256 would be even
      {fnuz, -1e6f, 0xff, 0x80},
      {e5, 57344.f, 0x7b, 0x7b},
      {e5, 61439.f, 0x7b, 0x7b},
      {e5, 61440.f, 0x7b, 0x7c},  // tie: to 65536 (even)
      {e5, 65000.f, 0x7b, 0x7c},
      {e5, -1e6f, 0xfb, 0xfc},
      {e5uz, 57344.f, 0x7f, 0x7f},
      {e5uz, 1e6f, 0x7f, 0x80},
      {e5uz, -1e6f, 0xff, 0x80},
      // 1, and ties to even between 1 and the next value up.
      {fn, 1.f, 0x38, 0x38},
      {fn, 1.0625f, 0x38, 0x38},
      {fn, 1.1875f, 0x3a, 0x3a},
      {fnuz, 1.f, 0x40, 0x40},
      {e5, 1.f, 0x3c, 0x3c},
      {e5, 1.125f, 0x3c, 0x3c},
      {e5uz, 1.f, 0x40, 0x40},
      {e5uz, -1.f, 0xc0, 0xc0},
      // Subnormals: the smallest (2^-9, 2^-10, 2^-16, 2^-17), half of it (a tie, to 0) and a
      // little more than half (up to it); below that, zero of the input's sign (fnuz: +0).
      {fn, 0x1p-9f, 0x01, 0x01},
      {fn, 0x1p-10f, 0x00, 0x00},
      {fn, 0x1.01p-10f, 0x01, 0x01},
      {fn, 3 * 0x1p-10f, 0x02, 0x02},
      {fn, -0x1p-12f, 0x80, 0x80},
      {fn, 0x1p-6f, 0x08, 0x08},  // the smallest normal
      {fnuz, 0x1p-10f, 0x01, 0x01},
      {fnuz, -0x1p-12f, 0x00, 0x00},
      {fnuz, -0x1p-10f, 0x81, 0x81},
      {e5, 0x1p-16f, 0x01, 0x01},
      {e5, 0x1p-17f, 0x00, 0x00},
      {e5uz, 0x1p-17f, 0x01, 0x01},
      {e5uz, -0x1p-19f, 0x00, 0x00},
      {e5uz, 1e-30f, 0x00, 0x00},
      // Float subnormals are far below every float8 subnormal.
      {fn, std::numeric_limits<float>::denorm_min(), 0x00, 0x00},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(float8_from_float(r.t, r.x, true), r.saturated)
        << dtype_name(r.t) << " x=" << r.x << " saturate=1";
    EXPECT_EQ(float8_from_float(r.t, r.x, false), r.unsaturated)
        << dtype_name(r.t) << " x=" << r.x << " saturate=0";
  }
  EXPECT_EQ(float8_to_float(fn, 0x7e), 448.f);
  EXPECT_EQ(float8_to_float(fnuz, 0x7f), 240.f);
  EXPECT_EQ(float8_to_float(e5, 0x7b), 57344.f);
  EXPECT_EQ(float8_to_float(e5uz, 0x7f), 57344.f);
  EXPECT_EQ(float8_to_float(e5, 0xfc), -kInf);
  EXPECT_TRUE(std::isnan(float8_to_float(e5, 0x7d)));
  EXPECT_EQ(float8_to_float(fnuz, 0xff), -240.f);  // not a NaN in the fnuz types
}

TEST(Float8, ArraysMatchTheScalarConversions) {
  std::vector<float> xs;
  for (int i = -300; i <= 300; ++i) xs.push_back(static_cast<float>(i) * 1.7f);
  xs.push_back(kNaN);
  xs.push_back(kInf);
  for (DType t : kF8) {
    for (bool sat : {true, false}) {
      std::vector<uint8_t> q(xs.size());
      narrow_to_float8(t, xs.data(), q.data(), static_cast<int64_t>(xs.size()), sat);
      std::vector<float> back(xs.size());
      widen_float8(t, q.data(), back.data(), static_cast<int64_t>(q.size()));
      for (size_t i = 0; i < xs.size(); ++i) {
        ASSERT_EQ(q[i], float8_from_float(t, xs[i], sat)) << dtype_name(t) << " " << xs[i];
        const float want = float8_to_float(t, q[i]);
        ASSERT_TRUE(std::isnan(want) ? std::isnan(back[i]) : back[i] == want);
      }
    }
  }
}

// ---- Cast -----------------------------------------------------------------------------------

HostTensor f8(DType t, Shape s, const std::vector<uint8_t>& bits) {
  return make_tensor(t, s, bits);
}

Attrs cast_to(DType t, int64_t saturate) {
  return attrs({{"to", attr_int(static_cast<int64_t>(t))}, {"saturate", attr_int(saturate)}});
}

TEST(Float8Cast, FloatToEachFloat8AndBack) {
  const std::vector<float> xs = {0.f, -0.f, 1.f, -2.5f, 0.3f, 500.f, -1e6f, kInf, -kInf, kNaN};
  const HostTensor x = f32({static_cast<int64_t>(xs.size())}, xs);
  for (DType t : kF8) {
    for (int64_t sat : {1, 0}) {
      const auto y = run_ok("Cast", 19, {&x}, 1, cast_to(t, sat));
      ASSERT_EQ(y[0].dtype(), t);
      const std::vector<uint8_t> bits = values<uint8_t>(y[0]);
      for (size_t i = 0; i < xs.size(); ++i)
        EXPECT_EQ(bits[i], float8_from_float(t, xs[i], sat == 1))
            << dtype_name(t) << " " << xs[i] << " saturate " << sat;
      const auto back = run_ok("Cast", 19, {&y[0]}, 1, cast_to(DType::kFloat, 1));
      const std::vector<float> f = values<float>(back[0]);
      for (size_t i = 0; i < xs.size(); ++i) {
        const float want = float8_to_float(t, bits[i]);
        EXPECT_TRUE(std::isnan(want) ? std::isnan(f[i]) : f[i] == want) << f[i] << " " << want;
      }
    }
  }
  // e4m3fn, saturating: 500 and -1e6 clamp to +-448, infinities too; NaN stays NaN.
  const auto y = run_ok("Cast", 19, {&x}, 1, cast_to(DType::kFloat8E4M3FN, 1));
  const auto back = values<float>(run_ok("Cast", 19, {&y[0]}, 1, cast_to(DType::kFloat, 1))[0]);
  EXPECT_EQ(back[5], 448.f);
  EXPECT_EQ(back[6], -448.f);
  EXPECT_EQ(back[7], 448.f);
  EXPECT_EQ(back[8], -448.f);
  EXPECT_TRUE(std::isnan(back[9]));
  EXPECT_EQ(back[4], 0.3125f);  // 0.3 to the nearest e4m3fn
  // e5m2 without saturation: past 57344 is infinity.
  const auto z = run_ok("Cast", 19, {&x}, 1, cast_to(DType::kFloat8E5M2, 0));
  const auto zb = values<float>(run_ok("Cast", 19, {&z[0]}, 1, cast_to(DType::kFloat, 1))[0]);
  EXPECT_EQ(zb[6], -kInf);
  EXPECT_EQ(zb[7], kInf);
  EXPECT_EQ(zb[5], 512.f);
}

TEST(Float8Cast, SaturateDefaultsToOneAndIsCheckedAtOpset19) {
  const HostTensor x = f32({2}, {1000.f, -1000.f});
  const auto y = run_ok("Cast", 19, {&x}, 1,
                        attrs({{"to", attr_int(static_cast<int64_t>(DType::kFloat8E4M3FN))}}));
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{0x7e, 0xfe}));
  EXPECT_EQ(run_status("Cast", 19, {&x}, 1, cast_to(DType::kFloat8E4M3FN, 2)).code(),
            StatusCode::kInvalidModel);
}

TEST(Float8Cast, BetweenFloat8AndOtherTypes) {
  // e4m3fn codes of 1.5, -3, 448, NaN.
  const HostTensor x = f8(DType::kFloat8E4M3FN, {4}, {0x3c, 0xc4, 0x7e, 0x7f});
  EXPECT_EQ(values<int32_t>(run_ok("Cast", 19, {&x}, 1, cast_to(DType::kInt32, 1))[0]),
            (std::vector<int32_t>{1, -3, 448, 0}));
  const auto d = values<double>(run_ok("Cast", 19, {&x}, 1, cast_to(DType::kDouble, 1))[0]);
  EXPECT_EQ(d[0], 1.5);
  EXPECT_TRUE(std::isnan(d[3]));
  const auto h = run_ok("Cast", 19, {&x}, 1, cast_to(DType::kFloat16, 1));
  EXPECT_EQ(values<uint16_t>(h[0])[2], double_to_half(448.0));
  // float8 to float8 goes through float: 448 saturates to e4m3fnuz's 240, or is its NaN.
  EXPECT_EQ(values<uint8_t>(run_ok("Cast", 19, {&x}, 1, cast_to(DType::kFloat8E4M3FNUZ, 1))[0]),
            (std::vector<uint8_t>{0x44, 0xcc, 0x7f, 0x80}));
  EXPECT_EQ(values<uint8_t>(run_ok("Cast", 19, {&x}, 1, cast_to(DType::kFloat8E4M3FNUZ, 0))[0]),
            (std::vector<uint8_t>{0x44, 0xcc, 0x80, 0x80}));
  // Integers and float16 to float8: through double, rounded once.
  const HostTensor i = i64({3}, {17, -100000, 3});
  EXPECT_EQ(values<uint8_t>(run_ok("Cast", 19, {&i}, 1, cast_to(DType::kFloat8E5M2, 1))[0]),
            (std::vector<uint8_t>{float8_from_double(DType::kFloat8E5M2, 17, true), 0xfb, 0x42}));
  // CastLike takes the type (and saturate) of its second input's.
  const HostTensor like = f8(DType::kFloat8E5M2FNUZ, {1}, {0});
  const HostTensor big = f32({2}, {1e9f, 2.f});
  const auto cl = run_ok("CastLike", 19, {&big, &like}, 1, attrs({{"saturate", attr_int(0)}}));
  EXPECT_EQ(cl[0].dtype(), DType::kFloat8E5M2FNUZ);
  EXPECT_EQ(values<uint8_t>(cl[0]), (std::vector<uint8_t>{0x80, 0x44}));
  // Strings have no float8 form here: a clear error.
  EXPECT_EQ(run_status("Cast", 19, {&x}, 1, cast_to(DType::kString, 1)).code(),
            StatusCode::kUnsupported);
}

// Arithmetic never reads float8 bytes as numbers: the kernels refuse the type by name.
TEST(Float8Cast, ArithmeticRefusesFloat8) {
  const HostTensor a = f8(DType::kFloat8E4M3FN, {2}, {0x38, 0x40});
  const Status add = run_status("Add", 14, {&a, &a});
  EXPECT_EQ(add.code(), StatusCode::kUnsupported) << add.to_string();
  EXPECT_NE(add.message().find("Add"), std::string::npos) << add.message();
  EXPECT_NE(add.message().find("float8e4m3fn"), std::string::npos) << add.message();
  const Status relu = run_status("Relu", 14, {&a});
  EXPECT_EQ(relu.code(), StatusCode::kUnsupported) << relu.to_string();
  EXPECT_NE(relu.message().find("float8e4m3fn"), std::string::npos) << relu.message();
}

}  // namespace
}  // namespace sod2::rt::math_test

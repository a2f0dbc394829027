// The vectorised float paths (vec_kernels.h): Erf's polynomial against double erf over a dense
// sweep, every unary fast path at lengths that leave vector tails, the broadcast patterns of
// transformer graphs for Add/Sub/Mul/Div, Softmax/LogSoftmax along the last and a strided axis
// with extreme values, and bit-identical results with one and two threads.
#include <bit>
#include <cmath>
#include <functional>
#include <limits>

#include "math_test_util.h"
#include "runtime/kernels/math/broadcast.h"

namespace sod2::rt::math_test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

HostTensor f32_of(const std::vector<float>& v) { return f32({static_cast<int64_t>(v.size())}, v); }

TEST(MathVecErf, DenseSweepWithin1e7OfDoubleErf) {
  std::vector<float> xs;
  for (float v = -6.0f; v <= 6.0f; v += 1.0f / 4096) xs.push_back(v);
  // Around the switch between the two fits, and tiny magnitudes (relative accuracy).
  for (float v = 0.9f; v < 0.95f; v += 1e-6f) xs.push_back(v);
  for (float v = 1e-30f; v < 1; v *= 1.01f) xs.push_back(v);
  const HostTensor x = f32_of(xs);
  const auto out = run_ok("Erf", 13, {&x});
  const float* y = out[0].data<float>();
  double max_abs = 0, max_rel = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = std::erf(static_cast<double>(xs[i]));
    const double d = std::abs(y[i] - e);
    max_abs = std::max(max_abs, d);
    if (std::abs(xs[i]) < 0.95f) max_rel = std::max(max_rel, d / std::abs(e));
    ASSERT_LE(d, 1.5e-7) << "erf(" << xs[i] << ") = " << y[i] << ", expected " << e;
  }
  EXPECT_LE(max_rel, 2e-7);
  // Odd like erf: erf(-x) == -erf(x) exactly.
  std::vector<float> neg;
  for (float v : xs) neg.push_back(-v);
  const HostTensor xn = f32_of(neg);
  const auto outn = run_ok("Erf", 13, {&xn});
  for (size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(outn[0].data<float>()[i], -y[i]) << xs[i];
}

TEST(MathVecErf, SpecialValues) {
  const HostTensor x = f32_of({0.0f, -0.0f, kInf, -kInf, std::nanf(""), 1e30f, -1e30f, 4.0f, -3.95f,
                               1e-40f, 0.921875f, std::nextafter(0.921875f, 0.0f)});
  const auto y = values<float>(run_ok("Erf", 13, {&x})[0]);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_TRUE(std::signbit(y[1]));
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], 1.0f);
  EXPECT_EQ(y[6], -1.0f);
  EXPECT_EQ(y[7], 1.0f);
  EXPECT_NEAR(y[8], std::erf(-3.95), 1e-7);
  EXPECT_NEAR(y[9], std::erf(double(1e-40f)), 3e-45);  // subnormal: x * 2 / sqrt(pi), rounded
  EXPECT_NEAR(y[10], std::erf(0.921875), 1.5e-7);
  EXPECT_NEAR(y[11], std::erf(double(std::nextafter(0.921875f, 0.0f))), 1.5e-7);
}

struct FastUnary {
  const char* op;
  int opset;
  float lo, hi;
  std::function<double(double)> ref;
  double rel;
  double floor = 1e-6;  // HardSigmoid/HardSwish cancel near their kinks: absolute there
};

// Every length from 1 to 70 (all vector tails of 4, 8 and 16 lanes), plus a long odd one.
TEST(MathVecUnary, AllLengthsMatchDoubleReference) {
  const std::vector<FastUnary> cases = {
      {"Relu", 14, -5, 5, [](double x) { return x > 0 ? x : 0; }, 0},
      {"LeakyRelu", 16, -5, 5, [](double x) { return x < 0 ? double(0.01f) * x : x; }, 1e-6},
      {"Sigmoid", 13, -30, 30, [](double x) { return 1 / (1 + std::exp(-x)); }, 2e-6},
      {"HardSigmoid", 6, -6, 6,
       [](double x) { return std::min(1.0, std::max(0.0, double(0.2f) * x + 0.5)); }, 1e-6, 1},
      {"HardSwish", 14, -6, 6,
       [](double x) { return x * std::min(1.0, std::max(0.0, x / 6 + 0.5)); }, 1e-6, 1},
      {"Tanh", 13, -10, 10, [](double x) { return std::tanh(x); }, 2e-6},
      {"Erf", 13, -5, 5, [](double x) { return std::erf(x); }, 2e-7},
      {"Exp", 13, -80, 80, [](double x) { return std::exp(x); }, 2e-6},
      {"Sqrt", 13, 0, 100, [](double x) { return std::sqrt(x); }, 1e-7},
      {"Reciprocal", 13, 0.5f, 10, [](double x) { return 1 / x; }, 1e-7},
      {"Neg", 13, -5, 5, [](double x) { return -x; }, 0},
      {"Abs", 13, -5, 5, [](double x) { return std::abs(x); }, 0},
      {"Floor", 13, -5, 5, [](double x) { return std::floor(x); }, 0},
      {"Ceil", 13, -5, 5, [](double x) { return std::ceil(x); }, 0},
      {"Round", 11, -5, 5, [](double x) { return std::nearbyint(x); }, 0},
      {"Softsign", 1, -5, 5, [](double x) { return x / (1 + std::abs(x)); }, 1e-6},
  };
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 70; ++n) lengths.push_back(n);
  lengths.push_back(1031);
  for (const FastUnary& c : cases) {
    for (int64_t n : lengths) {
      const HostTensor x = random_f32({n}, c.lo, c.hi, static_cast<uint32_t>(n));
      std::vector<double> expected;
      for (float v : values<float>(x)) expected.push_back(c.ref(v));
      expect_near_all<float>(run_ok(c.op, c.opset, {&x})[0], expected, c.rel, c.floor,
                             std::string(c.op) + " n=" + std::to_string(n));
    }
  }
}

TEST(MathVecUnary, ExtremeInputs) {
  const HostTensor x = f32_of({-kInf, kInf, std::nanf(""), -0.0f, 0.0f, -1e30f, 1e30f, -3, 3,
                               -2.9999998f, 3.0000002f, -1e-45f});
  const auto hs = values<float>(run_ok("HardSwish", 14, {&x})[0]);
  EXPECT_TRUE(std::isnan(hs[0]));  // -inf * 0, like the reference formula
  EXPECT_EQ(hs[1], kInf);
  EXPECT_TRUE(std::isnan(hs[2]));
  EXPECT_EQ(hs[5], -0.0f);
  EXPECT_EQ(hs[6], 1e30f);
  EXPECT_EQ(hs[7], 0.0f);
  EXPECT_EQ(hs[8], 3.0f);
  const auto relu = values<float>(run_ok("Relu", 14, {&x})[0]);
  EXPECT_EQ(relu[0], 0.0f);
  EXPECT_EQ(relu[1], kInf);
  EXPECT_EQ(relu[6], 1e30f);
  const auto sg = values<float>(run_ok("Sigmoid", 13, {&x})[0]);
  EXPECT_EQ(sg[0], 0.0f);
  EXPECT_EQ(sg[1], 1.0f);
  EXPECT_TRUE(std::isnan(sg[2]));
  EXPECT_EQ(sg[3], 0.5f);
  const auto th = values<float>(run_ok("Tanh", 13, {&x})[0]);
  EXPECT_EQ(th[0], -1.0f);
  EXPECT_EQ(th[1], 1.0f);
  EXPECT_TRUE(std::isnan(th[2]));
}

// Sigmoid runs whole vectors of 16 and then the rest one float at a time (sigmoid_lanes): the
// same values either way, the limits exact, NaN kept, and within 2e-7 of the definition where
// -x crosses the clamps (e^-x leaving the float range at both ends).
TEST(MathVecUnary, SigmoidIsTheSameInVectorsAndInTheTail) {
  const std::vector<float> special = {-kInf, kInf,   std::nanf(""), -0.0f,  0.0f,  -1e30f,
                                      1e30f, -88.5f, -88.0f,        -87.0f, 87.0f, 88.0f,
                                      89.0f, -20.f,  20.f,          0.25f,  -0.25f};
  std::vector<float> all;
  for (int r = 0; r < 5; ++r) all.insert(all.end(), special.begin(), special.end());
  const HostTensor x = f32_of(all);
  const auto sg = values<float>(run_ok("Sigmoid", 13, {&x})[0]);
  ASSERT_EQ(sg.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const float v = all[i];
    SCOPED_TRACE("x = " + std::to_string(v) + " at " + std::to_string(i));
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(sg[i]));
      continue;
    }
    EXPECT_EQ(std::bit_cast<uint32_t>(sg[i]), std::bit_cast<uint32_t>(sg[i % special.size()]));
    const double want = 1 / (1 + std::exp(-static_cast<double>(v)));
    EXPECT_NEAR(sg[i], want, 2e-7 * std::max(want, 1e-30)) << "relative";
    EXPECT_GE(sg[i], 0.0f);
    EXPECT_LE(sg[i], 1.0f);
  }
  EXPECT_EQ(sg[0], 0.0f);
  EXPECT_EQ(sg[1], 1.0f);
  EXPECT_EQ(sg[3], 0.5f);
}

// ---- binary broadcasting

struct BinCase {
  Shape a, b;
};

std::vector<BinCase> transformer_cases() {
  return {
      {{2, 3, 37, 37}, {2, 1, 1, 37}},  // attention scores + additive mask
      {{2, 37, 3, 5}, {1, 37, 1, 5}},   // a middle dim broadcast
      {{2, 19, 24}, {24}},              // bias on the last dim
      {{24}, {2, 19, 24}},              // bias first
      {{2, 19, 24}, {}},                // scalar divisor
      {{}, {2, 19, 24}},                // scalar first (1 - x)
      {{2, 19, 24}, {2, 19, 1}},        // per-row scale (LayerNorm decomposed)
      {{2, 19, 1}, {2, 19, 24}},
      {{3, 7, 5, 5}, {1, 7, 1, 1}},  // per-channel NCHW
      {{3, 1, 4}, {1, 5, 1}},        // both sides broadcast
      {{4, 1}, {1, 6}},              // outer product
      {{1001}, {1001}},              // flat, odd
      {{5, 3}, {5, 3}},
  };
}

TEST(MathVecBinary, BroadcastPatternsMatchReference) {
  const std::vector<std::pair<const char*, std::function<double(float, float)>>> ops = {
      {"Add", [](float x, float y) { return double(x) + y; }},
      {"Sub", [](float x, float y) { return double(x) - y; }},
      {"Mul", [](float x, float y) { return double(x) * y; }},
      {"Div", [](float x, float y) { return double(x) / y; }},
  };
  uint32_t seed = 100;
  for (const BinCase& c : transformer_cases()) {
    const HostTensor a = random_f32(c.a, -3, 3, seed++);
    const HostTensor b = random_f32(c.b, 0.5f, 3, seed++);
    Shape out_shape;
    ASSERT_TRUE(math::broadcast_shapes("test", c.a, c.b, &out_shape).ok());
    for (const auto& [op, f] : ops) {
      std::vector<double> expected;
      for (int64_t i = 0; i < out_shape.numel(); ++i) {
        expected.push_back(f(a.data<float>()[broadcast_index(out_shape, i, c.a)],
                             b.data<float>()[broadcast_index(out_shape, i, c.b)]));
      }
      const auto out = run_ok(op, 14, {&a, &b});
      ASSERT_EQ(out[0].shape(), out_shape) << op;
      expect_near_all<float>(out[0], expected, 1e-7, 1e-30,
                             std::string(op) + c.a.to_string() + c.b.to_string());
    }
  }
}

// Big enough that two threads split the output mid-row and mid-block.
TEST(MathVecBinary, ChunkBoundariesIdenticalWithOneAndTwoThreads) {
  const std::vector<BinCase> cases = {
      {{3, 5, 7001}, {5, 1}}, {{2, 4, 97, 97}, {2, 1, 1, 97}},  {{777, 129}, {129}},
      {{100003}, {}},         {{9, 31, 1, 17}, {1, 1, 13, 17}},
  };
  uint32_t seed = 200;
  for (const BinCase& c : cases) {
    const HostTensor a = random_f32(c.a, -3, 3, seed++);
    const HostTensor b = random_f32(c.b, 0.5f, 3, seed++);
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      const auto one = run_ok(op, 14, {&a, &b}, 1, {}, 1);
      const auto two = run_ok(op, 14, {&a, &b}, 1, {}, 2);
      EXPECT_EQ(one[0].bytes(), two[0].bytes()) << op << c.a.to_string() << c.b.to_string();
      // And against the reference, elementwise exact for one IEEE op.
      Shape out_shape = one[0].shape();
      const float* y = one[0].data<float>();
      for (int64_t i = 0; i < out_shape.numel(); i += 7) {
        const float x0 = a.data<float>()[broadcast_index(out_shape, i, c.a)];
        const float y0 = b.data<float>()[broadcast_index(out_shape, i, c.b)];
        const float want = op[0] == 'A'   ? x0 + y0
                           : op[0] == 'S' ? x0 - y0
                           : op[0] == 'M' ? x0 * y0
                                          : x0 / y0;
        ASSERT_EQ(y[i], want) << op << c.a.to_string() << c.b.to_string() << " at " << i;
      }
    }
  }
}

TEST(MathVecUnary, LongInputsIdenticalWithOneAndTwoThreads) {
  const HostTensor x = random_f32({200003}, -8, 8, 300);
  for (const char* op :
       {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "HardSwish", "HardSigmoid", "Softsign"}) {
    const int opset = std::string(op) == "HardSigmoid" || std::string(op) == "Softsign" ? 6 : 14;
    EXPECT_EQ(run_ok(op, opset, {&x}, 1, {}, 1)[0].bytes(),
              run_ok(op, opset, {&x}, 1, {}, 2)[0].bytes())
        << op;
  }
}

// ---- Softmax

int64_t product_of(const Shape& s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= s[i];
  return p;
}

std::vector<double> softmax_reference(const std::vector<float>& x, int64_t outer, int64_t n,
                                      int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t i) { return (o * n + i) * inner + j; };
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max(m, double(x[at(i)]));
      for (int64_t i = 0; i < n; ++i) s += std::exp(double(x[at(i)]) - m);
      for (int64_t i = 0; i < n; ++i) {
        const double v = double(x[at(i)]) - m;
        y[at(i)] = log ? v - std::log(s) : std::exp(v) / s;
      }
    }
  }
  return y;
}

TEST(MathVecSoftmax, LastAxisAllRowLengths) {
  for (int64_t n : {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100, 384, 1000, 4099}) {
    const HostTensor x = random_f32({3, n}, -20, 20, static_cast<uint32_t>(n));
    const auto xv = values<float>(x);
    for (bool log : {false, true}) {
      const auto out = run_ok(log ? "LogSoftmax" : "Softmax", 13, {&x});
      expect_near_all<float>(
          out[0], softmax_reference(xv, 3, n, 1, log), 1e-5, 1e-6,
          std::string(log ? "LogSoftmax" : "Softmax") + " n=" + std::to_string(n));
    }
  }
}

TEST(MathVecSoftmax, StridedAxisColumnChunks) {
  struct Case {
    Shape shape;
    int axis;
  };
  // inner below, at and above one column chunk (256), odd n; axis 0 leaves one outer block.
  const std::vector<Case> cases = {
      {{2, 5, 3}, 1}, {{2, 7, 255}, 1},   {{2, 7, 256}, 1}, {{2, 9, 257}, 1},
      {{3, 600}, 0},  {{1, 33, 4, 5}, 1}, {{4, 3, 2}, 0},   {{1, 50, 2000}, 1},
  };
  uint32_t seed = 400;
  for (const Case& c : cases) {
    const HostTensor x = random_f32(c.shape, -20, 20, seed++);
    const auto xv = values<float>(x);
    const int64_t outer = product_of(c.shape, 0, c.axis);
    const int64_t n = c.shape[c.axis];
    const int64_t inner = product_of(c.shape, c.axis + 1, c.shape.rank());
    for (bool log : {false, true}) {
      const char* op = log ? "LogSoftmax" : "Softmax";
      const Attrs ax = attrs({{"axis", attr_int(c.axis)}});
      const auto one = run_ok(op, 13, {&x}, 1, ax, 1);
      expect_near_all<float>(one[0], softmax_reference(xv, outer, n, inner, log), 1e-5, 1e-6,
                             std::string(op) + c.shape.to_string());
      EXPECT_EQ(one[0].bytes(), run_ok(op, 13, {&x}, 1, ax, 2)[0].bytes()) << op;
    }
  }
}

TEST(MathVecSoftmax, ExtremeValues) {
  const float nan = std::nanf("");
  // Rows of 20 (a vector body and a tail): -inf entries, one finite among -inf, huge values,
  // all -inf (NaN, like the reference), a NaN (row turns NaN), +inf (NaN).
  std::vector<std::vector<float>> rows = {
      {-kInf, 1, 2, -kInf, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, -kInf, 0},
      {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf,
       -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, 5,     -kInf, -kInf},
      {3e38f, -3e38f, 3e38f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17},
      std::vector<float>(20, -kInf),
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, nan, 19, 20},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, kInf, 19, 20},
      std::vector<float>(20, 88.5f),
      std::vector<float>(20, -1e30f),
  };
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  const int64_t nrows = static_cast<int64_t>(rows.size());
  const HostTensor x = f32({nrows, 20}, flat);
  for (bool log : {false, true}) {
    const char* op = log ? "LogSoftmax" : "Softmax";
    // As float: LogSoftmax of -3e38 next to 3e38 is -6e38, which overflows to -inf.
    auto ref = softmax_reference(flat, nrows, 20, 1, log);
    for (double& v : ref) v = static_cast<float>(v);
    expect_near_all<float>(run_ok(op, 13, {&x})[0], ref, 1e-5, 1e-6, op);
    // The same along axis 0 of the transpose (the column loop).
    std::vector<float> t(flat.size());
    for (int64_t r = 0; r < nrows; ++r)
      for (int64_t i = 0; i < 20; ++i) t[i * nrows + r] = flat[r * 20 + i];
    const HostTensor xt = f32({20, nrows}, t);
    const auto outt = run_ok(op, 13, {&xt}, 1, attrs({{"axis", attr_int(0)}}));
    std::vector<double> reft(ref.size());
    for (int64_t r = 0; r < nrows; ++r)
      for (int64_t i = 0; i < 20; ++i) reft[i * nrows + r] = ref[r * 20 + i];
    expect_near_all<float>(outt[0], reft, 1e-5, 1e-6, std::string(op) + " axis 0");
  }
}

TEST(MathVecSoftmax, RowsSplitAcrossThreadsAreIdentical) {
  const HostTensor x = random_f32({2, 4, 97, 97}, -10, 10, 500);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    EXPECT_EQ(run_ok(op, 13, {&x}, 1, {}, 1)[0].bytes(), run_ok(op, 13, {&x}, 1, {}, 2)[0].bytes())
        << op;
    const Attrs ax = attrs({{"axis", attr_int(2)}});
    EXPECT_EQ(run_ok(op, 13, {&x}, 1, ax, 1)[0].bytes(), run_ok(op, 13, {&x}, 1, ax, 2)[0].bytes())
        << op;
  }
}

}  // namespace
}  // namespace sod2::rt::math_test

// ---- LayerNormalization

namespace sod2::rt::math_test {
namespace {

TEST(MathVecLayerNorm, RowLengthsParamsAndStats) {
  for (int64_t n : {1, 7, 16, 17, 64, 129}) {
    const HostTensor x = random_f32({5, n}, -4, 4, static_cast<uint32_t>(600 + n));
    const HostTensor scale = random_f32({n}, 0.5f, 2, 7);
    const HostTensor bias = random_f32({n}, -1, 1, 8);
    const HostTensor scalar_scale = f32({1}, {1.5f});
    const HostTensor scalar_bias = f32({1}, {-0.25f});
    struct Variant {
      const HostTensor* s;
      const HostTensor* b;
    };
    for (const Variant& v :
         {Variant{&scale, &bias}, Variant{&scale, nullptr}, Variant{&scalar_scale, &scalar_bias},
          Variant{&scale, &scalar_bias}, Variant{&scalar_scale, nullptr}}) {
      std::vector<const HostTensor*> in = {&x, v.s};
      if (v.b) in.push_back(v.b);
      const auto out = run_ok("LayerNormalization", 17, in, 3);
      const auto xv = values<float>(x);
      std::vector<double> y, mean, inv;
      for (int64_t r = 0; r < 5; ++r) {
        double m = 0, var = 0;
        for (int64_t i = 0; i < n; ++i) m += xv[r * n + i];
        m /= double(n);
        for (int64_t i = 0; i < n; ++i) var += (xv[r * n + i] - m) * (xv[r * n + i] - m);
        var /= double(n);
        const double is = 1 / std::sqrt(var + double(1e-5f));
        for (int64_t i = 0; i < n; ++i) {
          const double sc =
              v.s->shape().numel() == 1 ? v.s->data<float>()[0] : v.s->data<float>()[i];
          const double bi = !v.b                        ? 0
                            : v.b->shape().numel() == 1 ? v.b->data<float>()[0]
                                                        : v.b->data<float>()[i];
          y.push_back((xv[r * n + i] - m) * is * sc + bi);
        }
        mean.push_back(m);
        inv.push_back(is);
      }
      // Outputs near 0 keep the rounding of x - mean (about 1e-8 for x ~ 4): an absolute floor
      // of 1e-7, i.e. 1e-5 of the outputs' unit scale.
      expect_near_all<float>(out[0], y, 1e-5, 1e-2, "LayerNorm n=" + std::to_string(n));
      expect_near_all<float>(out[1], mean, 1e-6, 1e-6);
      expect_near_all<float>(out[2], inv, 1e-6);
    }
  }
}

TEST(MathVecLayerNorm, IdenticalWithOneAndTwoThreads) {
  const HostTensor x = random_f32({777, 129}, -3, 3, 700);
  const HostTensor s = random_f32({129}, 0.5f, 2, 701);
  const HostTensor b = random_f32({129}, -1, 1, 702);
  const auto one = run_ok("LayerNormalization", 17, {&x, &s, &b}, 3, {}, 1);
  const auto two = run_ok("LayerNormalization", 17, {&x, &s, &b}, 3, {}, 2);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(one[i].bytes(), two[i].bytes()) << i;
}

}  // namespace
}  // namespace sod2::rt::math_test

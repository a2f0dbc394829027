// The vectorised float loops (vec_kernels.cpp) at every x86-64 level, not just the one this
// machine's ifunc resolver picks: the source is compiled here three more times, into separate
// namespaces, for baseline x86-64 (SSE2), x86-64-v3 (AVX2+FMA) and x86-64-v4 (AVX-512), and each
// level the CPU supports is checked against double references. Each level must also give the
// same bits however a range is split into calls (vector body or scalar tail), which is what
// keeps the kernels identical across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/math/fast_math.h"
#include "runtime/kernels/math/vec_kernels.h"

// Plain functions (no target_clones) in each copy; the #pragma sets the instruction set.
#define SOD2_MATH_CLONES
namespace isa_baseline {
using namespace ::sod2::rt::math;  // NOLINT: the included file names the shared declarations
#include "runtime/kernels/math/vec_kernels.cpp"  // NOLINT(bugprone-suspicious-include)
}  // namespace isa_baseline
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SOD2_TEST_ISA_LEVELS 1
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
namespace isa_v3 {
using namespace ::sod2::rt::math;                // NOLINT
#include "runtime/kernels/math/vec_kernels.cpp"  // NOLINT(bugprone-suspicious-include)
}  // namespace isa_v3
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
namespace isa_v4 {
using namespace ::sod2::rt::math;                // NOLINT
#include "runtime/kernels/math/vec_kernels.cpp"  // NOLINT(bugprone-suspicious-include)
}  // namespace isa_v4
#pragma GCC pop_options
#endif

namespace sod2::rt::math {
namespace {

struct Isa {
  const char* name;
  bool available;
  void (*unary)(UnaryF32, const float*, float*, int64_t, float, float);
  void (*binary)(BinaryF32, float*, const float*, int64_t, int64_t, const float*, int64_t, int64_t,
                 int64_t, int64_t);
  void (*softmax_rows)(const float*, float*, int64_t, int64_t, bool);
  void (*softmax_cols)(const float*, float*, int64_t, int64_t, int64_t, bool);
  void (*layer_norm)(const float*, float*, int64_t, int64_t, const float*, int64_t, const float*,
                     int64_t, double, double*, double*);
};

std::vector<Isa> levels() {
  std::vector<Isa> v;
  namespace b = isa_baseline::sod2::rt::math;
  v.push_back({"baseline", true, &b::unary_f32, &b::binary_rows_f32, &b::softmax_rows_f32,
               &b::softmax_cols_f32, &b::layer_norm_rows_f32});
#ifdef SOD2_TEST_ISA_LEVELS
  namespace v3 = isa_v3::sod2::rt::math;
  namespace v4 = isa_v4::sod2::rt::math;
  v.push_back({"x86-64-v3", __builtin_cpu_supports("x86-64-v3") != 0, &v3::unary_f32,
               &v3::binary_rows_f32, &v3::softmax_rows_f32, &v3::softmax_cols_f32,
               &v3::layer_norm_rows_f32});
  v.push_back({"x86-64-v4", __builtin_cpu_supports("x86-64-v4") != 0, &v4::unary_f32,
               &v4::binary_rows_f32, &v4::softmax_rows_f32, &v4::softmax_cols_f32,
               &v4::layer_norm_rows_f32});
#endif
  return v;
}

std::vector<float> uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

bool near(double got, double want, double rel, double floor) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= rel * std::max(std::abs(want), floor);
}

struct UnaryRef {
  UnaryF32 op;
  const char* name;
  float lo, hi;
  std::function<double(double)> ref;
  double rel, floor;
};

TEST(MathVecIsa, UnaryOpsAtEveryLevel) {
  const float alpha = 0.3f, beta = 0.6f;
  const std::vector<UnaryRef> ops = {
      {UnaryF32::kRelu, "Relu", -5, 5, [](double x) { return x > 0 ? x : 0; }, 0, 0},
      {UnaryF32::kLeakyRelu, "LeakyRelu", -5, 5,
       [&](double x) { return x < 0 ? double(alpha) * x : x; }, 1e-7, 1e-30},
      {UnaryF32::kSigmoid, "Sigmoid", -30, 30, [](double x) { return 1 / (1 + std::exp(-x)); },
       2e-6, 1e-30},
      {UnaryF32::kHardSigmoid, "HardSigmoid", -6, 6,
       [&](double x) { return std::min(1.0, std::max(0.0, double(alpha) * x + double(beta))); },
       1e-6, 1},
      {UnaryF32::kHardSwish, "HardSwish", -6, 6,
       [](double x) { return x * std::min(1.0, std::max(0.0, x / 6 + 0.5)); }, 1e-6, 1},
      {UnaryF32::kTanh, "Tanh", -10, 10, [](double x) { return std::tanh(x); }, 2e-6, 1e-30},
      {UnaryF32::kErf, "Erf", -5, 5, [](double x) { return std::erf(x); }, 1.5e-7, 1},
      {UnaryF32::kExp, "Exp", -87, 88, [](double x) { return std::exp(x); }, 2e-6, 1e-30},
      {UnaryF32::kSqrt, "Sqrt", 0, 100, [](double x) { return std::sqrt(x); }, 1e-7, 1e-30},
      {UnaryF32::kReciprocal, "Reciprocal", 0.1f, 10, [](double x) { return 1 / x; }, 1e-7, 1e-30},
      {UnaryF32::kNeg, "Neg", -5, 5, [](double x) { return -x; }, 0, 0},
      {UnaryF32::kAbs, "Abs", -5, 5, [](double x) { return std::abs(x); }, 0, 0},
      {UnaryF32::kFloor, "Floor", -5, 5, [](double x) { return std::floor(x); }, 0, 0},
      {UnaryF32::kCeil, "Ceil", -5, 5, [](double x) { return std::ceil(x); }, 0, 0},
      {UnaryF32::kRound, "Round", -5, 5, [](double x) { return std::nearbyint(x); }, 0, 0},
      {UnaryF32::kSoftsign, "Softsign", -5, 5, [](double x) { return x / (1 + std::abs(x)); }, 1e-6,
       1e-30},
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (const Isa& isa : levels()) {
    if (!isa.available) {
      std::cout << "skipping " << isa.name << " (not supported by this CPU)\n";
      continue;
    }
    for (const UnaryRef& u : ops) {
      std::vector<float> x = uniform(1037, u.lo, u.hi, 11);
      // Exact halves for Round, and the special values (checked against the same formula in
      // double where it is defined).
      for (float v : {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 0.0f, -0.0f}) x.push_back(v);
      std::vector<float> y(x.size());
      isa.unary(u.op, x.data(), y.data(), static_cast<int64_t>(x.size()), alpha, beta);
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_TRUE(near(y[i], u.ref(x[i]), u.rel, u.floor))
            << isa.name << " " << u.name << "(" << x[i] << ") = " << y[i] << ", expected "
            << u.ref(x[i]);
      }
      // Split into odd pieces: every element lands in a vector body or a tail somewhere.
      std::vector<float> pieces(x.size());
      for (size_t at = 0, len = 1; at < x.size(); at += len, len = len % 37 + 2) {
        const size_t n = std::min(len, x.size() - at);
        isa.unary(u.op, x.data() + at, pieces.data() + at, static_cast<int64_t>(n), alpha, beta);
      }
      ASSERT_EQ(0, std::memcmp(y.data(), pieces.data(), y.size() * sizeof(float)))
          << isa.name << " " << u.name << " differs when split";
    }
    // NaN and infinities where the activation has a defined limit.
    const std::vector<float> sp = {std::nanf(""), inf, -inf};
    std::vector<float> out(3);
    isa.unary(UnaryF32::kErf, sp.data(), out.data(), 3, 0, 0);
    EXPECT_TRUE(std::isnan(out[0]) && out[1] == 1 && out[2] == -1) << isa.name;
    isa.unary(UnaryF32::kSigmoid, sp.data(), out.data(), 3, 0, 0);
    EXPECT_TRUE(std::isnan(out[0]) && out[1] == 1 && out[2] == 0) << isa.name;
    isa.unary(UnaryF32::kTanh, sp.data(), out.data(), 3, 0, 0);
    EXPECT_TRUE(std::isnan(out[0]) && out[1] == 1 && out[2] == -1) << isa.name;
    isa.unary(UnaryF32::kExp, sp.data(), out.data(), 3, 0, 0);
    EXPECT_TRUE(std::isnan(out[0]) && out[1] == inf && out[2] == 0) << isa.name;
  }
}

TEST(MathVecIsa, BinaryRowPatternsAreExact) {
  const std::vector<float> a = uniform(40 * 37, -3, 3, 21);
  const std::vector<float> b = uniform(40 * 37, 0.5f, 3, 22);
  struct Pattern {
    int64_t a_row, a_step, b_row, b_step, rows, n;
  };
  const std::vector<Pattern> patterns = {
      {37, 1, 37, 1, 40, 37},                         // same shape
      {37, 1, 0, 1, 40, 37},                          // one b row repeated (bias, mask)
      {37, 1, 1, 0, 40, 37},                          // one b value per row (per-row scale)
      {0, 1, 37, 1, 40, 37},                          // a row repeated
      {1, 0, 37, 1, 40, 37},  {37, 1, 0, 0, 40, 37},  // scalar b
      {0, 0, 37, 1, 40, 37},                          // scalar a
      {37, 2, 1, 3, 12, 17},                          // strided (general fallback)
      {0, 1, 0, 1, 1, 1},
  };
  for (const Isa& isa : levels()) {
    if (!isa.available) continue;
    for (int op = 0; op < 4; ++op) {
      for (const Pattern& p : patterns) {
        std::vector<float> out(static_cast<size_t>(p.rows * p.n));
        isa.binary(static_cast<BinaryF32>(op), out.data(), a.data(), p.a_row, p.a_step, b.data(),
                   p.b_row, p.b_step, p.rows, p.n);
        for (int64_t r = 0; r < p.rows; ++r) {
          for (int64_t i = 0; i < p.n; ++i) {
            const float x = a[r * p.a_row + i * p.a_step], y = b[r * p.b_row + i * p.b_step];
            const float want = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
            ASSERT_EQ(out[r * p.n + i], want)
                << isa.name << " op " << op << " row " << r << " col " << i;
          }
        }
      }
      // In place (out == a), as an executor reusing a buffer would call it.
      std::vector<float> inplace = a;
      isa.binary(static_cast<BinaryF32>(op), inplace.data(), inplace.data(), 37, 1, b.data(), 0, 1,
                 40, 37);
      for (size_t i = 0; i < inplace.size(); ++i) {
        const float x = a[i], y = b[i % 37];
        const float want = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
        ASSERT_EQ(inplace[i], want) << isa.name << " in place, op " << op << " at " << i;
      }
    }
  }
}

std::vector<double> softmax_ref(const std::vector<float>& x, int64_t outer, int64_t n,
                                int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t i) { return static_cast<size_t>((o * n + i) * inner + j); };
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max(m, double(x[at(i)]));
      for (int64_t i = 0; i < n; ++i) s += std::exp(double(x[at(i)]) - m);
      for (int64_t i = 0; i < n; ++i) {
        const double v = double(x[at(i)]) - m;
        y[at(i)] = static_cast<float>(log ? v - std::log(s) : std::exp(v) / s);
      }
    }
  }
  return y;
}

TEST(MathVecIsa, SoftmaxRowsAndColumns) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const Isa& isa : levels()) {
    if (!isa.available) continue;
    for (int64_t n : {1, 5, 16, 17, 33, 300, 600}) {
      std::vector<float> x = uniform(static_cast<size_t>(3 * n), -30, 30, static_cast<uint32_t>(n));
      x[0] = -inf;  // row 0 keeps other finite values
      if (n > 2) x[static_cast<size_t>(n + 1)] = 3e38f;
      for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(2 * n + i)] = -inf;  // all -inf: NaN
      for (bool log : {false, true}) {
        const auto ref = softmax_ref(x, 3, n, 1, log);
        std::vector<float> y(x.size());
        isa.softmax_rows(x.data(), y.data(), 3, n, log);
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_TRUE(near(y[i], ref[i], 1e-5, 1e-6))
              << isa.name << (log ? " LogSoftmax" : " Softmax") << " n=" << n << " [" << i
              << "] = " << y[i] << ", expected " << ref[i];
        }
        // The same numbers as columns: [n, 3] along axis 0.
        std::vector<float> xt(x.size()), yt(x.size());
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t i = 0; i < n; ++i) xt[i * 3 + r] = x[r * n + i];
        isa.softmax_cols(xt.data(), yt.data(), n, 3, 3, log);
        for (int64_t r = 0; r < 3; ++r) {
          for (int64_t i = 0; i < n; ++i) {
            ASSERT_TRUE(near(yt[i * 3 + r], ref[r * n + i], 1e-5, 1e-6))
                << isa.name << " columns n=" << n << " row " << r << " i " << i;
          }
        }
      }
    }
    // Wide column blocks: every column count up to one chunk.
    const std::vector<float> w = uniform(7 * 256, -10, 10, 31);
    const auto ref = softmax_ref(w, 1, 7, 256, false);
    for (int64_t cols : {1, 15, 16, 17, 255, 256}) {
      std::vector<float> y(w.size(), -1);
      isa.softmax_cols(w.data(), y.data(), 7, 256, cols, false);
      for (int64_t i = 0; i < 7; ++i) {
        for (int64_t j = 0; j < 256; ++j) {
          const float got = y[i * 256 + j];
          if (j >= cols) {
            ASSERT_EQ(got, -1) << isa.name << " wrote past its columns";
          } else {
            ASSERT_TRUE(near(got, ref[i * 256 + j], 1e-5, 1e-6)) << isa.name << " cols " << cols;
          }
        }
      }
    }
  }
}

TEST(MathVecIsa, LayerNormRows) {
  for (const Isa& isa : levels()) {
    if (!isa.available) continue;
    for (int64_t n : {1, 3, 16, 31, 128}) {
      const std::vector<float> x = uniform(static_cast<size_t>(4 * n), -4, 4, 41);
      const std::vector<float> s = uniform(static_cast<size_t>(n), 0.5f, 2, 42);
      const std::vector<float> b = uniform(static_cast<size_t>(n), -1, 1, 43);
      std::vector<float> y(x.size());
      double mean[4], inv[4];
      isa.layer_norm(x.data(), y.data(), 4, n, s.data(), 1, b.data(), 1, 1e-5, mean, inv);
      for (int64_t r = 0; r < 4; ++r) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < n; ++i) m += x[r * n + i];
        m /= double(n);
        for (int64_t i = 0; i < n; ++i) v += (x[r * n + i] - m) * (x[r * n + i] - m);
        v /= double(n);
        const double k = 1 / std::sqrt(v + 1e-5);
        EXPECT_TRUE(near(mean[r], m, 1e-12, 1e-12)) << isa.name;
        EXPECT_TRUE(near(inv[r], k, 1e-12, 1e-12)) << isa.name;
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_TRUE(near(y[r * n + i], (x[r * n + i] - m) * k * s[i] + b[i], 1e-5, 1e-2))
              << isa.name << " n=" << n << " row " << r << " i " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sod2::rt::math

// The portable sgemm (gemm_builtin.h) against a double-accumulating reference: every transpose,
// odd sizes and leading dimensions across its block edges, alpha and beta (0 must not read C).
#include "runtime/kernels/linalg/gemm_builtin.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace sod2::rt {
namespace {

struct Case {
  bool ta, tb;
  int64_t m, n, k;
  float alpha, beta;
};

void check(const Case& c, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t lda = (c.ta ? c.m : c.k) + 3, ldb = (c.tb ? c.k : c.n) + 1, ldc = c.n + 5;
  std::vector<float> a(static_cast<size_t>((c.ta ? c.k : c.m) * lda)),
      b(static_cast<size_t>((c.tb ? c.n : c.k) * ldb)), cm(static_cast<size_t>(c.m * ldc));
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  // beta == 0: C starts as NaN, which must never reach the result.
  for (float& x : cm) x = c.beta == 0.f ? std::numeric_limits<float>::quiet_NaN() : u(rng);
  std::vector<float> c0 = cm;
  GemmArgs g;
  g.trans_a = c.ta;
  g.trans_b = c.tb;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.alpha = c.alpha;
  g.beta = c.beta;
  g.a = a.data();
  g.lda = lda;
  g.b = b.data();
  g.ldb = ldb;
  g.c = cm.data();
  g.ldc = ldc;
  sgemm_builtin(g);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double av =
            c.ta ? a[static_cast<size_t>(p * lda + i)] : a[static_cast<size_t>(i * lda + p)];
        const double bv =
            c.tb ? b[static_cast<size_t>(j * ldb + p)] : b[static_cast<size_t>(p * ldb + j)];
        s += av * bv;
      }
      const size_t at = static_cast<size_t>(i * ldc + j);
      const double want = c.alpha * s + (c.beta == 0.f ? 0.0 : c.beta * c0[at]);
      ASSERT_NEAR(cm[at], want, 1e-4 * (1 + std::abs(want)) * std::sqrt(static_cast<double>(c.k)))
          << "m=" << c.m << " n=" << c.n << " k=" << c.k << " ta=" << c.ta << " tb=" << c.tb
          << " at " << i << "," << j;
    }
    // Columns past n in C's leading dimension are untouched.
    for (int64_t j = c.n; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (c.beta == 0.f)
        EXPECT_TRUE(std::isnan(cm[at]));
      else
        EXPECT_EQ(cm[at], c0[at]);
    }
  }
}

TEST(GemmBuiltin, MatchesTheReferenceAcrossBlockEdges) {
  std::mt19937 rng(7);
  // Sizes straddle the micro-tile (4 or 8 x 8) and the k / m / n blocks (256 / 64 / 1024).
  const int64_t ms[] = {1, 3, 8, 9, 65, 130};
  const int64_t ns[] = {1, 7, 8, 17, 1030};
  const int64_t ks[] = {1, 5, 257, 600};
  int cases = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t m : ms)
        for (int64_t n : ns)
          for (int64_t k : ks) {
            // The largest products only once per transpose pair: the test stays fast.
            if (m * n * k > 2'000'000 && (m != 130 || n != 1030 || k != 257)) continue;
            const float beta = (cases % 3 == 0) ? 0.f : (cases % 3 == 1 ? 1.f : -0.5f);
            check({ta, tb, m, n, k, cases % 2 ? 1.f : 0.75f, beta}, rng);
            ++cases;
          }
  EXPECT_GT(cases, 200);
}

}  // namespace
}  // namespace sod2::rt

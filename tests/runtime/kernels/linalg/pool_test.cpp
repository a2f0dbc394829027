#include <algorithm>
#include <cmath>
#include <limits>

#include <cstring>

#include "runtime/kernels/linalg/simd.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

struct PoolP {
  std::vector<int64_t> k, s, d, pb, pe;
  bool ceil = false, include_pad = false;
};

// 2-D pooling from the definition; output size per ONNX (ceil_mode drops a window that would
// start in the end padding).
std::vector<double> ref_pool(const HostTensor& x, const PoolP& p, bool max, Shape* out) {
  const Shape& xs = x.shape();
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  int64_t o[2];
  const int64_t in[2] = {H, W};
  for (int i = 0; i < 2; ++i) {
    const int64_t d = p.d.empty() ? 1 : p.d[i];
    const int64_t span = in[i] + p.pb[i] + p.pe[i] - ((p.k[i] - 1) * d + 1);
    o[i] = p.ceil ? (span + p.s[i] - 1) / p.s[i] + 1 : span / p.s[i] + 1;
    if (p.ceil && (o[i] - 1) * p.s[i] >= in[i] + p.pb[i]) --o[i];
  }
  *out = Shape{N, C, o[0], o[1]};
  std::vector<double> y;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oy = 0; oy < o[0]; ++oy)
      for (int64_t ox = 0; ox < o[1]; ++ox) {
        const int64_t dy = p.d.empty() ? 1 : p.d[0], dx = p.d.empty() ? 1 : p.d[1];
        double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t n = 0, padded = 0;
        for (int64_t ky = 0; ky < p.k[0]; ++ky)
          for (int64_t kx = 0; kx < p.k[1]; ++kx) {
            const int64_t iy = oy * p.s[0] - p.pb[0] + ky * dy;
            const int64_t ix = ox * p.s[1] - p.pb[1] + kx * dx;
            if (iy < H + p.pe[0] && ix < W + p.pe[1]) ++padded;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            const double v = x.data<float>()[(nc * H + iy) * W + ix];
            acc = max ? std::max(acc, v) : acc + v;
            ++n;
          }
        if (!max) acc /= static_cast<double>(p.include_pad ? padded : n);
        y.push_back(acc);
      }
  return y;
}

Attrs pool_attrs(const PoolP& p) {
  A a;
  a.is("kernel_shape", p.k).is("strides", p.s).i("ceil_mode", p.ceil);
  std::vector<int64_t> pads = p.pb;
  pads.insert(pads.end(), p.pe.begin(), p.pe.end());
  a.is("pads", pads);
  if (!p.d.empty()) a.is("dilations", p.d);
  a.i("count_include_pad", p.include_pad);
  return a;
}

TEST(Pool, MaxPool) {
  const HostTensor x = rand_tensor({2, 3, 11, 10}, 1);
  for (const PoolP& p : {PoolP{{3, 3}, {2, 2}, {}, {1, 1}, {1, 1}},
                         PoolP{{2, 2}, {2, 2}, {}, {0, 0}, {0, 0}, true},      // ceil
                         PoolP{{3, 2}, {2, 3}, {2, 1}, {1, 0}, {2, 1}, true},  // dilated
                         PoolP{{1, 1}, {1, 1}, {}, {0, 0}, {0, 0}}}) {
    Shape out;
    const auto want = ref_pool(x, p, true, &out);
    auto got = run_both("MaxPool", 12, {&x}, 1, pool_attrs(p));
    ASSERT_EQ(got.size(), 1u);
    expect_close(got[0], out, want, 0);
  }
}

// The vectorised row path (2-D, horizontal stride 1 or 2) at every SIMD level: rows wide enough
// for several vector blocks plus a tail, rows for narrower vectors only, narrow rows, pads on each
// side, ceil_mode, count_include_pad, vertical stride and dilation, against the reference.
TEST(Pool, VectorRowPath) {
  const HostTensor wide = rand_tensor({2, 3, 13, 75}, 7), narrow = rand_tensor({1, 2, 9, 6}, 8);
  // Rows too narrow for the widest vector take a narrower one (13 outputs of a 27-wide row at
  // stride 2, as in SqueezeNet; 10 and 5 at stride 1).
  const HostTensor mid = rand_tensor({1, 2, 9, 27}, 9), small = rand_tensor({1, 2, 7, 12}, 10),
                   tiny = rand_tensor({1, 1, 5, 7}, 11);
  std::vector<PoolP> cases;
  for (int64_t k : {2, 3})
    for (int64_t s : {1, 2})
      for (int64_t pad : {0, 1}) {
        if (pad >= k) continue;
        cases.push_back(PoolP{{k, k}, {s, s}, {}, {pad, pad}, {pad, pad}});
        cases.push_back(PoolP{{k, k}, {s, s}, {}, {pad, 0}, {0, pad}, true});
      }
  cases.push_back(PoolP{{3, 5}, {3, 2}, {2, 1}, {1, 2}, {2, 2}});    // vertical dilation
  cases.push_back(PoolP{{2, 4}, {1, 2}, {}, {0, 3}, {1, 3}, true});  // wide pads, ceil
  cases.push_back(PoolP{{3, 5}, {2, 2}, {}, {1, 2}, {1, 2}});        // even left pad, stride 2
  for (int level : {2, 1, 0}) {
    simd::force_simd_level(level);
    for (const HostTensor* x : {&wide, &narrow, &mid, &small, &tiny})
      for (const PoolP& base : cases)
        for (bool include : {false, true}) {
          PoolP p = base;
          p.include_pad = include;
          SCOPED_TRACE("level " + std::to_string(level) + " X " + x->shape().to_string() + " k " +
                       std::to_string(p.k[1]) + " s " + std::to_string(p.s[1]) + " pad " +
                       std::to_string(p.pb[1]) + " include " + std::to_string(include));
          Shape out;
          const auto want_max = ref_pool(*x, p, true, &out);
          auto got = run_both("MaxPool", 12, {x}, 1, pool_attrs(p));
          ASSERT_EQ(got.size(), 1u);
          expect_close(got[0], out, want_max, 0);
          if (!p.d.empty()) continue;  // AveragePool has no dilations before opset 19
          const auto want_avg = ref_pool(*x, p, false, &out);
          got = run_both("AveragePool", 11, {x}, 1, pool_attrs(p));
          ASSERT_EQ(got.size(), 1u);
          expect_close(got[0], out, want_avg);
        }
  }
  simd::force_simd_level(-1);
  // 1-D pooling takes the same path.
  const HostTensor x1 = floats({1, 1, 40}, std::vector<float>(40, 1.f));
  auto got = run_both("AveragePool", 11, {&x1}, 1,
                      A().is("kernel_shape", {3}).is("strides", {2}).is("pads", {1, 1}));
  ASSERT_EQ(got.size(), 1u);
  std::vector<double> want(20, 1.0);
  want[0] = 1.0;  // count_include_pad 0: the padded tap is not counted
  expect_close(got[0], Shape{1, 1, 20}, want);
}

// Float MaxPools at horizontal stride 1 or 2 whose rows are wider than a vector run on row
// buffers (pool_rows.cpp): ResNet's 3x3 stride-2 pad-1 pool, SqueezeNet's ceil-mode one on 111x111,
// googlenet's stride-1 pad-1 pool, a 300x300 plane, horizontal dilation (the phase of a tap is
// (tap * dilation) % stride), pads of at least the kernel (border outputs of 0), rows narrower
// than a vector and a 1-D pool, one and two planes (split into bands of rows), at every SIMD
// level.
TEST(Pool, MaxPoolRowBuffers) {
  const HostTensor small = rand_tensor({2, 5, 14, 14}, 20), odd = rand_tensor({1, 3, 111, 111}, 21),
                   big = rand_tensor({1, 1, 300, 300}, 22), r18 = rand_tensor({1, 2, 112, 112}, 23),
                   wide = rand_tensor({2, 3, 9, 53}, 24), narrow = rand_tensor({1, 2, 6, 7}, 25);
  const std::vector<std::pair<const HostTensor*, PoolP>> cases = {
      {&small, PoolP{{3, 3}, {1, 1}, {}, {1, 1}, {1, 1}, true}},
      {&odd, PoolP{{3, 3}, {2, 2}, {}, {0, 0}, {0, 0}, true}},
      {&big, PoolP{{3, 3}, {1, 1}, {}, {1, 1}, {1, 1}, true}},
      {&big, PoolP{{3, 3}, {2, 2}, {}, {0, 1}, {1, 0}}},
      {&r18, PoolP{{3, 3}, {2, 2}, {}, {1, 1}, {1, 1}}},
      {&wide, PoolP{{2, 3}, {1, 2}, {1, 2}, {0, 1}, {1, 2}, true}},
      {&wide, PoolP{{3, 4}, {2, 1}, {2, 3}, {1, 3}, {2, 3}}},
      {&wide, PoolP{{1, 2}, {1, 2}, {}, {0, 4}, {0, 5}}},  // whole windows in padding
      {&wide, PoolP{{2, 5}, {2, 2}, {}, {1, 2}, {1, 2}, true}},
      {&narrow, PoolP{{3, 3}, {2, 2}, {}, {1, 1}, {1, 1}, true}},
      {&narrow, PoolP{{2, 2}, {1, 1}, {}, {0, 0}, {0, 0}}},
  };
  for (int level : {2, 1, 0}) {
    simd::force_simd_level(level);
    for (const auto& [x, p] : cases) {
      SCOPED_TRACE("level " + std::to_string(level) + " X " + x->shape().to_string() + " k " +
                   std::to_string(p.k[0]) + "x" + std::to_string(p.k[1]) + " s " +
                   std::to_string(p.s[0]) + "," + std::to_string(p.s[1]) + " pads " +
                   std::to_string(p.pb[1]) + "," + std::to_string(p.pe[1]));
      Shape out;
      auto want = ref_pool(*x, p, true, &out);
      // The definition's empty maximum: 0 on every path (see MaxPoolPlanesInVectorLanes).
      for (double& w : want)
        if (std::isinf(w)) w = 0;
      auto got = run_both("MaxPool", 12, {x}, 1, pool_attrs(p));
      ASSERT_EQ(got.size(), 1u);
      expect_close(got[0], out, want, 0);
    }
  }
  simd::force_simd_level(-1);
  // 1-D: a row of 40, stride 2, pad 1.
  std::vector<float> v(40);
  for (int i = 0; i < 40; ++i) v[i] = static_cast<float>((i * 7) % 13);
  const HostTensor x1 = floats({1, 1, 40}, v);
  auto got = run_both("MaxPool", 12, {&x1}, 1,
                      A().is("kernel_shape", {3}).is("strides", {2}).is("pads", {1, 1}));
  ASSERT_EQ(got.size(), 1u);
  std::vector<double> want;
  for (int o = 0; o < 20; ++o) {
    float m = -1;
    for (int t = 0; t < 3; ++t) {
      const int i = o * 2 - 1 + t;
      if (i >= 0 && i < 40) m = std::max(m, v[i]);
    }
    want.push_back(m);
  }
  expect_close(got[0], Shape{1, 1, 20}, want, 0);
}

// Output rows no wider than a vector: planes in vector lanes (pool_lanes.cpp), 42 planes (two
// full groups of 16 and a partial one at AVX-512), GoogLeNet's 3x3 stride-1 and stride-2 ceil-mode
// pools on 14x14 and 7x7, dilation, asymmetric pads, at every SIMD level; a window that lies
// entirely in padding gives 0, as on the other paths.
TEST(Pool, MaxPoolPlanesInVectorLanes) {
  const HostTensor m14 = rand_tensor({3, 14, 14, 14}, 30), m7 = rand_tensor({2, 21, 7, 7}, 31),
                   rect = rand_tensor({1, 5, 9, 4}, 32);
  const std::vector<PoolP> cases = {
      PoolP{{3, 3}, {1, 1}, {}, {1, 1}, {1, 1}},
      PoolP{{3, 3}, {2, 2}, {}, {0, 0}, {0, 0}, true},
      PoolP{{2, 2}, {2, 2}, {}, {0, 0}, {0, 0}},
      PoolP{{3, 3}, {1, 2}, {2, 2}, {2, 1}, {2, 0}},
      PoolP{{2, 3}, {3, 1}, {}, {1, 0}, {0, 2}, true},
  };
  for (int level : {2, 1, 0}) {
    simd::force_simd_level(level);
    for (const HostTensor* x : {&m14, &m7, &rect})
      for (const PoolP& p : cases) {
        SCOPED_TRACE("level " + std::to_string(level) + " X " + x->shape().to_string() + " k " +
                     std::to_string(p.k[0]) + "x" + std::to_string(p.k[1]) + " s " +
                     std::to_string(p.s[0]) + "," + std::to_string(p.s[1]));
        Shape out;
        const auto want = ref_pool(*x, p, true, &out);
        auto got = run_both("MaxPool", 12, {x}, 1, pool_attrs(p));
        ASSERT_EQ(got.size(), 1u);
        expect_close(got[0], out, want, 0);
      }
  }
  simd::force_simd_level(-1);
  // 1x1 windows with a pad of 1: the border outputs see only padding.
  const HostTensor x = floats({1, 1, 2, 2}, {-1, -2, -3, -4});
  auto got =
      run_both("MaxPool", 12, {&x}, 1,
               A().is("kernel_shape", {1, 1}).is("strides", {1, 1}).is("pads", {1, 1, 1, 1}));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 4, 4}, {0, 0, 0, 0, 0, -1, -2, 0, 0, -3, -4, 0, 0, 0, 0, 0}, 0);
}

TEST(Pool, MaxPoolIndices) {
  const HostTensor x = floats({1, 1, 2, 3}, {1, 5, 2, 7, 3, 4});
  auto got = run_both("MaxPool", 12, {&x}, 2, A().is("kernel_shape", {2, 2}));
  ASSERT_EQ(got.size(), 2u);
  expect_close(got[0], Shape{1, 1, 1, 2}, {7, 5});
  ASSERT_EQ(got[1].dtype(), DType::kInt64);
  EXPECT_EQ(got[1].data<int64_t>()[0], 3);
  EXPECT_EQ(got[1].data<int64_t>()[1], 1);
}

// 8-bit MaxPool without indices takes a separable path (rows reduced, then taps along the row);
// with indices the per-window one. Both give the same values, padding and strides included.
TEST(Pool, EightBitMaxPoolSeparablePathMatchesTheWindowedOne) {
  struct Case {
    std::vector<int64_t> k, s, pads;
    int64_t ceil;
  };
  const Case cases[] = {{{3, 3}, {2, 2}, {1, 1, 1, 1}, 0},
                        {{2, 2}, {1, 1}, {0, 0, 0, 0}, 0},
                        {{3, 2}, {2, 3}, {2, 0, 1, 1}, 1},
                        {{1, 5}, {1, 2}, {0, 2, 0, 2}, 0},
                        // Stride 3 phases with ceil mode; pads wider than the kernel, so some
                        // windows lie entirely in padding (0).
                        {{2, 3}, {1, 3}, {0, 1, 0, 2}, 1},
                        {{2, 2}, {2, 2}, {0, 3, 0, 3}, 0}};
  for (DType t : {DType::kUint8, DType::kInt8}) {
    HostTensor x(t, Shape{2, 3, 9, 11});
    for (int64_t i = 0; i < x.shape().numel(); ++i)
      x.bytes()[static_cast<size_t>(i)] = static_cast<uint8_t>((i * 73 + 11) % 256);
    for (const Case& c : cases) {
      const Attrs a =
          A().is("kernel_shape", c.k).is("strides", c.s).is("pads", c.pads).i("ceil_mode", c.ceil);
      auto fast = testing::run_kernel(registry(), "MaxPool", 12, {&x}, 1, a, 2);
      auto windowed = testing::run_kernel(registry(), "MaxPool", 12, {&x}, 2, a, 1);
      ASSERT_TRUE(fast.ok() && windowed.ok());
      const HostTensor& f = (*fast)[0];
      const HostTensor& w = (*windowed)[0];
      ASSERT_EQ(f.shape(), w.shape());
      ASSERT_EQ(f.dtype(), t);
      EXPECT_EQ(std::memcmp(f.bytes().data(), w.bytes().data(), f.bytes().size()), 0)
          << dtype_name(t) << " kernel " << c.k[0] << "x" << c.k[1];
    }
  }
}

TEST(Pool, AveragePool) {
  const HostTensor x = rand_tensor({1, 4, 9, 8}, 2);
  for (bool include : {false, true})
    for (const PoolP& base : {PoolP{{3, 3}, {2, 2}, {}, {1, 1}, {1, 1}},
                              PoolP{{3, 2}, {2, 2}, {}, {1, 0}, {0, 1}, true},
                              PoolP{{2, 2}, {3, 3}, {}, {0, 0}, {0, 0}, true}}) {
      PoolP p = base;
      p.include_pad = include;
      Shape out;
      const auto want = ref_pool(x, p, false, &out);
      auto got = run_both("AveragePool", 11, {&x}, 1, pool_attrs(p));
      ASSERT_EQ(got.size(), 1u);
      expect_close(got[0], out, want);
    }
}

TEST(Pool, AutoPadOneDAndErrors) {
  const HostTensor x = floats({1, 1, 5}, {1, 2, 3, 4, 5});
  // SAME_UPPER, k 2, s 2: out 3, total pad 1 at the end.
  auto got = run_both("AveragePool", 11, {&x}, 1,
                      A().is("kernel_shape", {2}).is("strides", {2}).s("auto_pad", "SAME_UPPER"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 3}, {1.5, 3.5, 5});
  got = run_both("MaxPool", 11, {&x}, 1,
                 A().is("kernel_shape", {2}).is("strides", {2}).s("auto_pad", "SAME_LOWER"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 3}, {1, 3, 5});
  got = run_both("MaxPool", 11, {&x}, 1, A().is("kernel_shape", {3}).s("auto_pad", "VALID"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 3}, {3, 4, 5});
  EXPECT_EQ(run_status("MaxPool", 11, {&x}, 1, A().is("kernel_shape", {7})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("MaxPool", 11, {&x}, 1, A().is("kernel_shape", {2, 2})).code(),
            StatusCode::kInvalidArgument);
  const HostTensor xi(DType::kInt32, Shape{1, 1, 4});  // MaxPool-12 takes int8/uint8, not int32
  EXPECT_EQ(run_status("MaxPool", 12, {&xi}, 1, A().is("kernel_shape", {2})).code(),
            StatusCode::kUnsupported);
  const HostTensor z(DType::kFloat, Shape{0, 3, 4, 4});
  got = run_both("MaxPool", 12, {&z}, 1, A().is("kernel_shape", {2, 2}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape().to_string(), "[0,3,3,3]");
}

TEST(Pool, Global) {
  // Plane sizes below, at and above the vector accumulators' block (4 x 16 floats), and odd;
  // 7x7 is three whole vectors and one float.
  for (int64_t w : {6, 7, 16, 64, 71, 200}) {
    SCOPED_TRACE("plane 7x" + std::to_string(w));
    const HostTensor x = rand_tensor({2, 5, 7, w}, 3);
    const int64_t P = 7 * w;
    std::vector<double> avg, mx;
    for (int64_t p = 0; p < 10; ++p) {
      double s = 0, m = -1e30;
      for (int64_t i = 0; i < P; ++i) {
        s += x.data<float>()[p * P + i];
        m = std::max(m, double(x.data<float>()[p * P + i]));
      }
      avg.push_back(s / P);
      mx.push_back(m);
    }
    for (int level : {2, 1, 0}) {
      simd::force_simd_level(level);
      auto got = run_both("GlobalAveragePool", 1, {&x}, 1, {});
      ASSERT_EQ(got.size(), 1u);
      expect_close(got[0], Shape{2, 5, 1, 1}, avg);
      got = run_both("GlobalMaxPool", 1, {&x}, 1, {});
      ASSERT_EQ(got.size(), 1u);
      expect_close(got[0], Shape{2, 5, 1, 1}, mx);
    }
    simd::force_simd_level(-1);
  }
  const HostTensor z(DType::kFloat, Shape{0, 5, 3});
  auto got = run_both("GlobalAveragePool", 1, {&z}, 1, {});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape().to_string(), "[0,5,1]");
}

}  // namespace
}  // namespace sod2::rt::linalg_test

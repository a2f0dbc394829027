// Softmax, LogSoftmax, LpNormalization, LayerNormalization, BatchNormalization and
// InstanceNormalization.
#include <cmath>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

// Softmax of x viewed as [outer, n, inner] along n.
std::vector<double> softmax_ref(const std::vector<float>& x, int64_t outer, int64_t n,
                                int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max(m, double(x[(o * n + i) * inner + j]));
      for (int64_t i = 0; i < n; ++i) s += std::exp(x[(o * n + i) * inner + j] - m);
      for (int64_t i = 0; i < n; ++i) {
        const double v = x[(o * n + i) * inner + j] - m;
        y[(o * n + i) * inner + j] = log ? v - std::log(s) : std::exp(v) / s;
      }
    }
  }
  return y;
}

TEST(MathSoftmax, Opset13AlongOneAxis) {
  const HostTensor x = random_f32({2, 3, 4}, -5, 5, 3);
  const auto xv = values<float>(x);
  expect_near_all<float>(run_ok("Softmax", 13, {&x})[0], softmax_ref(xv, 6, 4, 1, false), 1e-5);
  expect_near_all<float>(run_ok("Softmax", 13, {&x}, 1, attrs({{"axis", attr_int(1)}}))[0],
                         softmax_ref(xv, 2, 3, 4, false), 1e-5);
  expect_near_all<float>(run_ok("Softmax", 13, {&x}, 1, attrs({{"axis", attr_int(-3)}}))[0],
                         softmax_ref(xv, 1, 2, 12, false), 1e-5);
  expect_near_all<float>(run_ok("LogSoftmax", 13, {&x}, 1, attrs({{"axis", attr_int(1)}}))[0],
                         softmax_ref(xv, 2, 3, 4, true), 1e-5, 1e-5);
}

TEST(MathSoftmax, BeforeOpset13CoercesTo2D) {
  const HostTensor x = random_f32({2, 3, 4}, -5, 5, 4);
  const auto xv = values<float>(x);
  // Default axis 1: rows of 3*4 elements.
  expect_near_all<float>(run_ok("Softmax", 11, {&x})[0], softmax_ref(xv, 2, 12, 1, false), 1e-5);
  expect_near_all<float>(run_ok("Softmax", 11, {&x}, 1, attrs({{"axis", attr_int(2)}}))[0],
                         softmax_ref(xv, 6, 4, 1, false), 1e-5);
  expect_near_all<float>(run_ok("LogSoftmax", 1, {&x})[0], softmax_ref(xv, 2, 12, 1, true), 1e-5,
                         1e-5);
}

TEST(MathSoftmax, LargeValuesZeroSizeAndErrors) {
  const HostTensor x = f32({1, 3}, {1000, 1000, -1000});
  expect_near_all<float>(run_ok("Softmax", 13, {&x})[0], {0.5, 0.5, 0}, 1e-6);
  const HostTensor e = f32({0, 4}, {});
  EXPECT_EQ(run_ok("Softmax", 13, {&e})[0].shape(), (Shape{0, 4}));
  EXPECT_EQ(run_status("Softmax", 13, {&x}, 1, attrs({{"axis", attr_int(2)}})).code(),
            StatusCode::kInvalidArgument);
  const HostTensor xi = i32({2}, {1, 2});
  EXPECT_EQ(run_status("Softmax", 13, {&xi}).code(), StatusCode::kUnsupported);
}

// LpNormalization of x viewed as [outer, n, inner] along n; a zero vector stays zero.
std::vector<double> lp_norm_ref(const std::vector<float>& x, int64_t outer, int64_t n,
                                int64_t inner, int p) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      double norm = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = x[(o * n + i) * inner + j];
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t i = 0; i < n; ++i)
        y[(o * n + i) * inner + j] = norm == 0 ? 0 : x[(o * n + i) * inner + j] / norm;
    }
  }
  return y;
}

TEST(MathLpNorm, L1AndL2AlongAnyAxis) {
  const HostTensor x = random_f32({2, 3, 4}, -5, 5, 7);
  const auto xv = values<float>(x);
  expect_near_all<float>(run_ok("LpNormalization", 1, {&x})[0], lp_norm_ref(xv, 6, 4, 1, 2), 1e-6);
  expect_near_all<float>(
      run_ok("LpNormalization", 1, {&x}, 1, attrs({{"axis", attr_int(1)}, {"p", attr_int(1)}}))[0],
      lp_norm_ref(xv, 2, 3, 4, 1), 1e-6);
  expect_near_all<float>(run_ok("LpNormalization", 1, {&x}, 1, attrs({{"axis", attr_int(-3)}}))[0],
                         lp_norm_ref(xv, 1, 2, 12, 2), 1e-6);
}

TEST(MathLpNorm, ZeroVectorsStayZeroAndBadInputIsAnError) {
  const HostTensor x = f32({2, 2}, {0, 0, 3, 4});
  expect_near_all<float>(run_ok("LpNormalization", 1, {&x})[0], {0, 0, 0.6, 0.8}, 1e-7);
  EXPECT_FALSE(run_status("LpNormalization", 1, {&x}, 1, attrs({{"p", attr_int(3)}})).ok());
  EXPECT_EQ(run_status("LpNormalization", 1, {&x}, 1, attrs({{"axis", attr_int(2)}})).code(),
            StatusCode::kInvalidArgument);
  const HostTensor xi = i32({2}, {1, 2});
  EXPECT_EQ(run_status("LpNormalization", 1, {&xi}).code(), StatusCode::kUnsupported);
  const HostTensor e = f32({0, 3}, {});
  EXPECT_EQ(run_ok("LpNormalization", 1, {&e})[0].shape(), (Shape{0, 3}));
}

TEST(MathLayerNorm, MatchesReferenceWithStatsOutputs) {
  const HostTensor x = random_f32({2, 3, 8}, -3, 3, 5);
  const HostTensor scale = random_f32({3, 8}, 0.5f, 2, 6);
  const HostTensor bias = random_f32({3, 8}, -1, 1, 7);
  const auto out = run_ok("LayerNormalization", 17, {&x, &scale, &bias}, 3,
                          attrs({{"axis", attr_int(-2)}, {"epsilon", attr_float(1e-3f)}}));
  const auto xv = values<float>(x);
  const auto sv = values<float>(scale);
  const auto bv = values<float>(bias);
  std::vector<double> y, mean, inv;
  for (int r = 0; r < 2; ++r) {
    double m = 0, v = 0;
    for (int i = 0; i < 24; ++i) m += xv[r * 24 + i];
    m /= 24;
    for (int i = 0; i < 24; ++i) v += (xv[r * 24 + i] - m) * (xv[r * 24 + i] - m);
    v /= 24;
    const double is = 1 / std::sqrt(v + 1e-3f);
    for (int i = 0; i < 24; ++i) y.push_back((xv[r * 24 + i] - m) * is * sv[i] + bv[i]);
    mean.push_back(m);
    inv.push_back(is);
  }
  expect_near_all<float>(out[0], y, 1e-5, 1e-5);
  EXPECT_EQ(out[1].shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(out[2].dtype(), DType::kFloat);
  expect_near_all<float>(out[1], mean, 1e-5, 1e-5);
  expect_near_all<float>(out[2], inv, 1e-5);
  // No bias, default axis -1.
  const HostTensor s1 = f32({8}, {1, 1, 1, 1, 1, 1, 1, 1});
  const auto plain = run_ok("LayerNormalization", 17, {&x, &s1});
  EXPECT_EQ(plain[0].shape(), x.shape());
  const HostTensor wrong = f32({5}, {});
  EXPECT_EQ(run_status("LayerNormalization", 17, {&x, &wrong}).code(),
            StatusCode::kInvalidArgument);
}

TEST(MathBatchNorm, InferenceMode) {
  const HostTensor x = random_f32({2, 3, 2, 2}, -3, 3, 8);
  const HostTensor scale = f32({3}, {1, 2, 0.5f});
  const HostTensor bias = f32({3}, {0, 1, -1});
  const HostTensor mean = f32({3}, {0.5f, -0.5f, 0});
  const HostTensor var = f32({3}, {1, 4, 0.25f});
  const auto out = run_ok("BatchNormalization", 15, {&x, &scale, &bias, &mean, &var});
  const auto xv = values<float>(x);
  std::vector<double> y;
  for (int i = 0; i < 24; ++i) {
    const int c = (i / 4) % 3;
    y.push_back((xv[i] - mean.data<float>()[c]) / std::sqrt(var.data<float>()[c] + 1e-5f) *
                    scale.data<float>()[c] +
                bias.data<float>()[c]);
  }
  expect_near_all<float>(out[0], y, 1e-5, 1e-5);
  // Opset 14+: the running-statistics outputs only come with training_mode=1.
  EXPECT_EQ(run_status("BatchNormalization", 15, {&x, &scale, &bias, &mean, &var}, 3).code(),
            StatusCode::kInvalidModel);
}

TEST(MathInstanceNorm, PerSampleAndChannel) {
  // Planes shorter than a vector, with a vector tail, and long ones (LayerNormalization's
  // vectorised rows serve float planes).
  for (const int64_t n : {5, 37, 300}) {
    SCOPED_TRACE("plane of " + std::to_string(n));
    const HostTensor x = random_f32({2, 3, n}, -3, 3, 9);
    const HostTensor scale = f32({3}, {1, 2, 0.5f});
    const HostTensor bias = f32({3}, {0, 1, -1});
    const auto out = run_ok("InstanceNormalization", 6, {&x, &scale, &bias});
    const auto xv = values<float>(x);
    std::vector<double> y;
    for (int64_t p = 0; p < 6; ++p) {
      double m = 0, v = 0;
      for (int64_t i = 0; i < n; ++i) m += xv[p * n + i];
      m /= static_cast<double>(n);
      for (int64_t i = 0; i < n; ++i) v += (xv[p * n + i] - m) * (xv[p * n + i] - m);
      v /= static_cast<double>(n);
      for (int64_t i = 0; i < n; ++i)
        y.push_back((xv[p * n + i] - m) / std::sqrt(v + 1e-5f) * scale.data<float>()[p % 3] +
                    bias.data<float>()[p % 3]);
    }
    expect_near_all<float>(out[0], y, 1e-5, 1e-5);
  }
}

TEST(MathThreads, SoftmaxAndLayerNormIdenticalWithOneAndTwoThreads) {
  const HostTensor x = random_f32({512, 1000}, -5, 5, 13);
  const HostTensor s = random_f32({1000}, 0.5f, 2, 14);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    EXPECT_EQ(run_ok(op, 13, {&x}, 1, {}, 1)[0].bytes(), run_ok(op, 13, {&x}, 1, {}, 2)[0].bytes());
    const Attrs axis0 = attrs({{"axis", attr_int(0)}});
    EXPECT_EQ(run_ok(op, 13, {&x}, 1, axis0, 1)[0].bytes(),
              run_ok(op, 13, {&x}, 1, axis0, 2)[0].bytes());
  }
  EXPECT_EQ(run_ok("LayerNormalization", 17, {&x, &s}, 1, {}, 1)[0].bytes(),
            run_ok("LayerNormalization", 17, {&x, &s}, 1, {}, 2)[0].bytes());
}

}  // namespace
}  // namespace sod2::rt::math_test

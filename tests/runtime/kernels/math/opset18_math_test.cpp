// The math kernels of opsets 18-23 (gelu_rms.cpp, bitwise.cpp, dft20.cpp) against the ONNX
// definitions written out in the test, and their bad-input errors.
#include <cmath>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

TEST(Opset18Math, GeluBothFormsAndMish) {
  const HostTensor x = f32({5}, {-3.f, -0.5f, 0.f, 0.7f, 25.f});
  const auto xv = values<float>(x);
  std::vector<double> erf_ref, tanh_ref, mish_ref;
  for (float f : xv) {
    const double v = f;
    erf_ref.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    tanh_ref.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
    mish_ref.push_back(v * std::tanh(std::log1p(std::exp(v))));
  }
  expect_near_all<float>(run_ok("Gelu", 20, {&x})[0], erf_ref, 1e-4, 1e-3);
  expect_near_all<float>(
      run_ok("Gelu", 20, {&x}, 1, attrs({{"approximate", attr_string("tanh")}}))[0], tanh_ref, 1e-4,
      1e-3);
  expect_near_all<float>(run_ok("Mish", 18, {&x})[0], mish_ref, 1e-4, 1e-3);
}

TEST(Opset18Math, GeluRefusesBadModeAndIntegers) {
  const HostTensor x = f32({2}, {1.f, 2.f});
  const Status s = run_status("Gelu", 20, {&x}, 1, attrs({{"approximate", attr_string("fast")}}));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("approximate"), std::string::npos) << s.message();
  const HostTensor n = i32({2}, {1, 2});
  const Status t = run_status("Mish", 18, {&n});
  EXPECT_EQ(t.code(), StatusCode::kUnsupported) << t.message();
}

std::vector<double> group_norm_ref(const std::vector<float>& x, int64_t n, int64_t c,
                                   int64_t spatial, int64_t groups, const std::vector<float>& scale,
                                   const std::vector<float>& bias, bool per_channel, double eps) {
  std::vector<double> y(x.size());
  const int64_t per = c / groups, block = per * spatial;
  for (int64_t i = 0; i < n * groups; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < block; ++j) mean += x[static_cast<size_t>(i * block + j)];
    mean /= static_cast<double>(block);
    for (int64_t j = 0; j < block; ++j) {
      const double d = x[static_cast<size_t>(i * block + j)] - mean;
      var += d * d;
    }
    var /= static_cast<double>(block);
    for (int64_t j = 0; j < block; ++j) {
      const int64_t ch = (i % groups) * per + j / spatial;
      const size_t p = static_cast<size_t>(per_channel ? ch : i % groups);
      const size_t at = static_cast<size_t>(i * block + j);
      y[at] = (x[at] - mean) / std::sqrt(var + eps) * scale[p] + bias[p];
    }
  }
  return y;
}

TEST(Opset18Math, GroupNormalizationPerGroupAt18AndPerChannelAt21) {
  const HostTensor x = random_f32({2, 6, 5}, -2, 2, 7);
  const auto xv = values<float>(x);
  const HostTensor s18 = f32({3}, {1.f, -0.5f, 2.f}), b18 = f32({3}, {0.f, 1.f, -1.f});
  const Attrs a = attrs({{"num_groups", attr_int(3)}, {"epsilon", attr_float(1e-3f)}});
  expect_near_all<float>(
      run_ok("GroupNormalization", 18, {&x, &s18, &b18}, 1, a)[0],
      group_norm_ref(xv, 2, 6, 5, 3, values<float>(s18), values<float>(b18), false, 1e-3), 1e-4,
      1e-4);
  const HostTensor s21 = f32({6}, {1, 2, 3, -1, 0.5f, 0}), b21 = f32({6}, {0, 0, 1, 1, 2, 2});
  expect_near_all<float>(
      run_ok("GroupNormalization", 21, {&x, &s21, &b21}, 1, a)[0],
      group_norm_ref(xv, 2, 6, 5, 3, values<float>(s21), values<float>(b21), true, 1e-3), 1e-4,
      1e-4);
  // Per-group parameters at opset 21 are the wrong size.
  const Status bad = run_status("GroupNormalization", 21, {&x, &s18, &b18}, 1, a);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("scale and bias must be [6]"), std::string::npos) << bad.message();
  const Status groups = run_status("GroupNormalization", 21, {&x, &s21, &b21}, 1,
                                   attrs({{"num_groups", attr_int(4)}}));
  EXPECT_FALSE(groups.ok());
  EXPECT_NE(groups.message().find("do not split"), std::string::npos) << groups.message();
  EXPECT_FALSE(run_status("GroupNormalization", 21, {&x, &s21, &b21}).ok());  // no num_groups
}

TEST(Opset18Math, RmsNormalizationBroadcastsScale) {
  const HostTensor x = random_f32({2, 3, 4}, -2, 2, 9);
  const auto xv = values<float>(x);
  const HostTensor scale = f32({3, 1}, {1.f, 2.f, -1.f});
  std::vector<double> ref(xv.size());
  for (int r = 0; r < 2; ++r) {
    double sq = 0;
    for (int j = 0; j < 12; ++j) sq += static_cast<double>(xv[r * 12 + j]) * xv[r * 12 + j];
    const double inv = 1 / std::sqrt(sq / 12 + 1e-5);
    for (int j = 0; j < 12; ++j)
      ref[static_cast<size_t>(r * 12 + j)] = xv[r * 12 + j] * inv * values<float>(scale)[j / 4];
  }
  expect_near_all<float>(
      run_ok("RMSNormalization", 23, {&x, &scale}, 1, attrs({{"axis", attr_int(1)}}))[0], ref, 1e-5,
      1e-5);
  const HostTensor wrong = f32({5}, {1, 1, 1, 1, 1});
  const Status s = run_status("RMSNormalization", 23, {&x, &wrong});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("does not broadcast"), std::string::npos) << s.message();
  EXPECT_FALSE(
      run_status("RMSNormalization", 23, {&x, &scale}, 1, attrs({{"axis", attr_int(3)}})).ok());
}

TEST(Opset18Math, BitwiseOpsBroadcastOnIntegers) {
  const HostTensor a = i32({2, 2}, {12, -1, 5, 0}), b = i32({2}, {10, 3});
  auto values_of = [](const HostTensor& t) { return values<int32_t>(t); };
  EXPECT_EQ(values_of(run_ok("BitwiseAnd", 18, {&a, &b})[0]),
            (std::vector<int32_t>{12 & 10, -1 & 3, 5 & 10, 0 & 3}));
  EXPECT_EQ(values_of(run_ok("BitwiseOr", 18, {&a, &b})[0]),
            (std::vector<int32_t>{12 | 10, -1 | 3, 5 | 10, 0 | 3}));
  EXPECT_EQ(values_of(run_ok("BitwiseXor", 18, {&a, &b})[0]),
            (std::vector<int32_t>{12 ^ 10, -1 ^ 3, 5 ^ 10, 0 ^ 3}));
  EXPECT_EQ(values_of(run_ok("BitwiseNot", 18, {&a})[0]), (std::vector<int32_t>{~12, ~-1, ~5, ~0}));
  const HostTensor f = f32({2}, {1.f, 2.f});
  EXPECT_EQ(run_status("BitwiseAnd", 18, {&f, &f}).code(), StatusCode::kUnsupported);
  const HostTensor c = i32({3}, {1, 2, 3});
  EXPECT_FALSE(run_status("BitwiseOr", 18, {&a, &c}).ok());  // [2, 2] and [3] do not broadcast
}

TEST(Opset18Math, Dft20TakesTheAxisAsAnInput) {
  // A constant signal along axis 1: all its energy lands in bin 0.
  const HostTensor x = f32({1, 4, 2}, {1, 0, 1, 0, 1, 0, 1, 0});
  const HostTensor axis = i64({}, {1});
  const auto y = run_ok("DFT", 20, {&x, nullptr, &axis});
  expect_near_all<float>(y[0], {4, 0, 0, 0, 0, 0, 0, 0}, 1e-6, 1e-5);
  // The default axis is -2: the same axis here.
  expect_near_all<float>(run_ok("DFT", 20, {&x})[0], {4, 0, 0, 0, 0, 0, 0, 0}, 1e-6, 1e-5);
  const HostTensor last = i64({}, {2});
  const Status s = run_status("DFT", 20, {&x, nullptr, &last});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a signal axis"), std::string::npos) << s.message();
  EXPECT_FALSE(run_status("DFT", 20, {&x}, 1, attrs({{"axis", attr_int(1)}})).ok());
}

// Hostile shapes: an empty X whose other dims are huge. RMSNormalization's 2^61 columns asked for
// 2^61 * 8 scratch bytes, which wrapped to 0 and were then written; GroupNormalization-21 with no
// channels walked 2^20 * 2^30 empty groups.
TEST(Opset18Math, NormalizationsOfEmptyInputsDoNoWork) {
  const int64_t cols = int64_t{1} << 61;
  const HostTensor x = f32({0, cols}, {}), scale = f32({1}, {1.f});
  EXPECT_EQ(run_ok("RMSNormalization", 23, {&x, &scale})[0].shape(), (Shape{0, cols}));
  const HostTensor rows = f32({int64_t{1} << 62, 0}, {}), none = f32({0}, {});
  EXPECT_EQ(run_ok("RMSNormalization", 23, {&rows, &none})[0].shape(),
            (Shape{int64_t{1} << 62, 0}));
  const HostTensor g = f32({int64_t{1} << 20, 0, 3}, {});
  const auto y = run_ok("GroupNormalization", 21, {&g, &none, &none}, 1,
                        attrs({{"num_groups", attr_int(int64_t{1} << 30)}}));
  EXPECT_EQ(y[0].shape(), (Shape{int64_t{1} << 20, 0, 3}));
}

}  // namespace
}  // namespace sod2::rt::math_test

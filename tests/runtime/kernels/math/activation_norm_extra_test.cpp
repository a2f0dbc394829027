// The inverse and hyperbolic trigonometric ops, Shrink, ThresholdedRelu, Celu, LRN,
// MeanVarianceNormalization and BatchNormalization's training mode, against references written
// from the ONNX spec's formulas.
#include <cmath>
#include <functional>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

std::vector<double> map(const HostTensor& x, const std::function<double(double)>& f) {
  std::vector<double> out;
  for (float v : values<float>(x)) out.push_back(f(v));
  return out;
}

TEST(MathTrig, InverseAndHyperbolicMatchLibm) {
  const HostTensor unit = random_f32({3, 7}, -0.99f, 0.99f, 21);
  const HostTensor wide = random_f32({3, 7}, -5, 5, 22);
  const HostTensor above_one = random_f32({3, 7}, 1, 9, 23);
  struct Case {
    const char* op;
    int opset;
    const HostTensor* x;
    double (*f)(double);
  };
  const Case cases[] = {
      {"Asin", 7, &unit, [](double v) { return std::asin(v); }},
      {"Acos", 7, &unit, [](double v) { return std::acos(v); }},
      {"Atan", 7, &wide, [](double v) { return std::atan(v); }},
      {"Tan", 7, &unit, [](double v) { return std::tan(v); }},
      {"Sinh", 9, &wide, [](double v) { return std::sinh(v); }},
      {"Cosh", 9, &wide, [](double v) { return std::cosh(v); }},
      {"Asinh", 9, &wide, [](double v) { return std::asinh(v); }},
      {"Acosh", 9, &above_one, [](double v) { return std::acosh(v); }},
      {"Atanh", 9, &unit, [](double v) { return std::atanh(v); }},
  };
  for (const Case& c : cases) {
    const auto out = run_ok(c.op, c.opset, {c.x});
    expect_near_all<float>(out[0], map(*c.x, c.f), 1e-6, 1e-6, c.op);
    // Double inputs too.
    std::vector<double> dv;
    for (float v : values<float>(*c.x)) dv.push_back(v);
    const HostTensor xd = f64(c.x->shape(), dv);
    expect_near_all<double>(run_ok(c.op, c.opset, {&xd})[0], map(*c.x, c.f), 1e-14, 1e-14, c.op);
  }
  // Out of the domain: NaN, as libm gives.
  const HostTensor bad = f32({2}, {2, -2});
  expect_near_all<float>(run_ok("Acos", 7, {&bad})[0], {NAN, NAN}, 0);
  const HostTensor xi = i32({1}, {1});
  EXPECT_EQ(run_status("Atanh", 9, {&xi}).code(), StatusCode::kUnsupported);
}

TEST(MathShrink, HardSoftAndIntegers) {
  const HostTensor x = f32({5}, {-2, -1, 0, 1, 2});
  // Hard shrink: lambd=1.5, bias 0.
  EXPECT_EQ(values<float>(run_ok("Shrink", 9, {&x}, 1, attrs({{"lambd", attr_float(1.5f)}}))[0]),
            (std::vector<float>{-2, 0, 0, 0, 2}));
  // Soft shrink: bias = lambd.
  EXPECT_EQ(
      values<float>(run_ok("Shrink", 9, {&x}, 1,
                           attrs({{"lambd", attr_float(1.5f)}, {"bias", attr_float(1.5f)}}))[0]),
      (std::vector<float>{-0.5f, 0, 0, 0, 0.5f}));
  // Defaults: lambd 0.5, bias 0.
  EXPECT_EQ(values<float>(run_ok("Shrink", 9, {&x})[0]), (std::vector<float>{-2, -1, 0, 1, 2}));
  const HostTensor xi = make_tensor<int8_t>(DType::kInt8, {4}, {-128, -3, 1, 127});
  EXPECT_EQ(values<int8_t>(run_ok("Shrink", 9, {&xi}, 1,
                                  attrs({{"lambd", attr_float(2)}, {"bias", attr_float(-5)}}))[0]),
            (std::vector<int8_t>{-128, -8, 0, 127}));  // saturates instead of wrapping
  const HostTensor u = make_tensor<uint8_t>(DType::kUint8, {3}, {0, 5, 255});
  EXPECT_EQ(values<uint8_t>(run_ok("Shrink", 9, {&u}, 1, attrs({{"bias", attr_float(10)}}))[0]),
            (std::vector<uint8_t>{0, 0, 245}));
  const HostTensor b = b8({1}, {1});
  EXPECT_EQ(run_status("Shrink", 9, {&b}).code(), StatusCode::kUnsupported);
}

TEST(MathThresholdedRelu, KeepsValuesAboveAlpha) {
  const HostTensor x = f32({6}, {-1, 0.5f, 1, 1.5f, 2, std::nanf("")});
  expect_near_all<float>(run_ok("ThresholdedRelu", 10, {&x})[0], {0, 0, 0, 1.5, 2, 0}, 0);
  expect_near_all<float>(
      run_ok("ThresholdedRelu", 10, {&x}, 1, attrs({{"alpha", attr_float(1.75f)}}))[0],
      {0, 0, 0, 0, 2, 0}, 0);
}

TEST(MathCelu, MatchesTheSpecFormula) {
  const HostTensor x = random_f32({4, 5}, -4, 4, 31);
  for (float alpha : {1.0f, 2.0f, 0.5f}) {
    const auto out = run_ok("Celu", 12, {&x}, 1, attrs({{"alpha", attr_float(alpha)}}));
    expect_near_all<float>(out[0],
                           map(x,
                               [alpha](double v) {
                                 return std::max(0.0, v) +
                                        std::min(0.0, alpha * (std::exp(v / alpha) - 1));
                               }),
                           1e-6, 1e-6);
  }
}

// square_sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)].
std::vector<double> lrn_reference(const HostTensor& x, int size, double alpha, double beta,
                                  double bias) {
  const Shape& s = x.shape();
  const int64_t n = s[0], c = s[1], plane = s.numel() / (n * c);
  const float* v = x.data<float>();
  std::vector<double> out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < plane; ++i) {
        double sum = 0;
        const int64_t lo = std::max<int64_t>(0, ch - (size - 1) / 2);
        const int64_t hi = std::min<int64_t>(c - 1, ch + size / 2);
        for (int64_t k = lo; k <= hi; ++k) {
          const double e = v[(b * c + k) * plane + i];
          sum += e * e;
        }
        out.push_back(v[(b * c + ch) * plane + i] / std::pow(bias + alpha / size * sum, beta));
      }
  return out;
}

TEST(MathLrn, EvenAndOddWindows) {
  const HostTensor x = random_f32({2, 5, 3, 2}, -3, 3, 41);
  for (int size : {1, 2, 3, 4, 7}) {
    const auto out = run_ok("LRN", 13, {&x}, 1,
                            attrs({{"size", attr_int(size)},
                                   {"alpha", attr_float(0.02f)},
                                   {"beta", attr_float(0.6f)},
                                   {"bias", attr_float(2)}}));
    expect_near_all<float>(out[0], lrn_reference(x, size, 0.02f, 0.6f, 2), 1e-5, 1e-6);
  }
  // Defaults alpha 1e-4, beta 0.75, bias 1.
  expect_near_all<float>(run_ok("LRN", 13, {&x}, 1, attrs({{"size", attr_int(3)}}))[0],
                         lrn_reference(x, 3, 1e-4f, 0.75f, 1), 1e-5, 1e-6);
  EXPECT_FALSE(run_status("LRN", 13, {&x}).ok());  // size is required
  EXPECT_FALSE(run_status("LRN", 13, {&x}, 1, attrs({{"size", attr_int(0)}})).ok());
  const HostTensor flat = f32({4}, {1, 2, 3, 4});
  EXPECT_EQ(run_status("LRN", 13, {&flat}, 1, attrs({{"size", attr_int(3)}})).code(),
            StatusCode::kInvalidArgument);
}

TEST(MathMvn, DefaultAndCustomAxes) {
  const HostTensor x = random_f32({2, 3, 2, 4}, -2, 5, 51);
  const auto xv = values<float>(x);
  // Reference: mean and population variance per group of the kept dims.
  auto reference = [&](const std::vector<bool>& reduced) {
    const Shape& s = x.shape();
    std::vector<double> sum(96, 0), sq(96, 0), cnt(96, 0);
    auto group = [&](int64_t i) {
      int64_t g = 0, rem = i;
      int64_t idx[4];
      for (int d = 3; d >= 0; --d) {
        idx[d] = rem % s[d];
        rem /= s[d];
      }
      for (int d = 0; d < 4; ++d)
        if (!reduced[d]) g = g * s[d] + idx[d];
      return g;
    };
    for (int64_t i = 0; i < 48; ++i) {
      sum[group(i)] += xv[i];
      cnt[group(i)] += 1;
    }
    for (int64_t i = 0; i < 48; ++i) {
      const double d = xv[i] - sum[group(i)] / cnt[group(i)];
      sq[group(i)] += d * d;
    }
    std::vector<double> out;
    for (int64_t i = 0; i < 48; ++i) {
      const int64_t g = group(i);
      out.push_back((xv[i] - sum[g] / cnt[g]) / (std::sqrt(sq[g] / cnt[g]) + 1e-9));
    }
    return out;
  };
  expect_near_all<float>(run_ok("MeanVarianceNormalization", 13, {&x})[0],
                         reference({true, false, true, true}), 1e-5, 1e-5);
  expect_near_all<float>(
      run_ok("MeanVarianceNormalization", 13, {&x}, 1, attrs({{"axes", attr_ints({-1, 1})}}))[0],
      reference({false, true, false, true}), 1e-5, 1e-5);
  const HostTensor small = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run_status("MeanVarianceNormalization", 13, {&small}).code(),
            StatusCode::kInvalidArgument);  // axis 2 of a rank-2 tensor
}

TEST(MathBatchNorm, TrainingModeUsesBatchStatistics) {
  const HostTensor x = random_f32({3, 2, 2, 3}, -3, 3, 61);
  const HostTensor scale = f32({2}, {1.5f, 0.5f});
  const HostTensor bias = f32({2}, {0, 1});
  const HostTensor mean = f32({2}, {0.25f, -1});
  const HostTensor var = f32({2}, {2, 0.5f});
  const float eps = 1e-2f, momentum = 0.8f;
  const auto out = run_ok("BatchNormalization", 15, {&x, &scale, &bias, &mean, &var}, 3,
                          attrs({{"training_mode", attr_int(1)},
                                 {"epsilon", attr_float(eps)},
                                 {"momentum", attr_float(momentum)}}));
  const auto xv = values<float>(x);
  double bm[2] = {}, bv[2] = {};
  for (int i = 0; i < 36; ++i) bm[(i / 6) % 2] += xv[i] / 18.0;
  for (int i = 0; i < 36; ++i) bv[(i / 6) % 2] += std::pow(xv[i] - bm[(i / 6) % 2], 2) / 18.0;
  std::vector<double> y;
  for (int i = 0; i < 36; ++i) {
    const int c = (i / 6) % 2;
    y.push_back((xv[i] - bm[c]) / std::sqrt(bv[c] + eps) * scale.data<float>()[c] +
                bias.data<float>()[c]);
  }
  expect_near_all<float>(out[0], y, 1e-5, 1e-5, "Y");
  expect_near_all<float>(
      out[1], {0.25 * momentum + bm[0] * (1 - momentum), -1.0 * momentum + bm[1] * (1 - momentum)},
      1e-5, 1e-5, "running_mean");
  expect_near_all<float>(
      out[2], {2.0 * momentum + bv[0] * (1 - momentum), 0.5 * momentum + bv[1] * (1 - momentum)},
      1e-5, 1e-5, "running_var");
  // Y alone in training mode is allowed too.
  expect_near_all<float>(
      run_ok("BatchNormalization", 15, {&x, &scale, &bias, &mean, &var}, 1,
             attrs({{"training_mode", attr_int(1)}, {"epsilon", attr_float(eps)}}))[0],
      y, 1e-5, 1e-5, "Y only");
  // Opset 9: five outputs mean training, the last two the batch's own statistics.
  const auto old =
      run_ok("BatchNormalization", 9, {&x, &scale, &bias, &mean, &var}, 5,
             attrs({{"epsilon", attr_float(eps)}, {"momentum", attr_float(momentum)}}));
  expect_near_all<float>(old[0], y, 1e-5, 1e-5, "opset 9 Y");
  expect_near_all<float>(old[3], {bm[0], bm[1]}, 1e-5, 1e-6, "saved_mean");
  expect_near_all<float>(old[4], {bv[0], bv[1]}, 1e-5, 1e-6, "saved_var");
  // An empty batch has no statistics.
  const HostTensor empty = f32({0, 2, 2}, {});
  EXPECT_EQ(run_status("BatchNormalization", 15, {&empty, &scale, &bias, &mean, &var}, 3,
                       attrs({{"training_mode", attr_int(1)}}))
                .code(),
            StatusCode::kInvalidArgument);
}

// A NaN lambd or bias reached integer outputs past the saturation checks (an undefined
// NaN-to-integer conversion): the model is refused when the kernel is made.
TEST(MathShrink, NanAttributesAreRefused) {
  const HostTensor xi = make_tensor<int32_t>(DType::kInt32, {3}, {-5, 0, 5});
  EXPECT_EQ(run_status("Shrink", 9, {&xi}, 1, attrs({{"bias", attr_float(NAN)}})).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(run_status("Shrink", 9, {&xi}, 1, attrs({{"lambd", attr_float(NAN)}})).code(),
            StatusCode::kInvalidModel);
  // Infinities still saturate.
  EXPECT_EQ(
      values<int32_t>(run_ok("Shrink", 9, {&xi}, 1, attrs({{"bias", attr_float(INFINITY)}}))[0]),
      (std::vector<int32_t>{INT32_MAX, 0, INT32_MIN}));
}

}  // namespace
}  // namespace sod2::rt::math_test

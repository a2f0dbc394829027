// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against a straightforward reference
// (the ONNX spec's formulas): reductions, weights, ignore_index, N-d inputs, log_prob, errors.
#include <cmath>
#include <optional>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

// The loss of log-probabilities lp [n, c, d] against targets [n, d]: per position, or reduced.
struct LossRef {
  std::vector<double> per_position;
  double sum = 0, mean = 0;
};

LossRef nll_ref(const std::vector<double>& lp, const std::vector<int64_t>& target, int64_t n,
                int64_t c, int64_t d, const std::vector<float>* weight,
                std::optional<int64_t> ignore) {
  LossRef r;
  double wsum = 0;
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t t = target[s * d + j];
      double l = 0, w = 0;
      if (!ignore || t != *ignore) {
        w = weight ? (*weight)[t] : 1.0;
        l = -lp[(s * c + t) * d + j] * w;
      }
      r.per_position.push_back(l);
      r.sum += l;
      wsum += w;
    }
  }
  r.mean = r.sum / wsum;
  return r;
}

// Log-softmax of x [n, c, d] along c.
std::vector<double> log_softmax_ref(const std::vector<float>& x, int64_t n, int64_t c, int64_t d) {
  std::vector<double> y(x.size());
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t j = 0; j < d; ++j) {
      double m = -INFINITY, sum = 0;
      for (int64_t i = 0; i < c; ++i) m = std::max(m, double(x[(s * c + i) * d + j]));
      for (int64_t i = 0; i < c; ++i) sum += std::exp(x[(s * c + i) * d + j] - m);
      for (int64_t i = 0; i < c; ++i)
        y[(s * c + i) * d + j] = x[(s * c + i) * d + j] - m - std::log(sum);
    }
  }
  return y;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST(MathLoss, NllReductionsOn2D) {
  // The spec's example: input [3, 2] (N=3, C=2), target [3].
  const HostTensor x = f32({3, 2}, {1.0f, 2.0f, 2.0f, 2.0f, 3.0f, 2.0f});
  const HostTensor t = i64({3}, {0, 1, 0});
  const HostTensor w = f32({2}, {0.2f, 0.3f});
  // none: [-1*0.2, -2*0.3, -3*0.2]; mean = sum / (0.2 + 0.3 + 0.2).
  expect_near_all<float>(run_ok("NegativeLogLikelihoodLoss", 13, {&x, &t, &w}, 1,
                                attrs({{"reduction", attr_string("none")}}))[0],
                         {-0.2, -0.6, -0.6}, 1e-6);
  expect_near_all<float>(run_ok("NegativeLogLikelihoodLoss", 13, {&x, &t, &w})[0],
                         {(-0.2 - 0.6 - 0.6) / 0.7}, 1e-6);
  expect_near_all<float>(run_ok("NegativeLogLikelihoodLoss", 13, {&x, &t, &w}, 1,
                                attrs({{"reduction", attr_string("sum")}}))[0],
                         {-1.4}, 1e-6);
  // Without weights, mean is the plain average.
  const auto mean = run_ok("NegativeLogLikelihoodLoss", 12, {&x, &t})[0];
  EXPECT_EQ(mean.shape(), Shape{});
  expect_near_all<float>(mean, {(-1.0 - 2.0 - 3.0) / 3}, 1e-6);
}

TEST(MathLoss, NllNdWithWeightsAndIgnoreIndex) {
  // [N, C, d1, d2] = [2, 4, 3, 2]; int32 targets, some equal to ignore_index (here -1, negative).
  const int64_t n = 2, c = 4, d = 6;
  const HostTensor x = random_f32({2, 4, 3, 2}, -3, 0, 11);
  std::vector<int64_t> tv = {0, 3, -1, 2, 1, 1, 3, -1, 0, 0, 2, -1};
  std::vector<int32_t> tv32(tv.begin(), tv.end());
  const HostTensor t = i32({2, 3, 2}, tv32);
  const std::vector<float> wv = {0.5f, 1.5f, 2.0f, 0.25f};
  const HostTensor w = f32({4}, wv);
  const auto lp = to_double(values<float>(x));
  const Attrs ii = attrs({{"ignore_index", attr_int(-1)}});
  const LossRef ref = nll_ref(lp, tv, n, c, d, &wv, -1);
  for (const char* red : {"none", "sum", "mean"}) {
    Attrs a = ii;
    a.set("reduction", attr_string(red));
    const auto out = run_ok("NegativeLogLikelihoodLoss", 13, {&x, &t, &w}, 1, a)[0];
    if (std::string(red) == "none") {
      EXPECT_EQ(out.shape(), (Shape{2, 3, 2}));
      expect_near_all<float>(out, ref.per_position, 1e-5, 1e-6, red);
    } else {
      EXPECT_EQ(out.shape(), Shape{});
      expect_near_all<float>(out, {std::string(red) == "sum" ? ref.sum : ref.mean}, 1e-5, 1e-6,
                             red);
    }
  }
  // Without weights, mean divides by the number of positions not ignored (9 of 12).
  const LossRef unweighted = nll_ref(lp, tv, n, c, d, nullptr, -1);
  expect_near_all<float>(run_ok("NegativeLogLikelihoodLoss", 13, {&x, &t}, 1, ii)[0],
                         {unweighted.sum / 9}, 1e-5);
  // An ignore_index of C or more ("high") is never a valid class.
  std::vector<int64_t> high = {0, 3, 4, 2, 1, 1, 3, 4, 0, 0, 2, 4};
  const HostTensor th = i64({2, 3, 2}, high);
  expect_near_all<float>(
      run_ok("NegativeLogLikelihoodLoss", 13, {&x, &th, &w}, 1,
             attrs({{"ignore_index", attr_int(4)}, {"reduction", attr_string("sum")}}))[0],
      {nll_ref(lp, high, n, c, d, &wv, 4).sum}, 1e-5);
}

TEST(MathLoss, NllDoubleAndAllIgnored) {
  const HostTensor x = f64({2, 3}, {-1, -2, -3, -4, -5, -6});
  const HostTensor t = i64({2}, {2, 1});
  expect_near_all<double>(run_ok("NegativeLogLikelihoodLoss", 13, {&x, &t})[0], {(3 + 5) / 2.0},
                          1e-12);
  // Every target ignored: mean is 0 / 0 (NaN, like numpy and PyTorch); sum is 0.
  const HostTensor all = i64({2}, {7, 7});
  const Attrs ii = attrs({{"ignore_index", attr_int(7)}});
  expect_near_all<double>(run_ok("NegativeLogLikelihoodLoss", 13, {&x, &all}, 1, ii)[0], {NAN},
                          1e-12);
  Attrs sum = ii;
  sum.set("reduction", attr_string("sum"));
  expect_near_all<double>(run_ok("NegativeLogLikelihoodLoss", 13, {&x, &all}, 1, sum)[0], {0},
                          1e-12);
}

TEST(MathLoss, NllBadInputsAreErrors) {
  const HostTensor x = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  // Targets outside [0, C) that are not ignore_index: an error, not an out-of-bounds read.
  for (int64_t bad : {int64_t{3}, int64_t{-1}, int64_t{1} << 40}) {
    const HostTensor t = i64({2}, {0, bad});
    const Status s = run_status("NegativeLogLikelihoodLoss", 13, {&x, &t});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.to_string();
  }
  const HostTensor t = i64({2}, {0, 1});
  // Target shape must be [N, d1, ...].
  const HostTensor t3 = i64({3}, {0, 1, 2});
  EXPECT_EQ(run_status("NegativeLogLikelihoodLoss", 13, {&x, &t3}).code(),
            StatusCode::kInvalidArgument);
  const HostTensor x1 = f32({3}, {1, 2, 3});
  EXPECT_EQ(run_status("NegativeLogLikelihoodLoss", 13, {&x1, &t3}).code(),
            StatusCode::kInvalidArgument);
  // Weights of the wrong size or type, targets of a float type.
  const HostTensor w2 = f32({2}, {1, 1});
  EXPECT_EQ(run_status("NegativeLogLikelihoodLoss", 13, {&x, &t, &w2}).code(),
            StatusCode::kInvalidArgument);
  const HostTensor w64 = f64({3}, {1, 1, 1});
  EXPECT_EQ(run_status("NegativeLogLikelihoodLoss", 13, {&x, &t, &w64}).code(),
            StatusCode::kInvalidArgument);
  const HostTensor tf = f32({2}, {0, 1});
  EXPECT_EQ(run_status("NegativeLogLikelihoodLoss", 13, {&x, &tf}).code(),
            StatusCode::kInvalidArgument);
  // Unknown reduction; integer scores.
  EXPECT_EQ(run_status("NegativeLogLikelihoodLoss", 13, {&x, &t}, 1,
                       attrs({{"reduction", attr_string("max")}}))
                .code(),
            StatusCode::kInvalidModel);
  const HostTensor xi = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run_status("NegativeLogLikelihoodLoss", 13, {&xi, &t}).code(),
            StatusCode::kUnsupported);
}

TEST(MathLoss, SoftmaxCrossEntropyWithLogProb) {
  const int64_t n = 3, c = 5, d = 4;
  const HostTensor x = random_f32({3, 5, 2, 2}, -4, 4, 21);
  std::vector<int64_t> tv = {0, 4, 2, 1, 3, 3, -5, 0, 4, 1, 2, -5};
  const HostTensor t = i64({3, 2, 2}, tv);
  const std::vector<float> wv = {1.0f, 0.5f, 2.0f, 0.75f, 1.25f};
  const HostTensor w = f32({5}, wv);
  const auto lp = log_softmax_ref(values<float>(x), n, c, d);
  const LossRef ref = nll_ref(lp, tv, n, c, d, &wv, -5);
  const Attrs ii = attrs({{"ignore_index", attr_int(-5)}});
  const auto out = run_ok("SoftmaxCrossEntropyLoss", 13, {&x, &t, &w}, 2, ii);
  expect_near_all<float>(out[0], {ref.mean}, 1e-5);
  EXPECT_EQ(out[1].shape(), x.shape());
  expect_near_all<float>(out[1], lp, 1e-5, 1e-5, "log_prob");
  Attrs none = ii;
  none.set("reduction", attr_string("none"));
  const auto per = run_ok("SoftmaxCrossEntropyLoss", 12, {&x, &t, &w}, 1, none)[0];
  EXPECT_EQ(per.shape(), (Shape{3, 2, 2}));
  expect_near_all<float>(per, ref.per_position, 1e-5, 1e-6);
  // More columns than one task's chunk and several threads: the same as the reference.
  const HostTensor big = random_f32({2, 3, 700}, -4, 4, 22);
  std::vector<int64_t> bt(1400);
  for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<int64_t>(i * 7 % 3);
  const HostTensor btt = i64({2, 700}, bt);
  const auto blp = log_softmax_ref(values<float>(big), 2, 3, 700);
  const auto bout = run_ok("SoftmaxCrossEntropyLoss", 13, {&big, &btt}, 2,
                           attrs({{"reduction", attr_string("sum")}}), 4);
  expect_near_all<float>(bout[0], {nll_ref(blp, bt, 2, 3, 700, nullptr, std::nullopt).sum}, 1e-5);
  expect_near_all<float>(bout[1], blp, 1e-5, 1e-5, "log_prob");
}

TEST(MathLoss, SoftmaxCrossEntropyExtremesAndErrors) {
  // Large scores do not overflow; a -inf score is log-probability -inf.
  const HostTensor x = f32({1, 3}, {1000, 1000, -INFINITY});
  const HostTensor t = i64({1}, {0});
  const auto out = run_ok("SoftmaxCrossEntropyLoss", 13, {&x, &t}, 2);
  expect_near_all<float>(out[0], {std::log(2.0)}, 1e-6);
  expect_near_all<float>(out[1], {-std::log(2.0), -std::log(2.0), -INFINITY}, 1e-6);
  // Empty batch: mean of nothing is NaN, none is empty.
  const HostTensor e = f32({0, 3}, {});
  const HostTensor et = i64({0}, {});
  expect_near_all<float>(run_ok("SoftmaxCrossEntropyLoss", 13, {&e, &et})[0], {NAN}, 1e-6);
  EXPECT_EQ(run_ok("SoftmaxCrossEntropyLoss", 13, {&e, &et}, 1,
                   attrs({{"reduction", attr_string("none")}}))[0]
                .shape(),
            (Shape{0}));
  const HostTensor bad = i64({1}, {3});
  EXPECT_EQ(run_status("SoftmaxCrossEntropyLoss", 13, {&x, &bad}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("SoftmaxCrossEntropyLoss", 13, {&x, &t}, 3).code(),
            StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace sod2::rt::math_test

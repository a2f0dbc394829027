// The generator ops: seeded nodes draw numpy's legacy stream (np.random.seed(s), then
// random_sample / standard_normal / binomial(1, p)), the same every run; unseeded ones differ
// between runs; the statistics hold; bad attributes and inputs are errors.
#include <cmath>
#include <numeric>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

Attrs with(std::initializer_list<std::pair<const char*, AttrValue>> list) { return attrs(list); }

TEST(MathRandom, SeededUniformIsNumpysStream) {
  // np.random.seed(0); np.random.random_sample(5), scaled to [2, 5).
  const auto out = run_ok("RandomUniform", 1, {}, 1,
                          with({{"shape", attr_ints({5})},
                                {"seed", attr_float(0.f)},
                                {"low", attr_float(2.f)},
                                {"high", attr_float(5.f)}}));
  const std::vector<double> numpy = {0.5488135039273248, 0.7151893663724195, 0.6027633760716439,
                                     0.5448831829968969, 0.4236547993389047};
  ASSERT_EQ(out[0].shape(), Shape{5});
  const auto v = values<float>(out[0]);
  for (size_t i = 0; i < numpy.size(); ++i) EXPECT_NEAR(v[i], 2 + 3 * numpy[i], 1e-6) << i;
  // The same values on every run of a seeded node.
  const auto again = run_ok("RandomUniform", 1, {}, 1,
                            with({{"shape", attr_ints({5})},
                                  {"seed", attr_float(0.f)},
                                  {"low", attr_float(2.f)},
                                  {"high", attr_float(5.f)}}));
  EXPECT_EQ(values<float>(again[0]), v);
}

TEST(MathRandom, SeededNormalIsNumpysStandardNormal) {
  // np.random.seed(0); np.random.standard_normal(4), then mean 1 and scale 2, as double.
  const auto out = run_ok("RandomNormal", 1, {}, 1,
                          with({{"shape", attr_ints({2, 2})},
                                {"seed", attr_float(0.f)},
                                {"mean", attr_float(1.f)},
                                {"scale", attr_float(2.f)},
                                {"dtype", attr_int(static_cast<int64_t>(DType::kDouble))}}));
  const std::vector<double> numpy = {1.764052345967664, 0.4001572083672233, 0.9787379841057392,
                                     2.240893199201458};
  const auto v = values<double>(out[0]);
  ASSERT_EQ(v.size(), 4u);
  for (size_t i = 0; i < numpy.size(); ++i) EXPECT_NEAR(v[i], 1 + 2 * numpy[i], 1e-12) << i;
}

TEST(MathRandom, LikeFormsTakeTheInputsShapeAndTypeAndUnseededRunsDiffer) {
  const HostTensor x = f64({100, 10}, std::vector<double>(1000, 0.0));
  const auto a = run_ok("RandomNormalLike", 1, {&x}, 1);
  const auto b = run_ok("RandomNormalLike", 1, {&x}, 1);
  ASSERT_EQ(a[0].dtype(), DType::kDouble);
  ASSERT_EQ(a[0].shape(), (Shape{100, 10}));
  const auto va = values<double>(a[0]), vb = values<double>(b[0]);
  EXPECT_NE(va, vb);
  const double mean = std::accumulate(va.begin(), va.end(), 0.0) / 1000;
  double var = 0;
  for (double v : va) var += (v - mean) * (v - mean);
  var /= 1000;
  EXPECT_NEAR(mean, 0.0, 0.15);
  EXPECT_NEAR(var, 1.0, 0.2);
  // dtype overrides the input's type; uniform draws stay inside [low, high).
  const auto u = run_ok("RandomUniformLike", 1, {&x}, 1,
                        with({{"dtype", attr_int(static_cast<int64_t>(DType::kFloat))},
                              {"low", attr_float(-1.f)},
                              {"high", attr_float(-0.5f)}}));
  ASSERT_EQ(u[0].dtype(), DType::kFloat);
  for (float v : values<float>(u[0])) {
    EXPECT_GE(v, -1.f);
    EXPECT_LT(v, -0.5f);
  }
}

TEST(MathRandom, BernoulliFollowsNumpysInversionRule) {
  // np.random.seed(0) draws 0.549, 0.715, 0.603, 0.545, 0.424; binomial(1, p) is 1 when the draw
  // exceeds 1 - p (p <= 0.5) or does not exceed p (p > 0.5), and p = 0 draws nothing.
  const HostTensor p = f32({6}, {0.2f, 0.9f, 0.5f, 0.f, 1.f, 0.7f});
  const auto out = run_ok("Bernoulli", 15, {&p}, 1, with({{"seed", attr_float(0.f)}}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{0, 1, 1, 0, 1, 1}));
  // dtype: bool output.
  const auto b = run_ok(
      "Bernoulli", 15, {&p}, 1,
      with({{"seed", attr_float(0.f)}, {"dtype", attr_int(static_cast<int64_t>(DType::kBool))}}));
  EXPECT_EQ(values<uint8_t>(b[0]), (std::vector<uint8_t>{0, 1, 1, 0, 1, 1}));
  // Probabilities outside [0, 1] (or NaN) are an error.
  const HostTensor bad = f32({2}, {0.5f, 1.5f});
  EXPECT_EQ(run_status("Bernoulli", 15, {&bad}).code(), StatusCode::kInvalidArgument);
  const HostTensor nan = f32({1}, {NAN});
  EXPECT_EQ(run_status("Bernoulli", 15, {&nan}).code(), StatusCode::kInvalidArgument);
}

TEST(MathRandom, MultinomialDrawsClassesByTheirProbability) {
  // Row 0: class 1 only (the others at -inf); row 1: classes 0 and 2 equally likely.
  const HostTensor x = f32({2, 3}, {-INFINITY, 0.f, -INFINITY, 0.f, -INFINITY, 0.f});
  const auto out = run_ok("Multinomial", 7, {&x}, 1,
                          with({{"sample_size", attr_int(400)},
                                {"seed", attr_float(3.f)},
                                {"dtype", attr_int(static_cast<int64_t>(DType::kInt64))}}));
  ASSERT_EQ(out[0].shape(), (Shape{2, 400}));
  const auto v = values<int64_t>(out[0]);
  int twos = 0;
  for (int s = 0; s < 400; ++s) {
    EXPECT_EQ(v[s], 1) << s;
    const int64_t k = v[400 + s];
    EXPECT_TRUE(k == 0 || k == 2) << k;
    twos += k == 2;
  }
  EXPECT_GT(twos, 150);
  EXPECT_LT(twos, 250);
  // A row without any finite log-probability, or a wrong rank, is an error.
  const HostTensor dead = f32({1, 2}, {-INFINITY, -INFINITY});
  EXPECT_EQ(run_status("Multinomial", 7, {&dead}).code(), StatusCode::kInvalidArgument);
  const HostTensor flat = f32({3}, {0, 0, 0});
  EXPECT_EQ(run_status("Multinomial", 7, {&flat}).code(), StatusCode::kInvalidArgument);
}

TEST(MathRandom, BadAttributesAreErrors) {
  // No shape, a negative dim, a non-finite seed, a non-float output type.
  EXPECT_EQ(run_status("RandomUniform", 1, {}).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(run_status("RandomUniform", 1, {}, 1, with({{"shape", attr_ints({2, -1})}})).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(run_status("RandomNormal", 1, {}, 1,
                       with({{"shape", attr_ints({2})}, {"seed", attr_float(INFINITY)}}))
                .code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(run_status("RandomUniform", 1, {}, 1,
                       with({{"shape", attr_ints({2})},
                             {"dtype", attr_int(static_cast<int64_t>(DType::kInt32))}}))
                .code(),
            StatusCode::kUnsupported);
  const HostTensor logits = f32({1, 2}, {0, 0});
  EXPECT_EQ(
      run_status("Multinomial", 7, {&logits}, 1, with({{"sample_size", attr_int(-1)}})).code(),
      StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace sod2::rt::math_test

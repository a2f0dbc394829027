#include <algorithm>
#include <cmath>

#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

struct RP {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  float a = -0.75f;
  bool exclude = false;
};

// Taps of one axis at output index o, from the ONNX formulas.
std::vector<std::pair<int64_t, double>> taps(const RP& p, int64_t o, int64_t in, int64_t out,
                                             float scale) {
  float x;
  const float of = static_cast<float>(o);
  if (p.coord == "half_pixel")
    x = (of + 0.5f) / scale - 0.5f;
  else if (p.coord == "pytorch_half_pixel")
    x = out > 1 ? (of + 0.5f) / scale - 0.5f : 0.f;
  else if (p.coord == "align_corners")
    x = out == 1 ? 0.f : of * float(in - 1) / float(out - 1);
  else
    x = of / scale;  // asymmetric
  auto clampi = [&](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in - 1); };
  if (p.mode == "nearest") {
    int64_t i;
    const bool half = x - std::floor(x) == 0.5f;
    if (p.nearest == "floor")
      i = int64_t(std::floor(x));
    else if (p.nearest == "ceil")
      i = int64_t(std::ceil(x));
    else if (p.nearest == "round_prefer_ceil")
      i = half ? int64_t(std::ceil(x)) : int64_t(std::lround(x));
    else
      i = half ? int64_t(std::floor(x)) : int64_t(std::lround(x));
    return {{clampi(i), 1.0}};
  }
  if (p.mode == "linear") {
    x = std::min(std::max(x, 0.f), float(in - 1));
    const int64_t i0 = int64_t(std::floor(x));
    const double w = x - float(i0);
    return {{i0, 1 - w}, {clampi(i0 + 1), w}};
  }
  const double s = x - std::floor(x), A = p.a;
  auto cubic = [&](double t) {
    t = std::fabs(t);
    if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
    if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
    return 0.0;
  };
  std::vector<std::pair<int64_t, double>> r;
  double sum = 0;
  for (int t = -1; t <= 2; ++t) {
    const int64_t i = int64_t(std::floor(x)) + t;
    double w = cubic(s - t);
    if (p.exclude && (i < 0 || i >= in)) w = 0;
    r.push_back({clampi(i), w});
    sum += w;
  }
  if (p.exclude)
    for (auto& [i, w] : r) w /= sum;
  return r;
}

// 4-D resize of the last two axes.
std::vector<double> ref_resize(const HostTensor& x, const RP& p, int64_t oh, int64_t ow, float sh,
                               float sw) {
  const Shape& s = x.shape();
  const int64_t H = s[2], W = s[3];
  std::vector<double> y;
  for (int64_t nc = 0; nc < s[0] * s[1]; ++nc)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double acc = 0;
        for (auto [iy, wy] : taps(p, oy, H, oh, sh))
          for (auto [ix, wx] : taps(p, ox, W, ow, sw))
            acc += wy * wx * x.data<float>()[(nc * H + iy) * W + ix];
        y.push_back(acc);
      }
  return y;
}

Attrs resize_attrs(const RP& p) {
  return A()
      .s("mode", p.mode)
      .s("coordinate_transformation_mode", p.coord)
      .s("nearest_mode", p.nearest)
      .f("cubic_coeff_a", p.a)
      .i("exclude_outside", p.exclude);
}

TEST(Resize, ModesAndCoordinates) {
  const HostTensor x = rand_tensor({2, 3, 5, 6}, 1);
  const HostTensor roi(DType::kFloat, Shape{0});
  int checked = 0;
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"})
      for (auto [sh, sw] : {std::pair{2.f, 1.5f}, std::pair{0.6f, 0.5f}, std::pair{1.f, 2.5f}}) {
        RP p;
        p.mode = mode;
        p.coord = coord;
        const int64_t oh = int64_t(std::floor(5 * sh)), ow = int64_t(std::floor(6 * sw));
        SCOPED_TRACE(std::string(mode) + " " + coord + " " + std::to_string(oh) + "x" +
                     std::to_string(ow));
        const HostTensor scales = floats({4}, {1.f, 1.f, sh, sw});
        const auto want = ref_resize(x, p, oh, ow, sh, sw);
        auto got = run_both("Resize", 13, {&x, &roi, &scales}, 1, resize_attrs(p));
        ASSERT_EQ(got.size(), 1u);
        expect_close(got[0], Shape{2, 3, oh, ow}, want, 1e-5);
        ++checked;
      }
  EXPECT_EQ(checked, 36);
}

TEST(Resize, NearestModesSizesAndCubicOptions) {
  const HostTensor x = rand_tensor({1, 2, 7, 4}, 2);
  const HostTensor sizes = testing::make_tensor<int64_t>(DType::kInt64, {4}, {1, 2, 10, 9});
  for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    RP p;
    p.nearest = nm;
    p.coord = "asymmetric";
    SCOPED_TRACE(nm);
    const auto want = ref_resize(x, p, 10, 9, 10.f / 7.f, 9.f / 4.f);
    auto got = run_both("Resize", 13, {&x, nullptr, nullptr, &sizes}, 1, resize_attrs(p));
    ASSERT_EQ(got.size(), 1u);
    expect_close(got[0], Shape{1, 2, 10, 9}, want, 0);
  }
  RP p;
  p.mode = "cubic";
  p.a = -0.5f;
  p.exclude = true;
  const auto want = ref_resize(x, p, 10, 9, 10.f / 7.f, 9.f / 4.f);
  // Opset 11: scales is an empty tensor when sizes are given.
  const HostTensor roi(DType::kFloat, Shape{0}), empty(DType::kFloat, Shape{0});
  auto got = run_both("Resize", 11, {&x, &roi, &empty, &sizes}, 1, resize_attrs(p));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 2, 10, 9}, want, 1e-5);
}

TEST(Resize, KnownValues) {
  // From the ONNX operator tests.
  const HostTensor x = floats({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const HostTensor roi(DType::kFloat, Shape{0});
  const HostTensor down = floats({4}, {1, 1, 0.6f, 0.6f});
  auto got = run_both("Resize", 13, {&x, &roi, &down}, 1, A().s("mode", "linear"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 1, 2}, {2.6666665, 4.3333331}, 1e-5);
  const HostTensor x2 = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  const HostTensor up = floats({4}, {1, 1, 2, 3});
  got = run_both("Resize", 13, {&x2, &roi, &up}, 1, A().s("mode", "nearest"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 4, 6},
               {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0);
  // Opset 10 and Upsample: asymmetric coordinates, nearest truncates when upsampling.
  const HostTensor up10 = floats({4}, {1, 1, 2, 2});
  got = run_both("Resize", 10, {&x2, &up10}, 1, A().s("mode", "nearest"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 0);
  got = run_both("Upsample", 9, {&x2, &up10}, 1, A().s("mode", "linear"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 4, 4}, {1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5, 4, 4},
               1e-6);
  got = run_both("Upsample", 7, {&x2}, 1, A().s("mode", "nearest").fs("scales", {1, 1, 2, 2}));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 0);
}

TEST(Resize, ThreeAxesIdentityZeroAndErrors) {
  // Resizing a non-trailing axis (and three at once) goes through the same passes.
  const HostTensor x = rand_tensor({3, 4, 5}, 3);
  const HostTensor roi(DType::kFloat, Shape{0});
  const HostTensor sc = floats({3}, {2.f, 1.f, 1.f});
  auto got = run_both("Resize", 13, {&x, &roi, &sc}, 1, A().s("mode", "nearest"));
  ASSERT_EQ(got.size(), 1u);
  std::vector<double> want;
  for (int64_t i = 0; i < 6; ++i) {
    // half_pixel, round_prefer_floor: (i + 0.5) / 2 - 0.5 -> 0,0,1,1,2,2 with ties to floor
    const float xo = (float(i) + 0.5f) / 2.f - 0.5f;
    const bool half = xo - std::floor(xo) == 0.5f;
    const int64_t src = std::clamp<int64_t>(half ? int64_t(std::floor(xo)) : std::lround(xo), 0, 2);
    for (int64_t j = 0; j < 20; ++j) want.push_back(x.data<float>()[src * 20 + j]);
  }
  expect_close(got[0], Shape{6, 4, 5}, want, 0);
  const HostTensor one = floats({3}, {1.f, 1.f, 1.f});
  got = run_both("Resize", 13, {&x, &roi, &one}, 1, A().s("mode", "linear"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], x.shape(), values(x), 0);
  const HostTensor sz = testing::make_tensor<int64_t>(DType::kInt64, {3}, {0, 4, 5});
  got = run_both("Resize", 13, {&x, &roi, nullptr, &sz}, 1, A().s("mode", "linear"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape().to_string(), "[0,4,5]");
  const HostTensor bad = floats({2}, {2.f, 2.f});
  EXPECT_EQ(run_status("Resize", 13, {&x, &roi, &bad}, 1, {}).code(), StatusCode::kInvalidArgument);
  // tf_crop_and_resize needs a roi of 2 * rank values.
  Status s = run_status("Resize", 13, {&x, &roi, &sc}, 1,
                        A().s("coordinate_transformation_mode", "tf_crop_and_resize"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("tf_crop_and_resize"), std::string::npos);
}

}  // namespace
}  // namespace sod2::rt::linalg_test

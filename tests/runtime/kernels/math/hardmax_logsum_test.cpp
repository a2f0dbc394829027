// Hardmax (both axis conventions) and ReduceLogSum against straightforward references.
#include <cmath>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

// Hardmax of x viewed as [outer, n, inner] along n: 1 at the first maximum.
std::vector<double> hardmax_ref(const std::vector<float>& x, int64_t outer, int64_t n,
                                int64_t inner) {
  std::vector<double> y(x.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      int64_t best = 0;
      for (int64_t i = 1; i < n; ++i)
        if (x[(o * n + i) * inner + j] > x[(o * n + best) * inner + j]) best = i;
      y[(o * n + best) * inner + j] = 1;
    }
  }
  return y;
}

TEST(MathHardmax, Opset13AlongOneAxis) {
  const HostTensor x = random_f32({3, 4, 70}, -5, 5, 31);
  const auto xv = values<float>(x);
  expect_near_all<float>(run_ok("Hardmax", 13, {&x})[0], hardmax_ref(xv, 12, 70, 1), 0);
  expect_near_all<float>(run_ok("Hardmax", 13, {&x}, 1, attrs({{"axis", attr_int(0)}}))[0],
                         hardmax_ref(xv, 1, 3, 280), 0);
  expect_near_all<float>(run_ok("Hardmax", 13, {&x}, 1, attrs({{"axis", attr_int(-2)}}), 3)[0],
                         hardmax_ref(xv, 3, 4, 70), 0);
}

TEST(MathHardmax, BeforeOpset13CoercesTo2D) {
  const HostTensor x = random_f32({2, 3, 4}, -5, 5, 32);
  const auto xv = values<float>(x);
  expect_near_all<float>(run_ok("Hardmax", 11, {&x})[0], hardmax_ref(xv, 2, 12, 1), 0);
  expect_near_all<float>(run_ok("Hardmax", 1, {&x}, 1, attrs({{"axis", attr_int(0)}}))[0],
                         hardmax_ref(xv, 1, 24, 1), 0);
  expect_near_all<float>(run_ok("Hardmax", 11, {&x}, 1, attrs({{"axis", attr_int(-1)}}))[0],
                         hardmax_ref(xv, 6, 4, 1), 0);
}

TEST(MathHardmax, TiesNaNsEmptyAndErrors) {
  // Ties: the first maximum; a NaN counts as the maximum (numpy's argmax).
  const HostTensor x = f64({3, 3}, {2, 5, 5, 1, NAN, 9, 7, 7, 7});
  expect_near_all<double>(run_ok("Hardmax", 13, {&x})[0], {0, 1, 0, 0, 1, 0, 1, 0, 0}, 0);
  const HostTensor e = f32({0, 4}, {});
  EXPECT_EQ(run_ok("Hardmax", 13, {&e})[0].shape(), (Shape{0, 4}));
  EXPECT_EQ(run_status("Hardmax", 13, {&x}, 1, attrs({{"axis", attr_int(2)}})).code(),
            StatusCode::kInvalidArgument);
  const HostTensor xi = i32({2}, {1, 2});
  EXPECT_EQ(run_status("Hardmax", 13, {&xi}).code(), StatusCode::kUnsupported);
}

TEST(MathReduceLogSum, MatchesLogOfSum) {
  const HostTensor x = random_f32({3, 4, 5}, 0.1f, 2, 41);
  const auto xv = values<float>(x);
  // Axes attribute (opset 13): over dims 0 and 2, keepdims.
  std::vector<double> ref(4, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) ref[j] += xv[(i * 4 + j) * 5 + k];
  for (double& r : ref) r = std::log(r);
  const auto out = run_ok("ReduceLogSum", 13, {&x}, 1, attrs({{"axes", attr_ints({0, -1})}}));
  EXPECT_EQ(out[0].shape(), (Shape{1, 4, 1}));
  expect_near_all<float>(out[0], ref, 1e-6);
  // Axes input (opset 18), no keepdims; all axes by default.
  const HostTensor axes = i64({2}, {2, 0});
  const auto out18 = run_ok("ReduceLogSum", 18, {&x, &axes}, 1, attrs({{"keepdims", attr_int(0)}}));
  EXPECT_EQ(out18[0].shape(), (Shape{4}));
  expect_near_all<float>(out18[0], ref, 1e-6);
  double total = 0;
  for (float v : xv) total += v;
  expect_near_all<float>(run_ok("ReduceLogSum", 18, {&x})[0], {std::log(total)}, 1e-6);
  // log(0) = -inf; integers clamp instead of overflowing.
  const HostTensor z = f32({2}, {0, 0});
  expect_near_all<float>(run_ok("ReduceLogSum", 13, {&z})[0], {-INFINITY}, 0);
  const HostTensor zi = i32({2}, {0, 0});
  EXPECT_EQ(values<int32_t>(run_ok("ReduceLogSum", 13, {&zi})[0])[0], INT32_MIN);
  const HostTensor xi = i32({2}, {3, 5});
  EXPECT_EQ(values<int32_t>(run_ok("ReduceLogSum", 13, {&xi})[0])[0], 2);  // log(8) = 2.08
  EXPECT_EQ(run_status("ReduceLogSum", 13, {&x}, 1, attrs({{"axes", attr_ints({3})}})).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sod2::rt::math_test

// TopK and CumSum.
#include <algorithm>
#include <numeric>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

TEST(MathTopK, LargestAndSmallestWithTiesByLowerIndex) {
  const HostTensor x = f32({2, 5}, {3, 1, 3, 2, 3, 0, 0, 5, -1, 5});
  const HostTensor k = i64({1}, {3});
  const auto out = run_ok("TopK", 11, {&x, &k}, 2);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{3, 3, 3, 5, 5, 0}));
  EXPECT_EQ(out[1].dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{0, 2, 4, 2, 4, 0}));
  const auto small = run_ok("TopK", 11, {&x, &k}, 2, attrs({{"largest", attr_int(0)}}));
  EXPECT_EQ(values<float>(small[0]), (std::vector<float>{1, 2, 3, -1, 0, 0}));
  EXPECT_EQ(values<int64_t>(small[1]), (std::vector<int64_t>{1, 3, 0, 3, 0, 1}));
}

TEST(MathTopK, AxisNotLastAndOpset1Attribute) {
  const HostTensor x = f32({3, 2}, {1, 6, 5, 2, 3, 4});
  const auto out = run_ok("TopK", 1, {&x}, 2, attrs({{"k", attr_int(2)}, {"axis", attr_int(0)}}));
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{5, 6, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 0, 2, 2}));
  const HostTensor k0 = i64({1}, {0});
  EXPECT_EQ(run_ok("TopK", 11, {&x, &k0}, 2)[0].shape(), (Shape{3, 0}));
  const HostTensor k9 = i64({1}, {9});
  EXPECT_EQ(run_status("TopK", 11, {&x, &k9}, 2).code(), StatusCode::kInvalidArgument);
}

TEST(MathTopK, MatchesSortOnRandomRowsWithThreads) {
  const HostTensor x = random_f32({300, 200}, -10, 10, 41);
  const HostTensor k = i64({1}, {17});
  const auto one = run_ok("TopK", 11, {&x, &k}, 2, {}, 1);
  const auto two = run_ok("TopK", 11, {&x, &k}, 2, {}, 2);
  EXPECT_EQ(one[0].bytes(), two[0].bytes());
  EXPECT_EQ(one[1].bytes(), two[1].bytes());
  const auto xv = values<float>(x);
  for (int r = 0; r < 300; r += 37) {
    std::vector<int64_t> idx(200);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int64_t a, int64_t b) { return xv[r * 200 + a] > xv[r * 200 + b]; });
    for (int i = 0; i < 17; ++i) EXPECT_EQ(one[1].data<int64_t>()[r * 17 + i], idx[i]);
  }
}

TEST(MathCumSum, ExclusiveReverseAndAxis) {
  const HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor axis1 = i32({}, {1});
  const HostTensor axis0 = i64({}, {-2});
  EXPECT_EQ(values<float>(run_ok("CumSum", 14, {&x, &axis1})[0]),
            (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values<float>(run_ok("CumSum", 14, {&x, &axis0})[0]),
            (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(
      values<float>(run_ok("CumSum", 14, {&x, &axis1}, 1, attrs({{"exclusive", attr_int(1)}}))[0]),
      (std::vector<float>{0, 1, 3, 0, 4, 9}));
  EXPECT_EQ(
      values<float>(run_ok("CumSum", 14, {&x, &axis1}, 1, attrs({{"reverse", attr_int(1)}}))[0]),
      (std::vector<float>{6, 5, 3, 15, 11, 6}));
  EXPECT_EQ(values<float>(run_ok("CumSum", 14, {&x, &axis1}, 1,
                                 attrs({{"reverse", attr_int(1)}, {"exclusive", attr_int(1)}}))[0]),
            (std::vector<float>{5, 3, 0, 11, 6, 0}));
  const HostTensor xi = i64({4}, {1, -2, 3, -4});
  const HostTensor a0 = i64({}, {0});
  EXPECT_EQ(values<int64_t>(run_ok("CumSum", 14, {&xi, &a0})[0]),
            (std::vector<int64_t>{1, -1, 2, -2}));
  const HostTensor bad = i64({}, {2});
  EXPECT_EQ(run_status("CumSum", 14, {&x, &bad}).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sod2::rt::math_test

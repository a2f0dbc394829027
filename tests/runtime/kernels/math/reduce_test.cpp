// Reduce* ops over every axis combination and ArgMax/ArgMin, against a direct reference.
#include <cmath>
#include <limits>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

// The reduction of x (shape s) over the axes in `mask`, outputs in row-major order of the kept
// dims; `f` folds each output's elements (in input order) to a value.
std::vector<double> reduce_ref(const std::vector<float>& x, const Shape& s,
                               const std::vector<bool>& mask,
                               const std::function<double(const std::vector<double>&)>& f) {
  int64_t outputs = 1;
  for (int d = 0; d < s.rank(); ++d)
    if (!mask[d]) outputs *= s[d];
  std::vector<std::vector<double>> groups(static_cast<size_t>(outputs));
  for (int64_t i = 0; i < s.numel(); ++i) {
    int64_t rem = i, out = 0, stride = 1;
    for (int d = s.rank() - 1; d >= 0; --d) {
      const int64_t c = rem % s[d];
      rem /= s[d];
      if (!mask[d]) {
        out += c * stride;
        stride *= s[d];
      }
    }
    groups[out].push_back(x[i]);
  }
  std::vector<double> r;
  for (const auto& g : groups) r.push_back(f(g));
  return r;
}

struct ReduceOp {
  const char* name;
  std::function<double(const std::vector<double>&)> f;
};

std::vector<ReduceOp> reduce_ops() {
  auto sum = [](const std::vector<double>& g) {
    double s = 0;
    for (double v : g) s += v;
    return s;
  };
  return {
      {"ReduceSum", sum},
      {"ReduceMean", [=](const std::vector<double>& g) { return sum(g) / g.size(); }},
      {"ReduceMax",
       [](const std::vector<double>& g) {
         double m = -INFINITY;
         for (double v : g) m = std::max(m, v);
         return m;
       }},
      {"ReduceMin",
       [](const std::vector<double>& g) {
         double m = INFINITY;
         for (double v : g) m = std::min(m, v);
         return m;
       }},
      {"ReduceProd",
       [](const std::vector<double>& g) {
         double p = 1;
         for (double v : g) p *= v;
         return p;
       }},
      {"ReduceL1",
       [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += std::abs(v);
         return s;
       }},
      {"ReduceL2",
       [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += v * v;
         return std::sqrt(s);
       }},
      {"ReduceLogSumExp",
       [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += std::exp(v);
         return std::log(s);
       }},
      {"ReduceSumSquare",
       [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += v * v;
         return s;
       }},
  };
}

TEST(MathReduce, EveryAxisSubsetKeepdimsBothWays) {
  const Shape s{3, 4, 5, 2};
  const HostTensor x = random_f32(s, 0.5f, 1.5f, 21);
  const auto xv = values<float>(x);
  for (const ReduceOp& op : reduce_ops()) {
    for (int subset = 0; subset < 16; ++subset) {
      std::vector<int64_t> axes;
      std::vector<bool> mask(4);
      for (int d = 0; d < 4; ++d) {
        mask[d] = subset & (1 << d);
        // Alternate positive and negative spellings of the same axis.
        if (mask[d]) axes.push_back(d % 2 ? d - 4 : d);
      }
      if (axes.empty()) mask.assign(4, true);  // no axes: reduce all
      const auto want = reduce_ref(xv, s, mask, op.f);
      for (int keep = 0; keep < 2; ++keep) {
        Attrs a = attrs({{"keepdims", attr_int(keep)}});
        if (!axes.empty()) a.set("axes", attr_ints(axes));
        const auto out = run_ok(op.name, 11, {&x}, 1, a);
        Shape want_shape;
        for (int d = 0; d < 4; ++d) {
          if (!mask[d])
            want_shape.push_back(s[d]);
          else if (keep)
            want_shape.push_back(1);
        }
        const std::string what = std::string(op.name) + " subset " + std::to_string(subset) +
                                 " keepdims " + std::to_string(keep);
        EXPECT_EQ(out[0].shape(), want_shape) << what;
        expect_near_all<float>(out[0], want, 1e-5, 1e-6, what);
      }
    }
  }
}

TEST(MathReduce, ReduceSumAxesInputSinceOpset13) {
  const HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor axes = i64({1}, {-1});
  EXPECT_EQ(values<float>(run_ok("ReduceSum", 13, {&x, &axes})[0]), (std::vector<float>{6, 15}));
  EXPECT_EQ(run_ok("ReduceSum", 13, {&x, &axes})[0].shape(), (Shape{2, 1}));
  // Opset 11 reads the attribute and ignores any second input.
  EXPECT_EQ(values<float>(run_ok("ReduceSum", 11, {&x}, 1, attrs({{"axes", attr_ints({0})}}))[0]),
            (std::vector<float>{5, 7, 9}));
  // No axes: all, or nothing with noop_with_empty_axes.
  EXPECT_EQ(values<float>(run_ok("ReduceSum", 13, {&x})[0]), (std::vector<float>{21}));
  const HostTensor none = i64({0}, {});
  EXPECT_EQ(values<float>(run_ok("ReduceSum", 13, {&x, &none})[0]), (std::vector<float>{21}));
  const auto noop =
      run_ok("ReduceSum", 13, {&x, &none}, 1, attrs({{"noop_with_empty_axes", attr_int(1)}}));
  EXPECT_EQ(noop[0].shape(), x.shape());
  EXPECT_EQ(values<float>(noop[0]), values<float>(x));
  // ReduceMean takes axes as an input only from opset 18.
  EXPECT_EQ(values<float>(
                run_ok("ReduceMean", 18, {&x, &axes}, 1, attrs({{"keepdims", attr_int(0)}}))[0]),
            (std::vector<float>{2, 5}));
}

TEST(MathReduce, EmptyAxesGiveIdentityElements) {
  const HostTensor x = f32({2, 0, 3}, {});
  const Attrs a = attrs({{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}});
  EXPECT_EQ(values<float>(run_ok("ReduceSum", 11, {&x}, 1, a)[0]), std::vector<float>(6, 0));
  EXPECT_EQ(values<float>(run_ok("ReduceProd", 11, {&x}, 1, a)[0]), std::vector<float>(6, 1));
  EXPECT_EQ(values<float>(run_ok("ReduceMax", 11, {&x}, 1, a)[0]),
            std::vector<float>(6, -INFINITY));
  EXPECT_EQ(values<float>(run_ok("ReduceLogSumExp", 11, {&x}, 1, a)[0]),
            std::vector<float>(6, -INFINITY));
  // Reducing the other axes leaves an empty output.
  EXPECT_EQ(run_ok("ReduceSum", 11, {&x}, 1, attrs({{"axes", attr_ints({0})}}))[0].shape(),
            (Shape{1, 0, 3}));
}

TEST(MathReduce, IntegersLogSumExpStabilityAndErrors) {
  const HostTensor xi = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(
      values<int64_t>(run_ok("ReduceProd", 11, {&xi}, 1,
                             attrs({{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}}))[0]),
      (std::vector<int64_t>{6, 120}));
  EXPECT_EQ(values<int64_t>(run_ok("ReduceMax", 11, {&xi})[0]), (std::vector<int64_t>{6}));
  const HostTensor big = f32({3}, {1000, 1000, 999});
  expect_near_all<float>(run_ok("ReduceLogSumExp", 11, {&big})[0],
                         {1000 + std::log(2 + std::exp(-1.0))}, 1e-6);
  EXPECT_EQ(run_status("ReduceSum", 11, {&xi}, 1, attrs({{"axes", attr_ints({2})}})).code(),
            StatusCode::kInvalidArgument);
  const HostTensor b = b8({2}, {1, 0});
  EXPECT_EQ(run_status("ReduceSum", 11, {&b}).code(), StatusCode::kUnsupported);
}

TEST(MathArgReduce, AxisKeepdimsAndSelectLastIndex) {
  const HostTensor x = f32({2, 4}, {1, 3, 3, 0, 5, 5, -1, -1});
  EXPECT_EQ(values<int64_t>(run_ok("ArgMax", 13, {&x}, 1, attrs({{"axis", attr_int(1)}}))[0]),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(
                run_ok("ArgMax", 13, {&x}, 1,
                       attrs({{"axis", attr_int(-1)}, {"select_last_index", attr_int(1)}}))[0]),
            (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values<int64_t>(
                run_ok("ArgMin", 13, {&x}, 1,
                       attrs({{"axis", attr_int(1)}, {"select_last_index", attr_int(1)}}))[0]),
            (std::vector<int64_t>{3, 3}));
  const auto col = run_ok("ArgMin", 13, {&x}, 1, attrs({{"keepdims", attr_int(0)}}));
  EXPECT_EQ(col[0].shape(), (Shape{4}));
  EXPECT_EQ(values<int64_t>(col[0]), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(run_ok("ArgMax", 13, {&x})[0].shape(), (Shape{1, 4}));
  const HostTensor empty = f32({0, 3}, {});
  EXPECT_EQ(run_ok("ArgMax", 13, {&empty}, 1, attrs({{"axis", attr_int(1)}}))[0].shape(),
            (Shape{0, 1}));
  EXPECT_EQ(run_status("ArgMax", 13, {&empty}, 1, attrs({{"axis", attr_int(0)}})).code(),
            StatusCode::kInvalidArgument);
}

TEST(MathThreads, ReductionsIdenticalWithOneAndTwoThreads) {
  const HostTensor x = random_f32({64, 96, 40}, -1, 1, 31);
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{2}, {0}, {1}, {0, 2}, {0, 1, 2}}) {
    for (const char* op : {"ReduceSum", "ReduceMax", "ReduceLogSumExp"}) {
      const Attrs a = attrs({{"axes", attr_ints(axes)}});
      EXPECT_EQ(run_ok(op, 11, {&x}, 1, a, 1)[0].bytes(), run_ok(op, 11, {&x}, 1, a, 2)[0].bytes())
          << op << " axes " << axes.size();
    }
  }
  EXPECT_EQ(run_ok("ArgMax", 13, {&x}, 1, attrs({{"axis", attr_int(1)}}), 1)[0].bytes(),
            run_ok("ArgMax", 13, {&x}, 1, attrs({{"axis", attr_int(1)}}), 2)[0].bytes());
}

}  // namespace
}  // namespace sod2::rt::math_test

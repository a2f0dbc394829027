// Unary, binary and variadic elementwise kernels against double-precision references.
#include <cmath>
#include <functional>
#include <limits>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

struct UnaryCase {
  const char* op;
  int opset;
  float lo, hi;
  std::function<double(double)> ref;
  Attrs attrs;
};

TEST(MathUnary, FloatOpsMatchDoubleReference) {
  const double selu_a = 1.6732632423543772, selu_g = 1.0507009873554805;
  const std::vector<UnaryCase> cases = {
      {"Relu", 14, -5, 5, [](double x) { return x > 0 ? x : 0; }, {}},
      {"LeakyRelu", 16, -5, 5, [](double x) { return x < 0 ? 0.01 * x : x; }, {}},
      {"LeakyRelu", 16, -5, 5, [](double x) { return x < 0 ? 0.3 * x : x; },
       attrs({{"alpha", attr_float(0.3f)}})},
      {"Elu", 6, -5, 5, [](double x) { return x < 0 ? std::expm1(x) : x; }, {}},
      {"Selu",
       6,
       -5,
       5,
       [&](double x) { return selu_g * (x <= 0 ? selu_a * std::expm1(x) : x); },
       {}},
      {"Sigmoid", 13, -20, 20, [](double x) { return 1 / (1 + std::exp(-x)); }, {}},
      {"HardSigmoid",
       6,
       -5,
       5,
       [](double x) { return std::min(1.0, std::max(0.0, 0.2 * x + 0.5)); },
       {}},
      {"HardSwish",
       14,
       -5,
       5,
       [](double x) { return x * std::min(1.0, std::max(0.0, x / 6 + 0.5)); },
       {}},
      {"Tanh", 13, -5, 5, [](double x) { return std::tanh(x); }, {}},
      {"Erf", 13, -3, 3, [](double x) { return std::erf(x); }, {}},
      {"Exp", 13, -10, 10, [](double x) { return std::exp(x); }, {}},
      {"Log", 13, 0.01f, 100, [](double x) { return std::log(x); }, {}},
      {"Sqrt", 13, 0, 100, [](double x) { return std::sqrt(x); }, {}},
      {"Reciprocal", 13, 0.5f, 10, [](double x) { return 1 / x; }, {}},
      {"Neg", 13, -5, 5, [](double x) { return -x; }, {}},
      {"Abs", 13, -5, 5, [](double x) { return std::abs(x); }, {}},
      {"Floor", 13, -5, 5, [](double x) { return std::floor(x); }, {}},
      {"Ceil", 13, -5, 5, [](double x) { return std::ceil(x); }, {}},
      {"Sign", 13, -5, 5, [](double x) { return (x > 0) - (x < 0); }, {}},
      {"Sin", 7, -5, 5, [](double x) { return std::sin(x); }, {}},
      {"Cos", 7, -5, 5, [](double x) { return std::cos(x); }, {}},
      {"Softplus", 1, -30, 30, [](double x) { return std::log1p(std::exp(x)); }, {}},
      {"Softsign", 1, -5, 5, [](double x) { return x / (1 + std::abs(x)); }, {}},
  };
  for (const UnaryCase& c : cases) {
    const HostTensor x = random_f32({3, 7, 5}, c.lo, c.hi, 42);
    const auto out = run_ok(c.op, c.opset, {&x}, 1, c.attrs);
    ASSERT_EQ(out[0].dtype(), DType::kFloat) << c.op;
    ASSERT_EQ(out[0].shape(), x.shape()) << c.op;
    std::vector<double> expected;
    // The reference takes the float input exactly as the kernel saw it.
    for (float v : values<float>(x)) expected.push_back(c.ref(v));
    // Sin/Cos near their zeros and Tanh/Erf near 0 keep relative accuracy only to an absolute
    // floor of a few float ulps.
    expect_near_all<float>(out[0], expected, 1e-5, 1e-6, c.op);
  }
}

TEST(MathUnary, ExpTanhSigmoidEdgeValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {-100,  100,   inf,   -inf,   0,     1e-4f, -3e-3f, 0.6f,
                                 0.65f, -0.7f, 88.7f, -87.3f, 88.8f, -20,   9,      -1e-30f};
  const HostTensor x = f32({16}, xs);
  std::vector<double> e, t, sg;
  for (float v : xs) {
    e.push_back(static_cast<float>(std::exp(double(v))));  // overflows to inf like float
    t.push_back(std::tanh(double(v)));
    sg.push_back(1 / (1 + std::exp(-double(v))));
  }
  expect_near_all<float>(run_ok("Exp", 13, {&x})[0], e, 1e-6, 1e-30, "Exp");
  expect_near_all<float>(run_ok("Tanh", 13, {&x})[0], t, 1e-6, 1e-30, "Tanh");
  expect_near_all<float>(run_ok("Sigmoid", 13, {&x})[0], sg, 1e-6, 1e-30, "Sigmoid");
  const HostTensor nan = f32({1}, {std::nanf("")});
  for (const char* op : {"Exp", "Tanh", "Sigmoid"})
    EXPECT_TRUE(std::isnan(run_ok(op, 13, {&nan})[0].data<float>()[0])) << op;
  // Dense sweep: the vectorised exp and tanh stay within 1e-6 relative everywhere.
  std::vector<float> sweep;
  for (float v = -80; v < 80; v += 0.01237f) sweep.push_back(v);
  const HostTensor xs2 = f32({static_cast<int64_t>(sweep.size())}, sweep);
  std::vector<double> e2, t2;
  for (float v : sweep) {
    e2.push_back(std::exp(double(v)));
    t2.push_back(std::tanh(double(v)));
  }
  expect_near_all<float>(run_ok("Exp", 13, {&xs2})[0], e2, 1e-6, 1e-30, "Exp sweep");
  expect_near_all<float>(run_ok("Tanh", 13, {&xs2})[0], t2, 1e-6, 1e-30, "Tanh sweep");
}

TEST(MathUnary, RoundIsHalfToEven) {
  const HostTensor x = f32({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f});
  EXPECT_EQ(values<float>(run_ok("Round", 11, {&x})[0]), (std::vector<float>{0, 2, 2, -0, -2, 2}));
}

TEST(MathUnary, DoubleAndIntegerTypes) {
  const HostTensor xd = f64({3}, {-1.5, 0, 2.25});
  EXPECT_EQ(values<double>(run_ok("Relu", 14, {&xd})[0]), (std::vector<double>{0, 0, 2.25}));
  const HostTensor xi = i32({4}, {-3, 0, 5, std::numeric_limits<int32_t>::min()});
  EXPECT_EQ(values<int32_t>(run_ok("Relu", 14, {&xi})[0]), (std::vector<int32_t>{0, 0, 5, 0}));
  EXPECT_EQ(values<int32_t>(run_ok("Abs", 13, {&xi})[0]),
            (std::vector<int32_t>{3, 0, 5, std::numeric_limits<int32_t>::min()}));
  const HostTensor xl = i64({3}, {-3, 0, 5});
  EXPECT_EQ(values<int64_t>(run_ok("Neg", 13, {&xl})[0]), (std::vector<int64_t>{3, 0, -5}));
  EXPECT_EQ(values<int64_t>(run_ok("Sign", 13, {&xl})[0]), (std::vector<int64_t>{-1, 0, 1}));
}

TEST(MathUnary, PredicatesAndLogic) {
  const float inf = std::numeric_limits<float>::infinity();
  const HostTensor x = f32({4}, {1, std::nanf(""), inf, -inf});
  EXPECT_EQ(values<uint8_t>(run_ok("IsNaN", 13, {&x})[0]), (std::vector<uint8_t>{0, 1, 0, 0}));
  const auto inf_out = run_ok("IsInf", 10, {&x});
  EXPECT_EQ(inf_out[0].dtype(), DType::kBool);
  EXPECT_EQ(values<uint8_t>(inf_out[0]), (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_EQ(
      values<uint8_t>(run_ok("IsInf", 10, {&x}, 1, attrs({{"detect_negative", attr_int(0)}}))[0]),
      (std::vector<uint8_t>{0, 0, 1, 0}));
  const HostTensor b = b8({3}, {1, 0, 1});
  EXPECT_EQ(values<uint8_t>(run_ok("Not", 1, {&b})[0]), (std::vector<uint8_t>{0, 1, 0}));
  const HostTensor xi = i64({2, 2}, {1, 2, 3, 4});
  const auto id = run_ok("Identity", 16, {&xi});
  EXPECT_EQ(id[0].shape(), xi.shape());
  EXPECT_EQ(values<int64_t>(id[0]), values<int64_t>(xi));
}

TEST(MathUnary, ZeroSizedAndScalar) {
  const HostTensor empty = f32({0, 3}, {});
  const auto out = run_ok("Sigmoid", 13, {&empty});
  EXPECT_EQ(out[0].shape(), (Shape{0, 3}));
  const HostTensor scalar = f32({}, {-2});
  EXPECT_EQ(values<float>(run_ok("Relu", 14, {&scalar})[0]), (std::vector<float>{0}));
}

TEST(MathUnary, UnsupportedDtypeIsAnError) {
  const HostTensor xi = i32({2}, {1, 2});
  const Status s = run_status("Sigmoid", 13, {&xi});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("Sigmoid"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("int32"), std::string::npos) << s.message();
  const HostTensor b = b8({1}, {1});
  EXPECT_EQ(run_status("Relu", 14, {&b}).code(), StatusCode::kUnsupported);
}

// ---- binary

template <class T>
std::vector<double> binary_ref(const HostTensor& a, const HostTensor& b, const Shape& out,
                               const std::function<double(T, T)>& f) {
  std::vector<double> r;
  for (int64_t i = 0; i < out.numel(); ++i) {
    r.push_back(f(a.data<T>()[broadcast_index(out, i, a.shape())],
                  b.data<T>()[broadcast_index(out, i, b.shape())]));
  }
  return r;
}

TEST(MathBinary, BroadcastShapesBothDirections) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
      {{2, 3, 4}, {4}, {2, 3, 4}},
      {{4}, {2, 3, 4}, {2, 3, 4}},
      {{3, 1}, {1, 4}, {3, 4}},
      {{}, {2, 3}, {2, 3}},
      {{2, 3}, {}, {2, 3}},
      {{2, 1, 4}, {3, 1}, {2, 3, 4}},
      {{5, 1, 1}, {5, 6, 7}, {5, 6, 7}},
      {{1, 6, 1}, {5, 6, 7}, {5, 6, 7}},
      {{2, 1, 3, 1}, {1, 4, 1, 5}, {2, 4, 3, 5}},
  };
  const std::vector<std::pair<const char*, std::function<double(float, float)>>> ops = {
      {"Add", [](float x, float y) { return double(x) + y; }},
      {"Sub", [](float x, float y) { return double(x) - y; }},
      {"Mul", [](float x, float y) { return double(x) * y; }},
      {"Div", [](float x, float y) { return double(x) / y; }},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    const HostTensor a = random_f32(c.a, -3, 3, seed++);
    const HostTensor b = random_f32(c.b, 0.5f, 3, seed++);
    for (const auto& [op, f] : ops) {
      const auto out = run_ok(op, 14, {&a, &b});
      ASSERT_EQ(out[0].shape(), c.out) << op << " " << c.a.to_string() << c.b.to_string();
      expect_near_all<float>(out[0], binary_ref<float>(a, b, c.out, f), 1e-6, 1e-6,
                             std::string(op) + c.a.to_string() + c.b.to_string());
    }
  }
}

TEST(MathBinary, ZeroSizedAndMismatchedShapes) {
  const HostTensor a = f32({0, 3}, {});
  const HostTensor b = f32({1, 3}, {1, 2, 3});
  EXPECT_EQ(run_ok("Add", 14, {&a, &b})[0].shape(), (Shape{0, 3}));
  const HostTensor c = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor d = f32({4}, {1, 2, 3, 4});
  const Status s = run_status("Mul", 14, {&c, &d});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[4]"), std::string::npos) << s.message();
  const HostTensor e = i64({2}, {1, 2});
  EXPECT_EQ(run_status("Add", 14, {&d, &e}).code(), StatusCode::kInvalidArgument);
}

TEST(MathBinary, IntegerArithmetic) {
  const HostTensor a = i32({6}, {-7, 7, -7, 7, 5, std::numeric_limits<int32_t>::min()});
  const HostTensor b = i32({6}, {2, 2, -2, -2, 0, -1});
  EXPECT_EQ(values<int32_t>(run_ok("Div", 14, {&a, &b})[0]),
            (std::vector<int32_t>{-3, 3, 3, -3, 0, std::numeric_limits<int32_t>::min()}));
  const HostTensor la = i64({2, 2}, {1, 2, 3, 4});
  const HostTensor lb = i64({2}, {10, 20});
  EXPECT_EQ(values<int64_t>(run_ok("Add", 14, {&la, &lb})[0]),
            (std::vector<int64_t>{11, 22, 13, 24}));
  EXPECT_EQ(values<int64_t>(run_ok("Mul", 14, {&la, &lb})[0]),
            (std::vector<int64_t>{10, 40, 30, 80}));
  EXPECT_EQ(values<int64_t>(run_ok("Sub", 14, {&lb, &la})[0]),
            (std::vector<int64_t>{9, 18, 7, 16}));
}

TEST(MathBinary, ModSignFollowsFmodAttribute) {
  const HostTensor a = i32({4}, {-7, 7, -7, 7});
  const HostTensor b = i32({4}, {3, 3, -3, -3});
  EXPECT_EQ(values<int32_t>(run_ok("Mod", 13, {&a, &b})[0]), (std::vector<int32_t>{2, 1, -1, -2}));
  EXPECT_EQ(values<int32_t>(run_ok("Mod", 13, {&a, &b}, 1, attrs({{"fmod", attr_int(1)}}))[0]),
            (std::vector<int32_t>{-1, 1, -1, 1}));
  const HostTensor fa = f32({2}, {-7.5f, 7.5f});
  const HostTensor fb = f32({1}, {2});
  EXPECT_EQ(values<float>(run_ok("Mod", 13, {&fa, &fb}, 1, attrs({{"fmod", attr_int(1)}}))[0]),
            (std::vector<float>{-1.5f, 1.5f}));
}

TEST(MathBinary, Pow) {
  const HostTensor a = random_f32({2, 3}, 0.1f, 3, 7);
  const HostTensor e = random_f32({3}, -2, 2, 8);
  const Shape out{2, 3};
  expect_near_all<float>(
      run_ok("Pow", 15, {&a, &e})[0],
      binary_ref<float>(a, e, out, [](float x, float y) { return std::pow(double(x), y); }), 1e-5);
  const HostTensor two = i64({}, {2});
  std::vector<double> squares;
  for (float v : values<float>(a)) squares.push_back(double(v) * v);
  expect_near_all<float>(run_ok("Pow", 15, {&a, &two})[0], squares, 1e-6);
  const HostTensor half = f32({}, {0.5f});
  std::vector<double> roots;
  for (float v : values<float>(a)) roots.push_back(std::sqrt(double(v)));
  expect_near_all<float>(run_ok("Pow", 15, {&a, &half})[0], roots, 1e-6);
  const HostTensor ib = i64({4}, {2, -3, 5, 2});
  const HostTensor ie = i64({4}, {10, 3, 0, -1});
  EXPECT_EQ(values<int64_t>(run_ok("Pow", 15, {&ib, &ie})[0]),
            (std::vector<int64_t>{1024, -27, 1, 0}));
}

TEST(MathBinary, ComparisonsAndLogic) {
  const HostTensor a = f32({2, 2}, {1, 2, 3, 4});
  const HostTensor b = f32({2}, {2, 3});
  auto check = [&](const char* op, int opset, std::vector<uint8_t> want) {
    const auto out = run_ok(op, opset, {&a, &b});
    EXPECT_EQ(out[0].dtype(), DType::kBool) << op;
    EXPECT_EQ(values<uint8_t>(out[0]), want) << op;
  };
  check("Equal", 13, {0, 0, 0, 0});
  check("Greater", 13, {0, 0, 1, 1});
  check("GreaterOrEqual", 16, {0, 0, 1, 1});
  check("Less", 13, {1, 1, 0, 0});
  check("LessOrEqual", 16, {1, 1, 0, 0});
  const HostTensor ia = i64({3}, {1, 2, 3});
  const HostTensor ib = i64({}, {2});
  EXPECT_EQ(values<uint8_t>(run_ok("Equal", 13, {&ia, &ib})[0]), (std::vector<uint8_t>{0, 1, 0}));
  const HostTensor p = b8({4}, {0, 0, 1, 1});
  const HostTensor q = b8({4}, {0, 1, 0, 1});
  EXPECT_EQ(values<uint8_t>(run_ok("And", 7, {&p, &q})[0]), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(values<uint8_t>(run_ok("Or", 7, {&p, &q})[0]), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(values<uint8_t>(run_ok("Xor", 7, {&p, &q})[0]), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(values<uint8_t>(run_ok("Equal", 13, {&p, &q})[0]), (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(run_status("And", 7, {&a, &b}).code(), StatusCode::kUnsupported);
}

TEST(MathBinary, BitShift) {
  const HostTensor a = make_tensor<uint32_t>(DType::kUint32, {3}, {16, 4, 1});
  const HostTensor s = make_tensor<uint32_t>(DType::kUint32, {3}, {1, 2, 40});
  EXPECT_EQ(values<uint32_t>(run_ok("BitShift", 11, {&a, &s}, 1,
                                    attrs({{"direction", attr_string("RIGHT")}}))[0]),
            (std::vector<uint32_t>{8, 1, 0}));
  EXPECT_EQ(values<uint32_t>(run_ok("BitShift", 11, {&a, &s}, 1,
                                    attrs({{"direction", attr_string("LEFT")}}))[0]),
            (std::vector<uint32_t>{32, 16, 0}));
}

TEST(MathBinary, LegacyBroadcastBeforeOpset7) {
  const HostTensor a = f32({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const HostTensor b = f32({3}, {100, 200, 300});
  const auto out =
      run_ok("Add", 6, {&a, &b}, 1, attrs({{"broadcast", attr_int(1)}, {"axis", attr_int(1)}}));
  EXPECT_EQ(values<float>(out[0]),
            (std::vector<float>{100, 101, 202, 203, 304, 305, 106, 107, 208, 209, 310, 311}));
  EXPECT_EQ(run_status("Add", 6, {&a, &b}).code(), StatusCode::kInvalidArgument);
}

TEST(MathBinary, PReluBroadcastsSlopeOntoX) {
  const HostTensor x = f32({1, 2, 2}, {-1, 2, -3, 4});
  const HostTensor slope = f32({2, 1}, {0.5f, 0.25f});
  EXPECT_EQ(values<float>(run_ok("PRelu", 16, {&x, &slope})[0]),
            (std::vector<float>{-0.5f, 2, -0.75f, 4}));
  const HostTensor big = f32({2, 2, 2}, {});
  EXPECT_EQ(run_status("PRelu", 16, {&x, &big}).code(), StatusCode::kInvalidArgument);
}

TEST(MathVariadic, MaxMinSumMeanBroadcast) {
  const HostTensor a = f32({2, 1}, {1, 5});
  const HostTensor b = f32({3}, {2, 3, 4});
  const HostTensor c = f32({}, {3.5f});
  EXPECT_EQ(values<float>(run_ok("Max", 13, {&a, &b, &c})[0]),
            (std::vector<float>{3.5f, 3.5f, 4, 5, 5, 5}));
  EXPECT_EQ(values<float>(run_ok("Min", 13, {&a, &b, &c})[0]),
            (std::vector<float>{1, 1, 1, 2, 3, 3.5f}));
  EXPECT_EQ(values<float>(run_ok("Sum", 13, {&a, &b, &c})[0]),
            (std::vector<float>{6.5f, 7.5f, 8.5f, 10.5f, 11.5f, 12.5f}));
  const auto mean = run_ok("Mean", 13, {&a, &b, &c});
  EXPECT_EQ(mean[0].shape(), (Shape{2, 3}));
  expect_near_all<float>(mean[0], {6.5 / 3, 7.5 / 3, 8.5 / 3, 3.5, 11.5 / 3, 12.5 / 3}, 1e-6);
  EXPECT_EQ(values<float>(run_ok("Sum", 13, {&b})[0]), values<float>(b));
  const HostTensor ia = i32({2}, {1, -4});
  const HostTensor ib = i32({2}, {-2, 3});
  EXPECT_EQ(values<int32_t>(run_ok("Max", 13, {&ia, &ib})[0]), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(run_status("Max", 13, {&a, &ia}).code(), StatusCode::kInvalidArgument);
}

TEST(MathThreads, BigBroadcastIsIdenticalWithOneAndTwoThreads) {
  const HostTensor a = random_f32({64, 128, 33}, -2, 2, 11);
  const HostTensor b = random_f32({128, 1}, -2, 2, 12);
  for (const char* op : {"Add", "Mul", "Div", "Sigmoid", "Tanh"}) {
    const bool unary = std::string(op) == "Sigmoid" || std::string(op) == "Tanh";
    std::vector<const HostTensor*> in = {&a};
    if (!unary) in.push_back(&b);
    const auto one = run_ok(op, 14, in, 1, {}, 1);
    const auto two = run_ok(op, 14, in, 1, {}, 2);
    EXPECT_EQ(one[0].bytes(), two[0].bytes()) << op;
  }
}

}  // namespace
}  // namespace sod2::rt::math_test

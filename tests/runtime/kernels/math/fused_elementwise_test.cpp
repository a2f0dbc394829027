// sod2:FusedElementwise computes what the ops' own kernels compute one after the other, bit for
// bit, at one and two threads, across broadcasts and chunk edges; and a program from a package
// that does not add up is refused when the kernel is made, naming what is wrong.
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#include "math_test_util.h"
#include "runtime/kernels/elementwise_program.h"
#include "runtime/kernels/linalg/quantize.h"

namespace sod2::rt::math_test {
namespace {

HostTensor scalar(float v) { return make_tensor<float>(DType::kFloat, Shape{}, {v}); }

Expected<HostTensor> run_fused(const ElementwiseProgram& p,
                               const std::vector<const HostTensor*>& inputs, int threads) {
  SOD2_ASSIGN_OR_RETURN(auto out, testing::run_kernel(registry(), "FusedElementwise", 1, inputs, 1,
                                                      to_attrs(p), threads, "sod2"));
  return std::move(out[0]);
}

std::optional<float> no_attr(const char*) { return std::nullopt; }

// Each op as a one-step program against its own kernel: x [2,3,257] (more than a chunk per row),
// and for two-operand ops y [3,1] (broadcast inside a row) then y [257] (a row) then a scalar.
TEST(FusedElementwise, EveryOpEqualsItsOwnKernel) {
  const HostTensor x = random_tensor(Shape{2, 3, 257}, 1);
  const std::vector<HostTensor> others = {random_tensor(Shape{3, 1}, 2),
                                          random_tensor(Shape{257}, 3, 0.5f, 2.f), scalar(1.5f)};
  for (int k = 0; k < kNumEwOps; ++k) {
    const auto op = static_cast<EwOp>(k);
    const std::string name(ew_op_name(op));
    Attrs own;
    std::function<std::optional<float>(const char*)> attr = no_attr;
    if (op == EwOp::kLeakyRelu || op == EwOp::kElu || op == EwOp::kHardSigmoid ||
        op == EwOp::kSelu) {
      own.set("alpha", attr_float(0.3f));
      attr = [](const char* n) -> std::optional<float> {
        return std::string(n) == "alpha" ? std::optional<float>(0.3f) : std::nullopt;
      };
    }
    for (const HostTensor& y : others) {
      const bool two = ew_op_arity(op).hi > 1;
      std::vector<const HostTensor*> inputs = {&x};
      std::vector<EwOperand> args = {{false, 0}};
      if (two) {
        inputs.push_back(&y);
        args.push_back({false, 1});
      }
      auto step = elementwise_step(name, 17, args, attr);
      ASSERT_TRUE(step.ok()) << name << ": " << step.status().message();
      std::vector<const HostTensor*> own_inputs = inputs;
      HostTensor lo = scalar(-0.5f), hi = scalar(0.75f);
      if (op == EwOp::kClip) {
        step = elementwise_step(name, 17, args, attr, -0.5f, 0.75f);
        own_inputs = {&x, &lo, &hi};
      }
      auto want = testing::run_kernel(registry(), name, 17, own_inputs, 1, own);
      ASSERT_TRUE(want.ok()) << name << ": " << want.status().message();
      ElementwiseProgram p;
      p.steps.push_back(*step);
      for (int threads : {1, 2}) {
        auto got = run_fused(p, inputs, threads);
        ASSERT_TRUE(got.ok()) << name << ": " << got.status().message();
        EXPECT_EQ(differs(*got, (*want)[0]), "")
            << name << " with " << y.view().shape.to_string() << " at " << threads << " threads";
      }
      if (!two) break;
    }
  }
}

// GELU as exporters write it, with a bias broadcast along the channels: seven ops, one kernel.
TEST(FusedElementwise, AChainEqualsItsOpsOneByOne) {
  const HostTensor x = random_tensor(Shape{3, 7, 1000}, 4);
  const HostTensor bias = random_tensor(Shape{1000}, 5);
  const HostTensor sqrt2 = scalar(1.41421356f), one = scalar(1.f), half = scalar(0.5f);
  auto run = [&](const char* op, std::vector<const HostTensor*> in) {
    auto r = testing::run_kernel(registry(), op, 17, in, 1);
    EXPECT_TRUE(r.ok()) << op;
    return std::move((*r)[0]);
  };
  const HostTensor b = run("Add", {&x, &bias});
  const HostTensor d = run("Div", {&b, &sqrt2});
  const HostTensor e = run("Erf", {&d});
  const HostTensor a = run("Add", {&e, &one});
  const HostTensor m = run("Mul", {&b, &a});
  const HostTensor want = run("Mul", {&m, &half});

  // Inputs: x, bias, sqrt2, one, half.
  auto step = [](const char* op, std::vector<EwOperand> args) {
    return *elementwise_step(op, 17, std::move(args), no_attr);
  };
  ElementwiseProgram p;
  p.steps = {step("Add", {{false, 0}, {false, 1}}),
             step("Div", {{true, 0}, {false, 2}}),
             step("Erf", {{true, 1}}),
             step("Add", {{true, 2}, {false, 3}}),
             step("Mul", {{true, 0}, {true, 3}}),
             step("Mul", {{true, 4}, {false, 4}})};
  for (int threads : {1, 2}) {
    auto got = run_fused(p, {&x, &bias, &sqrt2, &one, &half}, threads);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(differs(*got, want), "") << threads << " threads";
  }
}

// GELU's five ops evaluated as one step (gelu_erf_f32) where its three constants are single
// floats: the same bits as the ops one by one, whatever the operand order, with x / k or x * k,
// on special values, and unchanged where a constant is not one float or a step's result has
// another reader (the steps then run one by one).
TEST(FusedElementwise, GeluAsOneStepEqualsItsOpsOneByOne) {
  HostTensor x = random_tensor(Shape{2, 5, 700}, 7, -6.f, 6.f);
  const float specials[] = {0.f,
                            -0.f,
                            1e-30f,
                            -1e-30f,
                            3.9f,
                            4.f,
                            -4.1f,
                            100.f,
                            -100.f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  for (size_t i = 0; i < std::size(specials); ++i) x.view().as<float>()[i * 37] = specials[i];
  const HostTensor k = scalar(1.41421356f), rk = scalar(0.70710678f), one = scalar(1.f),
                   half = scalar(0.5f), wide_k = random_tensor(Shape{700}, 8, 1.f, 2.f);
  auto run = [&](const char* op, std::vector<const HostTensor*> in) {
    auto r = testing::run_kernel(registry(), op, 17, in, 1);
    EXPECT_TRUE(r.ok()) << op;
    return std::move((*r)[0]);
  };
  auto step = [](const char* op, std::vector<EwOperand> args) {
    return *elementwise_step(op, 17, std::move(args), no_attr);
  };
  // Inputs: x, k, one, half.
  for (const HostTensor* kk : {&k, &rk, &wide_k}) {
    for (bool divide : {true, false}) {
      for (bool swapped : {false, true}) {
        for (bool extra_reader : {false, true}) {
          SCOPED_TRACE(std::string(divide ? "Div" : "Mul") + (swapped ? ", swapped" : "") +
                       (extra_reader ? ", Erf read twice" : "") +
                       (kk == &wide_k ? ", k of 700" : ""));
          const HostTensor d = run(divide ? "Div" : "Mul", {&x, kk});
          const HostTensor e = run("Erf", {&d});
          const HostTensor a = run("Add", {swapped ? &one : &e, swapped ? &e : &one});
          const HostTensor m = run("Mul", {swapped ? &a : &x, swapped ? &x : &a});
          const HostTensor g = run("Mul", {swapped ? &half : &m, swapped ? &m : &half});
          const HostTensor want = extra_reader ? run("Add", {&g, &e}) : g;
          auto pair = [&](EwOperand t, EwOperand in) {
            return swapped ? std::vector<EwOperand>{in, t} : std::vector<EwOperand>{t, in};
          };
          ElementwiseProgram p;
          p.steps = {step(divide ? "Div" : "Mul", {{false, 0}, {false, 1}}),
                     step("Erf", {{true, 0}}), step("Add", pair({true, 1}, {false, 2})),
                     step("Mul", pair({true, 2}, {false, 0})),
                     step("Mul", pair({true, 3}, {false, 3}))};
          if (extra_reader) p.steps.push_back(step("Add", {{true, 4}, {true, 1}}));
          for (int threads : {1, 2}) {
            auto got = run_fused(p, {&x, kk, &one, &half}, threads);
            ASSERT_TRUE(got.ok()) << got.status().message();
            EXPECT_EQ(differs(*got, want), "") << threads << " threads";
          }
        }
      }
    }
  }
}

// A program whose output is quantized (a QDQ squeeze-excite's Mul -> QuantizeLinear): the same
// bytes as the Mul kernel then QuantizeLinear's arithmetic, for uint8 and int8, over rows shorter
// and longer than a chunk.
TEST(FusedElementwise, AQuantizedOutputEqualsQuantizeLinearAfterTheSteps) {
  for (const Shape& shape : {Shape{1, 6, 7, 7}, Shape{2, 3, 40, 40}}) {
    const HostTensor x = random_tensor(shape, 21, -4.f, 4.f);
    const HostTensor s = random_tensor(Shape{1, shape[1], 1, 1}, 22, 0.f, 1.f);
    auto mul = testing::run_kernel(registry(), "Mul", 17, {&x, &s}, 1);
    ASSERT_TRUE(mul.ok());
    ElementwiseProgram p;
    p.steps = {*elementwise_step("Mul", 17, {{false, 0}, {false, 1}}, no_attr)};
    for (DType type : {DType::kUint8, DType::kInt8}) {
      SCOPED_TRACE(std::string(dtype_name(type)) + " " + shape.to_string());
      const int32_t zp = type == DType::kUint8 ? 130 : -7;
      // QuantizeLinear's arithmetic, element by element.
      std::vector<uint8_t> want;
      const float* v = (*mul)[0].data<float>();
      for (int64_t i = 0; i < (*mul)[0].shape().numel(); ++i)
        want.push_back(type == DType::kUint8
                           ? quant::quantize_value<uint8_t>(v[i], 0.03f, zp)
                           : static_cast<uint8_t>(quant::quantize_value<int8_t>(v[i], 0.03f, zp)));
      p.quantize = EwQuantize{0.03f, zp, type};
      for (int threads : {1, 2}) {
        auto got = run_fused(p, {&x, &s}, threads);
        ASSERT_TRUE(got.ok()) << got.status().message();
        ASSERT_EQ(got->dtype(), type);
        EXPECT_EQ(got->bytes(), want) << threads << " threads";
      }
      // The attributes carry the quantization.
      auto back = elementwise_program_from(to_attrs(p), 2);
      ASSERT_TRUE(back.ok());
      ASSERT_TRUE(back->quantize.has_value());
      EXPECT_EQ(back->quantize->zero_point, zp);
      EXPECT_EQ(back->quantize->type, type);
    }
  }
}

// Broadcasts on both sides of the output ([4,1,6] with [5,1]), a dim of 1 inside, a scalar
// output and an empty one.
TEST(FusedElementwise, BroadcastShapesAndEdgeCases) {
  const HostTensor a = random_tensor(Shape{4, 1, 6}, 6), b = random_tensor(Shape{5, 1}, 7);
  auto want = testing::run_kernel(registry(), "Mul", 17, {&a, &b}, 1);
  ASSERT_TRUE(want.ok());
  ElementwiseProgram p;
  p.steps = {*elementwise_step("Mul", 17, {{false, 0}, {false, 1}}, no_attr)};
  auto got = run_fused(p, {&a, &b}, 2);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got).view().shape, (Shape{4, 5, 6}));
  EXPECT_EQ(differs(*got, (*want)[0]), "");

  const HostTensor s = scalar(-2.f);
  auto one = run_fused(p, {&s, &s}, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one).view().as<const float>()[0], 4.f);

  const HostTensor empty(DType::kFloat, Shape{0, 3});
  auto none = run_fused(p, {&empty, &s}, 1);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ((*none).view().numel(), 0);

  const HostTensor c = random_tensor(Shape{3}, 8), d = random_tensor(Shape{4}, 9);
  auto bad = run_fused(p, {&c, &d}, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("FusedElementwise"), std::string::npos);
}

AttrValue strings(std::vector<std::string> v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}
AttrValue ints(std::vector<int64_t> v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
AttrValue floats(std::vector<float> v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

// A package's program is data: each inconsistency is an error when the kernel is made.
TEST(FusedElementwise, AProgramThatDoesNotAddUpIsRefused) {
  struct Case {
    const char* what;
    Attrs attrs;
    const char* says;
  };
  auto program = [](std::vector<std::string> steps, std::vector<int64_t> arity,
                    std::vector<int64_t> args) {
    Attrs a;
    const size_t n = steps.size();
    a.set("steps", strings(std::move(steps)));
    a.set("arity", ints(std::move(arity)));
    a.set("args", ints(std::move(args)));
    a.set("alpha", floats(std::vector<float>(n, 0.f)));
    a.set("beta", floats(std::vector<float>(n, 0.f)));
    return a;
  };
  Attrs missing_alpha = program({"Relu"}, {1}, {0});
  missing_alpha.set("alpha", floats({}));
  auto quantized = [&](float scale, int64_t zero_point, const char* type) {
    Attrs a = program({"Relu"}, {1}, {0});
    AttrValue s, z, t;
    s.kind = AttrValue::Kind::kFloat;
    s.f = scale;
    z.kind = AttrValue::Kind::kInt;
    z.i = zero_point;
    t.kind = AttrValue::Kind::kString;
    t.s = type;
    a.set("quantize_scale", s);
    a.set("quantize_zero_point", z);
    a.set("quantize_type", t);
    return a;
  };
  const std::vector<Case> cases = {
      {"no steps", Attrs{}, "steps"},
      {"an unknown op", program({"Gelu"}, {1}, {0}), "Gelu"},
      {"a binary op with one operand", program({"Add"}, {1}, {0}), "operands"},
      {"more operands than args", program({"Add"}, {2}, {0}), "operands"},
      {"an input out of range", program({"Relu"}, {1}, {2}), "input 2"},
      {"a step reading itself", program({"Relu"}, {1}, {-1}), "not an earlier step"},
      {"a step reading a later one", program({"Relu", "Neg"}, {1, 1}, {-2, 0}),
       "not an earlier step"},
      {"args left over", program({"Relu"}, {1}, {0, 0}), "more than the steps take"},
      {"a negative arity", program({"Relu"}, {-1}, {0}), "operands"},
      {"alpha per step missing", missing_alpha, "one entry per step"},
      {"a zero quantize scale", quantized(0.f, 0, "uint8"), "quantize_scale"},
      {"a NaN quantize scale", quantized(std::nanf(""), 0, "uint8"), "quantize_scale"},
      {"a zero point outside int8", quantized(0.1f, 200, "int8"), "quantize_zero_point"},
      {"a quantized type other than 8 bits", quantized(0.1f, 0, "int32"), "quantize_type"},
      {"too many steps",
       program(std::vector<std::string>(kMaxEwSteps + 1, "Relu"),
               std::vector<int64_t>(kMaxEwSteps + 1, 1), std::vector<int64_t>(kMaxEwSteps + 1, 0)),
       "steps"},
  };
  const HostTensor x = random_tensor(Shape{4}, 10), y = random_tensor(Shape{4}, 11);
  for (const Case& c : cases) {
    const NodeInfo info = testing::node_info("FusedElementwise", 1, {&x, &y}, 1, c.attrs, "sod2");
    auto k = registry().create(info);
    ASSERT_FALSE(k.ok()) << c.what;
    EXPECT_NE(k.status().message().find(c.says), std::string::npos)
        << c.what << ": " << k.status().message();
  }
  // And a float16 input is not silently read as float32.
  const HostTensor h(DType::kFloat16, Shape{4});
  Attrs ok = program({"Relu"}, {1}, {0});
  EXPECT_FALSE(
      registry().create(testing::node_info("FusedElementwise", 1, {&h}, 1, ok, "sod2")).ok());
}

}  // namespace
}  // namespace sod2::rt::math_test

// sod2:FusedSoftmax computes what its prologue's ops and then Softmax compute one after the
// other, bit for bit, at one and two threads, for short rows (many a block), rows longer than a
// block, rows of the coerced 2-D form, and broadcast masks; a node from a package that does not
// add up is refused when the kernel is made.
#include <cmath>
#include <cstring>

#include "math_test_util.h"
#include "runtime/kernels/elementwise_program.h"

namespace sod2::rt::math_test {
namespace {

std::optional<float> no_attr(const char*) { return std::nullopt; }

// Attention's prologue: (scores / k) + mask, inputs scores, k, mask; no axis when negative.
Attrs scale_and_mask(int64_t axis) {
  ElementwiseProgram p;
  p.steps = {*elementwise_step("Div", 17, {{false, 0}, {false, 1}}, no_attr),
             *elementwise_step("Add", 17, {{true, 0}, {false, 2}}, no_attr)};
  Attrs a = to_attrs(p);
  if (axis >= 0) a.set("axis", attr_int(axis));
  return a;
}

TEST(FusedSoftmax, EqualsItsPrologueThenSoftmax) {
  struct Case {
    Shape scores, mask;
    int64_t axis;
    int softmax_opset;  // the unfused Softmax's: 13 normalises the last axis, 11 dims [axis, rank)
  };
  const std::vector<Case> cases = {
      {{2, 3, 5, 7}, {2, 1, 1, 7}, 3, 13},        // many rows to a block
      {{2, 2, 16, 16}, {16}, 3, 13},              // a mask along the row
      {{1, 2, 3, 9000}, {1, 1, 1, 9000}, 3, 13},  // rows longer than a block
      {{3, 4, 5, 6}, {1, 4, 1, 1}, 1, 11},        // coerced 2-D: rows of 4 x 5 x 6
  };
  const HostTensor k = make_tensor<float>(DType::kFloat, Shape{}, {2.828427f});
  for (const Case& c : cases) {
    const HostTensor s = random_tensor(c.scores, 1, -30.f, 30.f),
                     m = random_tensor(c.mask, 2, -4.f, 4.f);
    const HostTensor d = run_ok("Div", 14, {&s, &k})[0];
    const HostTensor a = run_ok("Add", 14, {&d, &m})[0];
    const HostTensor want =
        run_ok("Softmax", c.softmax_opset, {&a}, 1, attrs({{"axis", attr_int(c.axis)}}))[0];
    for (int threads : {1, 2}) {
      auto got = testing::run_kernel(registry(), kFusedSoftmaxOp, 1, {&s, &k, &m}, 1,
                                     scale_and_mask(c.axis), threads, kFusedSoftmaxDomain);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(differs((*got)[0], want), "")
          << c.scores.to_string() << " axis " << c.axis << " at " << threads << " threads";
    }
  }
}

TEST(FusedSoftmax, ANodeThatDoesNotAddUpIsRefused) {
  const HostTensor s = random_tensor(Shape{2, 3}, 3), k = random_tensor(Shape{}, 4);
  const HostTensor m = random_tensor(Shape{3}, 5);
  Attrs quantized = scale_and_mask(1);
  AttrValue scale;
  scale.kind = AttrValue::Kind::kFloat;
  scale.f = 0.1f;
  quantized.set("quantize_scale", scale);
  struct Case {
    const char* what;
    Attrs attrs;
    const char* says;
  };
  Attrs negative = scale_and_mask(-1);
  negative.set("axis", attr_int(-1));
  const std::vector<Case> made = {{"an empty program", to_attrs(ElementwiseProgram{}), "steps"},
                                  {"no axis", scale_and_mask(-1), "axis"},
                                  {"a negative axis", negative, "axis"},
                                  {"a quantized prologue", quantized, "quantize"}};
  for (const Case& c : made) {
    auto kernel = registry().create(
        testing::node_info(kFusedSoftmaxOp, 1, {&s, &k, &m}, 1, c.attrs, kFusedSoftmaxDomain));
    ASSERT_FALSE(kernel.ok()) << c.what;
    EXPECT_NE(kernel.status().message().find(c.says), std::string::npos)
        << c.what << ": " << kernel.status().message();
  }
  // An axis past the rank of what the inputs broadcast to: refused when it runs.
  auto past = testing::run_kernel(registry(), kFusedSoftmaxOp, 1, {&s, &k, &m}, 1,
                                  scale_and_mask(3), 1, kFusedSoftmaxDomain);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("past the rank"), std::string::npos)
      << past.status().message();
}

}  // namespace
}  // namespace sod2::rt::math_test

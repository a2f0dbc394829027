#include <gtest/gtest.h>

#include <vector>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

// Scales are floats, which facts carry only when integral: the cases give them as float
// initializers (floats_at) or Constant nodes.
auto floats_at(size_t input, std::vector<float> values) {
  return [=](FakeContext& c) { c.initializer(input, values); };
}

class ResizeTest : public ::testing::TestWithParam<SetupCase> {};

TEST_P(ResizeTest, Output) { run_case(GetParam()); }

TensorFact roi() { return ffact("0"); }
TensorFact four() { return ffact("4"); }

INSTANTIATE_TEST_SUITE_P(
    Rules, ResizeTest,
    ::testing::Values(
        SetupCase{"ScalesTwo",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), four()},
                  floats_at(2, {1, 1, 2, 2}),
                  "[n, c, 2*h, 2*w]"},
        SetupCase{"ScalesHalf",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), four()},
                  [](FakeContext& c) {
                    c.initializer(2, {1, 1, 0.5f, 0.5f}).range("h", 32, 1024, 32);
                  },
                  "[n, c, floordiv(h,2), floordiv(w,2)]"},
        SetupCase{"ScalesThreeHalves",
                  "Resize",
                  {ffact("1, 3, h, 10"), roi(), four()},
                  floats_at(2, {1, 1, 1.5f, 1.5f}),
                  "[1, 3, floordiv(3*h,2), 15]"},
        SetupCase{"ScalesQuarterConstant",
                  "Resize",
                  {ffact("1, 3, 10, 9"), roi(), four()},
                  floats_at(2, {1, 1, 0.25f, 2.5f}),
                  "[1, 3, 2, 22]"},
        SetupCase{"ScalesNonDyadicIsExecutionDim",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), four()},
                  floats_at(2, {1, 1, 1.0f / 3, 2}),
                  "[n, c, Resize_0.out0.d2, 2*w]"},
        SetupCase{"ScalesUnknownDimStaysUnknown",
                  "Resize",
                  {ffact("n, c, ?, w"), roi(), four()},
                  floats_at(2, {1, 1, 2, 2}),
                  "[n, c, ?, 2*w]"},
        SetupCase{"ScalesFromTrackedIntegralValues",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), ints({"1", "1", "2", "3"})},
                  none,
                  "[n, c, 2*h, 3*w]"},
        SetupCase{"ScalesUnknownValues",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), four()},
                  none,
                  "[Resize_0.out0.d0, Resize_0.out0.d1, Resize_0.out0.d2, Resize_0.out0.d3]"},
        SetupCase{"SymbolicSizes",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), ffact("0"), ints({"n", "c", "2*h", "w+1"})},
                  none,
                  "[n, c, 2*h, w+1]"},
        SetupCase{"SizesWithScalesOmitted",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), ffact("0"), ints({"n", "c", "64", "64"})},
                  [](FakeContext& c) { c.omit_input(1).omit_input(2); },
                  "[n, c, 64, 64]"},
        SetupCase{"SizesUnknownValues",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), ffact("0"), fact(DataType::kInt64, "4")},
                  none,
                  "[Resize_0.out0.d0, Resize_0.out0.d1, Resize_0.out0.d2, Resize_0.out0.d3]"},
        SetupCase{
            "SizesGiveRank",
            "Resize",
            {TensorFact::unknown(DataType::kFloat), roi(), ffact("0"), ints({"1", "3", "h", "w"})},
            none,
            "[1, 3, h, w]"},
        SetupCase{
            "NothingKnown",
            "Resize",
            {TensorFact::unknown(DataType::kFloat), roi(), TensorFact::unknown(DataType::kFloat)},
            none,
            "<unknown rank>"},
        SetupCase{"SizesWithAxes",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), ffact("0"), ints({"2*h", "2*w"})},
                  [](FakeContext& c) {
                    c.attr_ints("axes", {-2, -1});
                  },
                  "[n, c, 2*h, 2*w]",
                  {},
                  18},
        SetupCase{"SizesNotStretchIsExecution",
                  "Resize",
                  {ffact("n, c, h, w"), roi(), ffact("0"), ints({"32", "32"})},
                  [](FakeContext& c) {
                    c.attr_ints("axes", {2, 3}).attr_s("keep_aspect_ratio_policy", "not_larger");
                  },
                  "[n, c, Resize_0.out0.d2, Resize_0.out0.d3]",
                  {},
                  18},
        SetupCase{"Opset10Scales",
                  "Resize",
                  {ffact("n, c, h, w"), four()},
                  floats_at(1, {1, 1, 2, 2}),
                  "[n, c, 2*h, 2*w]",
                  {},
                  10},
        SetupCase{"UpsampleAttr",
                  "Upsample",
                  {ffact("n, c, h, w")},
                  [](FakeContext& c) { c.attr_floats("scales", {1, 1, 2, 2}); },
                  "[n, c, 2*h, 2*w]",
                  {},
                  7},
        SetupCase{"UpsampleInput",
                  "Upsample",
                  {ffact("n, c, h, w"), four()},
                  floats_at(1, {1, 1, 2, 2}),
                  "[n, c, 2*h, 2*w]",
                  {},
                  9},
        SetupCase{"UpsampleV1",
                  "Upsample",
                  {ffact("n, c, h, w")},
                  [](FakeContext& c) { c.attr_f("height_scale", 2).attr_f("width_scale", 3); },
                  "[n, c, 2*h, 3*w]",
                  {},
                  1}),
    case_name);

TEST(ResizeTest, ScalesFromConstantNode) {
  FakeContext ctx("Resize", {ffact("n, c, h, w"), roi(), four()}, 1, 13);
  ctx.constant_input(2, {1, 1, 2, 0.5f});
  ASSERT_TRUE(ctx.run().ok());
  EXPECT_EQ(ctx.out_str(), "[n, c, 2*h, floordiv(w,2)]");
}

TEST(ResizeTest, Errors) {
  FakeContext len("Resize", {ffact("n, c, h, w"), roi(), ffact("3")});
  len.initializer(2, {1, 2, 2});
  EXPECT_EQ(len.run().code(), StatusCode::kInvalidModel);
  FakeContext zero("Resize", {ffact("n, c, h, w"), roi(), four()});
  zero.initializer(2, {1, 1, 0, 2});
  EXPECT_EQ(zero.run().code(), StatusCode::kInvalidModel);
  FakeContext empty("Resize",
                    {ffact("n, c, h, w"), roi(), ffact("0"), fact(DataType::kInt64, "0")});
  EXPECT_EQ(empty.run().code(), StatusCode::kInvalidModel);
  FakeContext sizes("Resize", {ffact("n, c, h, w"), roi(), ffact("0"), ints({"1", "2"})});
  EXPECT_EQ(sizes.run().code(), StatusCode::kInvalidModel);
  FakeContext up("Upsample", {ffact("n, c, h, w")}, 1, 7);
  EXPECT_EQ(up.run().code(), StatusCode::kInvalidModel);
}

TEST(ResizeTest, Registry) {
  const auto& r = OpRegistry::standard();
  EXPECT_EQ(r.find("Resize", 10)->value_inputs, std::vector<int>{1});
  EXPECT_EQ(r.find("Resize", 11)->value_inputs, (std::vector<int>{2, 3}));
  EXPECT_EQ(r.find("Resize", 13)->value_inputs, (std::vector<int>{2, 3}));
  EXPECT_EQ(r.find("Resize", 17)->op_class, OpClass::kISVDOS);
  EXPECT_EQ(r.find("Upsample", 7)->op_class, OpClass::kISDOS);
  EXPECT_EQ(r.find("Upsample", 9)->op_class, OpClass::kISVDOS);
  EXPECT_EQ(r.find("Upsample", 10)->value_inputs, std::vector<int>{1});
}

}  // namespace
}  // namespace sod2::testing

// Shape-computing and rearranging ops: the rules that carry shape values, where a wrong dim would
// silently corrupt everything downstream.
#include <gtest/gtest.h>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

using DT = DataType;

TEST(ShapeOps, ShapeAndSizeCarryValues) {
  const std::vector<SetupCase> cases = {
      {"shape", "Shape", {ffact("b, s, 8")}, none, "[3] = (b, s, 8)"},
      {"shape start/end (15)",
       "Shape",
       {ffact("b, s, 8")},
       [](FakeContext& c) { c.attr_i("start", -2); },
       "[2] = (s, 8)",
       {},
       15},
      {"shape end clamps",
       "Shape",
       {ffact("b, s")},
       [](FakeContext& c) { c.attr_i("end", 10); },
       "[2] = (b, s)",
       {},
       15},
      {"size", "Size", {ffact("b, s, 8")}, none, "[] = (8*b*s)"},
      {"shape of unknown dims", "Shape", {ffact("b, ?")}, none, "[2]"},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(ShapeOps, ReshapeZerosMinusOneAndAllowzero) {
  const std::vector<SetupCase> cases = {
      {"-1 infers", "Reshape", {ffact("b, s, 8"), ints({"0", "-1", "4"})}, none, "[b, 2*s, 4]"},
      {"0 copies", "Reshape", {ffact("b, s, 8"), ints({"0", "0", "2", "4"})}, none, "[b, s, 2, 4]"},
      {"symbolic request",
       "Reshape",
       {ffact("b, s, 8"), ints({"b", "8*s"})},
       [](FakeContext& c) { c.range("b", 1, 8).range("s", 1, 64); },
       "[b, 8*s]"},
      {"allowzero keeps 0",
       "Reshape",
       {ffact("0, 8"), ints({"0", "4", "2"})},
       [](FakeContext& c) { c.attr_i("allowzero", 1); },
       "[0, 4, 2]",
       {},
       14},
      {"allowzero off copies 0",
       "Reshape",
       {ffact("3, 8"), ints({"0", "4", "2"})},
       none,
       "[3, 4, 2]",
       {},
       14},
      {"unknown request: execution dims",
       "Reshape",
       {ffact("b, 8"), fact(DT::kInt64, "2")},
       none,
       "[Reshape_0.out0.d0, Reshape_0.out0.d1]"},
      {"opset 1 attribute",
       "Reshape",
       {ffact("2, 6")},
       [](FakeContext& c) {
         c.attr_ints("shape", {3, -1});
       },
       "[3, 4]",
       {},
       4},
  };
  run_cases(cases, Requirements::kUnchecked);
  FakeContext two_minus_one("Reshape", {ffact("4"), ints({"-1", "-1"})});
  EXPECT_FALSE(two_minus_one.run().ok());
}

TEST(ShapeOps, ReshapeRequiresTheElementCount) {
  FakeContext ctx("Reshape", {ffact("a, 4"), ints({"b", "4"})});
  ctx.range("a", 1, 9).range("b", 1, 9);
  ASSERT_TRUE(ctx.run().ok());
  ASSERT_EQ(ctx.requirements.size(), 1u);
  EXPECT_EQ(ctx.requirements[0], "4*a == 4*b");
}

TEST(ShapeOps, SliceNegativeClampedAndStepped) {
  const std::string kMax = "9223372036854775807";
  const std::vector<SetupCase> cases = {
      {"tail from -2",
       "Slice",
       {ffact("b, s"), ints({"-2"}), ints({kMax}), ints({"1"})},
       [](FakeContext& c) { c.range("s", 2, 64); },
       "[b, 2]"},
      {"start 1 to end",
       "Slice",
       {ffact("b, s"), ints({"1"}), ints({kMax}), ints({"1"})},
       [](FakeContext& c) { c.range("s", 1, 64); },
       "[b, s-1]"},
      {"clamped end", "Slice", {ffact("10, 4"), ints({"2"}), ints({"100"})}, none, "[8, 4]"},
      {"step 2",
       "Slice",
       {ffact("10, 4"), ints({"1"}), ints({"10"}), ints({"0"}), ints({"2"})},
       none,
       "[5, 4]"},
      {"negative step reverses",
       "Slice",
       {ffact("7"), ints({"-1"}), ints({"-" + kMax}), ints({"0"}), ints({"-1"})},
       none,
       "[7]"},
      {"negative step with stride",
       "Slice",
       {ffact("10"), ints({"8"}), ints({"1"}), ints({"0"}), ints({"-3"})},
       none,
       "[3]"},
      {"empty when start past end", "Slice", {ffact("10"), ints({"8"}), ints({"2"})}, none, "[0]"},
      {"values of a shape vector",
       "Slice",
       {ints({"b", "s", "8"}), ints({"1"}), ints({"3"})},
       none,
       "[2] = (s, 8)"},
      {"symbolic end",
       "Slice",
       {ffact("t, 4"), ints({"0"}), ints({"p"}), ints({"0"})},
       [](FakeContext& c) { c.range("t", 1, 64).range("p", 1, 64); },
       "[min(p,t), 4]"},
      {"opset 9 attributes",
       "Slice",
       {ffact("b, 10")},
       [](FakeContext& c) {
         c.attr_ints("starts", {2}).attr_ints("ends", {-1}).attr_ints("axes", {1});
       },
       "[b, 7]",
       {},
       9},
  };
  run_cases(cases, Requirements::kUnchecked);
}

// A small int64 tensor of constant dims with known values, at any rank.
TensorFact valued(const std::string& dims, std::vector<std::string> values) {
  TensorFact f = fact(DT::kInt64, dims);
  std::vector<sym::SymExpr> v;
  for (const auto& x : values) v.push_back(e(x));
  f.value = std::move(v);
  return f;
}

// torch's F.pad export carries the pads through a [n, 2] matrix: Reshape to rows, Slice with
// step -1 over them, Transpose, Reshape back. Values of any rank survive the rearranging ops.
TEST(ShapeOps, RearrangingOpsCarryValuesAboveRankOne) {
  const std::string kMax = "9223372036854775807";
  const std::vector<SetupCase> cases = {
      {"reshape to rows",
       "Reshape",
       {ints({"0", "0", "0", "p", "0", "q"}), ints({"-1", "2"})},
       none,
       "[3, 2] = (0, 0, 0, p, 0, q)"},
      {"reverse the rows",
       "Slice",
       {valued("3, 2", {"0", "0", "0", "p", "0", "q"}), ints({"-1"}), ints({"-" + kMax}),
        ints({"0"}), ints({"-1"})},
       none,
       "[3, 2] = (0, q, 0, p, 0, 0)"},
      {"slice both axes",
       "Slice",
       {valued("3, 3", {"1", "2", "3", "4", "5", "6", "7", "8", "9"}), ints({"1", "2"}),
        ints({"3", "-" + kMax}), ints({"0", "1"}), ints({"1", "-2"})},
       none,
       "[2, 2] = (6, 4, 9, 7)"},
      {"transpose",
       "Transpose",
       {valued("3, 2", {"0", "q", "0", "p", "0", "0"})},
       [](FakeContext& c) {
         c.attr_ints("perm", {1, 0});
       },
       "[2, 3] = (0, 0, 0, q, p, 0)"},
      {"transpose 3-D",
       "Transpose",
       {valued("2, 1, 3", {"a", "b", "c", "d", "e", "f"})},
       [](FakeContext& c) {
         c.attr_ints("perm", {2, 0, 1});
       },
       "[3, 2, 1] = (a, d, b, e, c, f)"},
      {"reshape back",
       "Reshape",
       {valued("2, 3", {"0", "0", "0", "q", "p", "0"}), ints({"-1"})},
       none,
       "[6] = (0, 0, 0, q, p, 0)"},
      {"unsqueeze keeps order",
       "Unsqueeze",
       {ints({"a", "b"}), ints({"0"})},
       none,
       "[1, 2] = (a, b)"},
      {"squeeze keeps order",
       "Squeeze",
       {valued("1, 2", {"a", "b"}), ints({"0"})},
       none,
       "[2] = (a, b)"},
      // Inputs read as lists are 1-D: a [2, 2] value there is no list (the model is invalid).
      {"a matrix is no shape",
       "Reshape",
       {ffact("4"), valued("2, 2", {"2", "2", "1", "1"})},
       none,
       "<unknown rank>"},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(ShapeOps, SqueezeAndUnsqueezeAcrossOpsets) {
  const std::vector<SetupCase> cases = {
      {"squeeze 11 attr",
       "Squeeze",
       {ffact("1, b, 1")},
       [](FakeContext& c) { c.attr_ints("axes", {-1}); },
       "[1, b]",
       {},
       11},
      {"squeeze 13 input", "Squeeze", {ffact("1, b, 1"), ints({"0"})}, none, "[b, 1]", {}, 13},
      {"squeeze all ones",
       "Squeeze",
       {ffact("1, b, 1")},
       [](FakeContext& c) { c.range("b", 2, 8); },
       "[b]",
       {},
       13},
      {"squeeze maybe-one stays unknown",
       "Squeeze",
       {ffact("1, b")},
       [](FakeContext& c) { c.range("b", 1, 8); },
       "<unknown rank>",
       {},
       13},
      {"unsqueeze 11 attr",
       "Unsqueeze",
       {ffact("b, s")},
       [](FakeContext& c) {
         c.attr_ints("axes", {0, 3});
       },
       "[1, b, s, 1]",
       {},
       11},
      {"unsqueeze 13 input negative",
       "Unsqueeze",
       {ffact("b, s"), ints({"-1"})},
       none,
       "[b, s, 1]",
       {},
       13},
      {"unsqueeze scalar value",
       "Unsqueeze",
       {ints({"s"}, true), ints({"0"})},
       none,
       "[1] = (s)",
       {},
       13},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(ShapeOps, ConcatSplitExpandTileTranspose) {
  const std::vector<SetupCase> cases = {
      {"concat dims",
       "Concat",
       {ffact("b, past, 32"), ffact("b, s, 32")},
       [](FakeContext& c) { c.attr_i("axis", -2); },
       "[b, past+s, 32]"},
      {"concat values",
       "Concat",
       {ints({"b"}), ints({"s", "4"})},
       [](FakeContext& c) { c.attr_i("axis", 0); },
       "[3] = (b, s, 4)"},
      {"split equal",
       "Split",
       {ffact("b, 96")},
       [](FakeContext& c) { c.attr_i("axis", 1); },
       "[b, 32]",
       {},
       17,
       3},
      {"split sizes 13",
       "Split",
       {ffact("b, 10"), ints({"3", "7"})},
       [](FakeContext& c) { c.attr_i("axis", 1); },
       "[b, 3]",
       {},
       17,
       2},
      {"expand",
       "Expand",
       {ffact("1, s, 1"), ints({"b", "1", "4"})},
       [](FakeContext& c) { c.range("b", 1, 8).range("s", 1, 8); },
       "[b, s, 4]"},
      {"tile", "Tile", {ffact("b, 3"), ints({"2", "s"})}, none, "[2*b, 3*s]"},
      {"transpose perm",
       "Transpose",
       {ffact("b, s, h, d")},
       [](FakeContext& c) {
         c.attr_ints("perm", {0, 2, 1, 3});
       },
       "[b, h, s, d]"},
      {"transpose default reverses", "Transpose", {ffact("a, b, c")}, none, "[c, b, a]"},
      {"flatten",
       "Flatten",
       {ffact("b, c, h, w")},
       [](FakeContext& c) { c.attr_i("axis", 2); },
       "[b*c, h*w]"},
      {"pad 11", "Pad", {ffact("b, h"), ints({"0", "1", "0", "2"})}, none, "[b, h+3]", {}, 11},
  };
  run_cases(cases, Requirements::kUnchecked);
  FakeContext split("Split", {ffact("b, 10"), ints({"3", "7"})}, 2);
  split.attr_i("axis", 1);
  ASSERT_TRUE(split.run().ok());
  EXPECT_EQ(split.out_str(1), "[b, 7]");
}

TEST(ShapeOps, ConstantOfShapeAndRange) {
  const std::vector<SetupCase> cases = {
      {"constant of shape", "ConstantOfShape", {ints({"b", "s"})}, none, "[b, s]"},
      {"constant of shape values", "ConstantOfShape", {ints({"3"})}, none, "[3] = (0, 0, 0)"},
      {"range symbolic",
       "Range",
       {ints({"past"}, true), ints({"past+s"}, true), ints({"1"}, true)},
       [](FakeContext& c) { c.range("s", 0, 64); },
       "[s]"},
      {"range values",
       "Range",
       {ints({"0"}, true), ints({"4"}, true), ints({"1"}, true)},
       none,
       "[4] = (0, 1, 2, 3)"},
      {"range negative step",
       "Range",
       {ints({"10"}, true), ints({"1"}, true), ints({"-3"}, true)},
       none,
       "[3] = (10, 7, 4)"},
      {"range unknown limit",
       "Range",
       {ints({"0"}, true), fact(DT::kInt64, ""), ints({"1"}, true)},
       none,
       "[Range_0.out0.d0]"},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(ShapeOps, GatherAndDataDependentOps) {
  const std::vector<SetupCase> cases = {
      {"gather axis 1",
       "Gather",
       {ffact("b, s, 64"), fact(DT::kInt64, "k")},
       [](FakeContext& c) { c.attr_i("axis", 1); },
       "[b, k, 64]"},
      {"gather shape value",
       "Gather",
       {ints({"b", "s", "8"}), ints({"-2"}, true)},
       none,
       "[] = (s)"},
      {"gather embedding",
       "Gather",
       {ffact("1000, 128"), fact(DT::kInt64, "b, s")},
       none,
       "[b, s, 128]"},
      {"nonzero", "NonZero", {fact(DT::kBool, "b, 4")}, none, "[2, NonZero_0.out0.d1]"},
      {"topk known k", "TopK", {ffact("b, 100"), ints({"10"})}, none, "[b, 10]", {}, 17, 2},
      {"topk unknown k",
       "TopK",
       {ffact("b, 100"), fact(DT::kInt64, "1")},
       none,
       "[b, TopK_0.out0.d1]",
       {},
       17,
       2},
      {"nms",
       "NonMaxSuppression",
       {ffact("1, n, 4"), ffact("1, 3, n")},
       none,
       "[NonMaxSuppression_0.out0.d0, 3]"},
  };
  run_cases(cases, Requirements::kUnchecked);
  FakeContext nz("NonZero", {fact(DT::kBool, "b, 4")});
  nz.range("b", 1, 16);
  ASSERT_TRUE(nz.run().ok());
  EXPECT_EQ(nz.ranges().get(sym::symbol("NonZero_0.out0.d1")).hi, 64);  // at most numel
}

TEST(ShapeOps, ConstantValues) {
  Tensor t("c", DT::kInt64, {2}, [] {
    std::vector<uint8_t> b(16);
    const int64_t v[2] = {-1, 7};
    std::memcpy(b.data(), v, 16);
    return b;
  }());
  FakeContext ctx("Constant", {});
  Attribute a = FakeContext::named("value", AttributeType::kTensor);
  a.t = t;
  ctx.attr(std::move(a));
  ASSERT_TRUE(ctx.run().ok());
  EXPECT_EQ(ctx.out_str(), "[2] = (-1, 7)");
  FakeContext scalar("Constant", {});
  scalar.attr_i("value_int", 5);
  ASSERT_TRUE(scalar.run().ok());
  EXPECT_EQ(scalar.out_str(), "[] = (5)");
}

}  // namespace
}  // namespace sod2::testing

// Shape-computing and rearranging ops: the rules that carry shape values, where a wrong dim would
// silently corrupt everything downstream.
#include <gtest/gtest.h>

#include "fake_context.h"

namespace sod2::testing {
namespace {

using DT = DataType;

struct Case {
  std::string name;
  std::function<FakeContext()> make;
  std::string expected;  // output 0 as TensorFact::to_string()
};

void run_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    FakeContext ctx = c.make();
    Status st = ctx.run();
    ASSERT_TRUE(st.ok()) << c.name << ": " << st.message();
    EXPECT_EQ(ctx.out_str(), c.expected) << c.name;
  }
}

TEST(ShapeOps, ShapeAndSizeCarryValues) {
  run_cases({
      {"shape", [] { return FakeContext("Shape", {ffact("b, s, 8")}); }, "[3] = (b, s, 8)"},
      {"shape start/end (15)",
       [] { return std::move(FakeContext("Shape", {ffact("b, s, 8")}, 1, 15).attr_i("start", -2)); },
       "[2] = (s, 8)"},
      {"shape end clamps",
       [] { return std::move(FakeContext("Shape", {ffact("b, s")}, 1, 15).attr_i("end", 10)); },
       "[2] = (b, s)"},
      {"size", [] { return FakeContext("Size", {ffact("b, s, 8")}); }, "[] = (8*b*s)"},
      {"shape of unknown dims", [] { return FakeContext("Shape", {ffact("b, ?")}); }, "[2]"},
  });
}

TEST(ShapeOps, ReshapeZerosMinusOneAndAllowzero) {
  run_cases({
      {"-1 infers", [] { return FakeContext("Reshape", {ffact("b, s, 8"), ints({"0", "-1", "4"})}); },
       "[b, 2*s, 4]"},
      {"0 copies", [] { return FakeContext("Reshape", {ffact("b, s, 8"), ints({"0", "0", "2", "4"})}); },
       "[b, s, 2, 4]"},
      {"symbolic request", [] { return std::move(FakeContext("Reshape", {ffact("b, s, 8"), ints({"b", "8*s"})}).range("b", 1, 8).range("s", 1, 64)); },
       "[b, 8*s]"},
      {"allowzero keeps 0",
       [] { return std::move(FakeContext("Reshape", {ffact("0, 8"), ints({"0", "4", "2"})}, 1, 14).attr_i("allowzero", 1)); },
       "[0, 4, 2]"},
      {"allowzero off copies 0",
       [] { return FakeContext("Reshape", {ffact("3, 8"), ints({"0", "4", "2"})}, 1, 14); },
       "[3, 4, 2]"},
      {"unknown request: execution dims",
       [] { return FakeContext("Reshape", {ffact("b, 8"), fact(DT::kInt64, "2")}); },
       "[Reshape_0.out0.d0, Reshape_0.out0.d1]"},
      {"opset 1 attribute",
       [] { return std::move(FakeContext("Reshape", {ffact("2, 6")}, 1, 4).attr_ints("shape", {3, -1})); },
       "[3, 4]"},
  });
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
  run_cases({
      {"tail from -2", [&] { return std::move(FakeContext("Slice", {ffact("b, s"), ints({"-2"}), ints({kMax}), ints({"1"})}).range("s", 2, 64)); },
       "[b, 2]"},
      {"start 1 to end", [&] { return std::move(FakeContext("Slice", {ffact("b, s"), ints({"1"}), ints({kMax}), ints({"1"})}).range("s", 1, 64)); },
       "[b, s-1]"},
      {"clamped end", [] { return FakeContext("Slice", {ffact("10, 4"), ints({"2"}), ints({"100"})}); }, "[8, 4]"},
      {"step 2", [] { return FakeContext("Slice", {ffact("10, 4"), ints({"1"}), ints({"10"}), ints({"0"}), ints({"2"})}); },
       "[5, 4]"},
      {"negative step reverses", [&] { return FakeContext("Slice", {ffact("7"), ints({"-1"}), ints({"-" + kMax}), ints({"0"}), ints({"-1"})}); },
       "[7]"},
      {"negative step with stride", [] { return FakeContext("Slice", {ffact("10"), ints({"8"}), ints({"1"}), ints({"0"}), ints({"-3"})}); },
       "[3]"},
      {"empty when start past end", [] { return FakeContext("Slice", {ffact("10"), ints({"8"}), ints({"2"})}); }, "[0]"},
      {"values of a shape vector", [] { return FakeContext("Slice", {ints({"b", "s", "8"}), ints({"1"}), ints({"3"})}); },
       "[2] = (s, 8)"},
      {"symbolic end", [] { return std::move(FakeContext("Slice", {ffact("t, 4"), ints({"0"}), ints({"p"}), ints({"0"})}).range("t", 1, 64).range("p", 1, 64)); },
       "[min(p,t), 4]"},
      {"opset 9 attributes", [] {
         return std::move(FakeContext("Slice", {ffact("b, 10")}, 1, 9).attr_ints("starts", {2}).attr_ints("ends", {-1}).attr_ints("axes", {1}));
       }, "[b, 7]"},
  });
}

TEST(ShapeOps, SqueezeAndUnsqueezeAcrossOpsets) {
  run_cases({
      {"squeeze 11 attr", [] { return std::move(FakeContext("Squeeze", {ffact("1, b, 1")}, 1, 11).attr_ints("axes", {-1})); }, "[1, b]"},
      {"squeeze 13 input", [] { return FakeContext("Squeeze", {ffact("1, b, 1"), ints({"0"})}, 1, 13); }, "[b, 1]"},
      {"squeeze all ones", [] { return std::move(FakeContext("Squeeze", {ffact("1, b, 1")}, 1, 13).range("b", 2, 8)); }, "[b]"},
      {"squeeze maybe-one stays unknown", [] { return std::move(FakeContext("Squeeze", {ffact("1, b")}, 1, 13).range("b", 1, 8)); }, "<unknown rank>"},
      {"unsqueeze 11 attr", [] { return std::move(FakeContext("Unsqueeze", {ffact("b, s")}, 1, 11).attr_ints("axes", {0, 3})); }, "[1, b, s, 1]"},
      {"unsqueeze 13 input negative", [] { return FakeContext("Unsqueeze", {ffact("b, s"), ints({"-1"})}, 1, 13); }, "[b, s, 1]"},
      {"unsqueeze scalar value", [] { return FakeContext("Unsqueeze", {ints({"s"}, true), ints({"0"})}, 1, 13); }, "[1] = (s)"},
  });
}

TEST(ShapeOps, ConcatSplitExpandTileTranspose) {
  run_cases({
      {"concat dims", [] { return std::move(FakeContext("Concat", {ffact("b, past, 32"), ffact("b, s, 32")}).attr_i("axis", -2)); },
       "[b, past+s, 32]"},
      {"concat values", [] { return std::move(FakeContext("Concat", {ints({"b"}), ints({"s", "4"})}).attr_i("axis", 0)); },
       "[3] = (b, s, 4)"},
      {"split equal", [] { return std::move(FakeContext("Split", {ffact("b, 96")}, 3).attr_i("axis", 1)); }, "[b, 32]"},
      {"split sizes 13", [] { return std::move(FakeContext("Split", {ffact("b, 10"), ints({"3", "7"})}, 2).attr_i("axis", 1)); }, "[b, 3]"},
      {"expand", [] { return std::move(FakeContext("Expand", {ffact("1, s, 1"), ints({"b", "1", "4"})}).range("b", 1, 8).range("s", 1, 8)); }, "[b, s, 4]"},
      {"tile", [] { return FakeContext("Tile", {ffact("b, 3"), ints({"2", "s"})}); }, "[2*b, 3*s]"},
      {"transpose perm", [] { return std::move(FakeContext("Transpose", {ffact("b, s, h, d")}).attr_ints("perm", {0, 2, 1, 3})); }, "[b, h, s, d]"},
      {"transpose default reverses", [] { return FakeContext("Transpose", {ffact("a, b, c")}); }, "[c, b, a]"},
      {"flatten", [] { return std::move(FakeContext("Flatten", {ffact("b, c, h, w")}).attr_i("axis", 2)); }, "[b*c, h*w]"},
      {"pad 11", [] { return FakeContext("Pad", {ffact("b, h"), ints({"0", "1", "0", "2"})}, 1, 11); }, "[b, h+3]"},
  });
  FakeContext split("Split", {ffact("b, 10"), ints({"3", "7"})}, 2);
  split.attr_i("axis", 1);
  ASSERT_TRUE(split.run().ok());
  EXPECT_EQ(split.out_str(1), "[b, 7]");
}

TEST(ShapeOps, ConstantOfShapeAndRange) {
  run_cases({
      {"constant of shape", [] { return FakeContext("ConstantOfShape", {ints({"b", "s"})}); }, "[b, s]"},
      {"constant of shape values", [] { return FakeContext("ConstantOfShape", {ints({"3"})}); }, "[3] = (0, 0, 0)"},
      {"range symbolic", [] { return std::move(FakeContext("Range", {ints({"past"}, true), ints({"past+s"}, true), ints({"1"}, true)}).range("s", 0, 64)); },
       "[s]"},
      {"range values", [] { return FakeContext("Range", {ints({"0"}, true), ints({"4"}, true), ints({"1"}, true)}); }, "[4] = (0, 1, 2, 3)"},
      {"range negative step", [] { return FakeContext("Range", {ints({"10"}, true), ints({"1"}, true), ints({"-3"}, true)}); }, "[3] = (10, 7, 4)"},
      {"range unknown limit", [] { return FakeContext("Range", {ints({"0"}, true), fact(DT::kInt64, ""), ints({"1"}, true)}); },
       "[Range_0.out0.d0]"},
  });
}

TEST(ShapeOps, GatherAndDataDependentOps) {
  run_cases({
      {"gather axis 1", [] { return std::move(FakeContext("Gather", {ffact("b, s, 64"), fact(DT::kInt64, "k")}).attr_i("axis", 1)); },
       "[b, k, 64]"},
      {"gather shape value", [] { return FakeContext("Gather", {ints({"b", "s", "8"}), ints({"-2"}, true)}); }, "[] = (s)"},
      {"gather embedding", [] { return FakeContext("Gather", {ffact("1000, 128"), fact(DT::kInt64, "b, s")}); }, "[b, s, 128]"},
      {"nonzero", [] { return FakeContext("NonZero", {fact(DT::kBool, "b, 4")}); }, "[2, NonZero_0.out0.d1]"},
      {"topk known k", [] { return FakeContext("TopK", {ffact("b, 100"), ints({"10"})}, 2); }, "[b, 10]"},
      {"topk unknown k", [] { return FakeContext("TopK", {ffact("b, 100"), fact(DT::kInt64, "1")}, 2); }, "[b, TopK_0.out0.d1]"},
      {"nms", [] { return FakeContext("NonMaxSuppression", {ffact("1, n, 4"), ffact("1, 3, n")}); }, "[NonMaxSuppression_0.out0.d0, 3]"},
  });
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

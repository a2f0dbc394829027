// Shape rules of the ops opsets 18-23 added or changed: Reduce* with an axes input, Split
// num_outputs, Pad axes, CenterCropPad, Col2Im, DeformConv, AffineGrid, DFT-20's axis input and
// Attention.
#include <gtest/gtest.h>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

TEST(Opset18Ops, ReduceAxesInputAndNoop) {
  const std::vector<SetupCase> cases = {
      {"mean over axis 1",
       "ReduceMean",
       {ffact("b, s, 8"), ints({"1"})},
       none,
       "[b, 1, 8]",
       {},
       18},
      {"max keepdims 0",
       "ReduceMax",
       {ffact("b, s, 8"), ints({"-1", "0"})},
       [](FakeContext& c) { c.attr_i("keepdims", 0); },
       "[s]",
       {},
       18},
      {"noop without axes",
       "ReduceL2",
       {ffact("b, s")},
       [](FakeContext& c) { c.attr_i("noop_with_empty_axes", 1); },
       "[b, s]",
       {},
       18},
      {"all axes without the input", "ReduceProd", {ffact("b, s")}, none, "[1, 1]", {}, 18},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(Opset18Ops, SplitNumOutputsRoundsUp) {
  const std::vector<SetupCase> cases = {
      {"7 into 3",
       "Split",
       {ffact("2, 7")},
       [](FakeContext& c) { c.attr_i("axis", 1).attr_i("num_outputs", 3); },
       {"[2, 3]", "[2, 3]", "[2, 1]"},
       {},
       18},
      {"symbolic",
       "Split",
       {ffact("n, 4")},
       [](FakeContext& c) { c.attr_i("num_outputs", 2); },
       {"[floordiv(n+1,2), 4]", "[n-floordiv(n+1,2), 4]"},
       {},
       18},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(Opset18Ops, PadAxesAndNewOps) {
  const std::vector<SetupCase> cases = {
      {"pad named axis",
       "Pad",
       {ffact("b, s, 4"), ints({"1", "2"}), ffact(""), ints({"-1"})},
       none,
       "[b, s, 7]",
       {},
       18},
      {"center crop/pad",
       "CenterCropPad",
       {ffact("b, 5, 4"), ints({"2", "7"})},
       [](FakeContext& c) {
         c.attr_ints("axes", {1, 2});
       },
       "[b, 2, 7]",
       {},
       18},
      {"col2im",
       "Col2Im",
       {ffact("b, 12, 12"), ints({"5", "6"}), ints({"2", "3"})},
       none,
       "[b, 2, 5, 6]",
       {},
       18},
      {"affine grid 2-D",
       "AffineGrid",
       {ffact("n, 2, 3"), ints({"n", "3", "h", "w"})},
       none,
       "[n, h, w, 2]",
       {},
       20},
      {"dft axis input",
       "DFT",
       {ffact("b, 16, 2"), ints({"8"}, true), ints({"1"}, true)},
       none,
       "[b, 8, 2]",
       {},
       20},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(Opset18Ops, AttentionShapes) {
  const std::vector<SetupCase> cases = {
      {"4-D",
       "Attention",
       {ffact("b, 8, s, 64"), ffact("b, 2, t, 64"), ffact("b, 2, t, 32")},
       none,
       "[b, 8, s, 32]",
       {},
       23},
      {"3-D",
       "Attention",
       {ffact("b, s, 512"), ffact("b, t, 128"), ffact("b, t, 128")},
       [](FakeContext& c) { c.attr_i("q_num_heads", 8).attr_i("kv_num_heads", 2); },
       "[b, s, 512]",
       {},
       23},
      {"present",
       "Attention",
       {ffact("b, 8, s, 64"), ffact("b, 2, t, 64"), ffact("b, 2, t, 64"), ffact(""),
        ffact("b, 2, p, 64"), ffact("b, 2, p, 64")},
       [](FakeContext& c) { c.omit_input(3); },
       {"[b, 8, s, 64]", "[b, 2, p+t, 64]", "[b, 2, p+t, 64]"},
       {},
       23},
      {"qk_matmul_output with a past",
       "Attention",
       {ffact("b, 8, s, 64"), ffact("b, 2, t, 64"), ffact("b, 2, t, 32"), ffact(""),
        ffact("b, 2, p, 64"), ffact("b, 2, p, 32")},
       [](FakeContext& c) { c.omit_input(3); },
       {"[b, 8, s, 32]", "[b, 2, p+t, 64]", "[b, 2, p+t, 32]", "[b, 8, s, p+t]"},
       {},
       23},
      {"qk_matmul_output, 3-D",
       "Attention",
       {ffact("b, s, 512"), ffact("b, t, 128"), ffact("b, t, 128")},
       [](FakeContext& c) { c.attr_i("q_num_heads", 8).attr_i("kv_num_heads", 2); },
       {"[b, s, 512]", "[b, 2, t, 64]", "[b, 2, t, 64]", "[b, 8, s, t]"},
       {},
       23},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(Opset18Ops, DeformConvSlidesLikeConv) {
  const std::vector<SetupCase> cases = {
      {"groups, pads, strides, dilations",
       "DeformConv",
       {ffact("n, 4, h, w"), ffact("6, 2, 3, 3"), ffact("n, 36, ?, ?"), ffact("6"),
        ffact("n, 18, ?, ?")},
       [](FakeContext& c) {
         c.attr_i("group", 2).attr_i("offset_group", 2);
         c.attr_ints("pads", {2, 1, 2, 1}).attr_ints("strides", {2, 1});
         c.attr_ints("dilations", {2, 1});
       },
       "[n, 6, floordiv(h+1,2), w]",
       {},
       19},
      {"output dims from offset when X's are unknown",
       "DeformConv",
       {ffact("n, 3, ?, ?"), ffact("5, 3, 2, 2"), ffact("n, 8, p, q")},
       none,
       "[n, 5, p, q]",
       {},
       19},
      {"offset's dims must be the output's",
       "DeformConv",
       {ffact("1, 3, h, w"), ffact("5, 3, 1, 1"), ffact("1, 2, p, w")},
       none,
       "[1, 5, h, w]",
       {"h == p"},
       19},
  };
  run_cases(cases, Requirements::kChecked);
}

TEST(Opset18Ops, DeformConvChecksOffsetAndMaskChannels) {
  FakeContext ctx("DeformConv",
                  {ffact("1, 4, 8, 8"), ffact("2, 4, 3, 3"), ffact("1, 17, 6, 6"), ffact("2"),
                   ffact("1, 9, 6, 6")},
                  1, 19);
  ASSERT_TRUE(ctx.run().ok());
  EXPECT_EQ(ctx.requirements, (std::vector<std::string>{"17 == 18"}));
  expect_invalid_model(
      {{"DeformConv", {ffact("1, 4, 8, 8"), ffact("2, 4, 3, 3"), ffact("1, 18, 6")}, {}, 19}},
      "offset must have the rank of X");
}

// Col2Im's image_shape of a declared length 2^40 (values unknown): one output dim was pushed per
// value, 2^40 of them, at import.
TEST(Opset18Ops, Col2ImRefusesAHugeImageShapeLength) {
  expect_invalid_model(
      {{"Col2Im", {ffact("b, 12, 12"), ffact("1099511627776"), ffact("2")}, {}, 18}},
      "image_shape has 1099511627776 values");
}

}  // namespace
}  // namespace sod2::testing

#include <gtest/gtest.h>

#include <cmath>

#include "core/sym/evaluate.h"
#include "rule_cases.h"

namespace sod2::testing {
namespace {

class ConvPoolTest : public ::testing::TestWithParam<SetupCase> {};

TEST_P(ConvPoolTest, Output) { run_case(GetParam()); }

auto attrs(std::vector<std::pair<std::string, std::vector<int64_t>>> a, std::string pad = "",
           std::string range_sym = "", std::vector<int64_t> range = {}) {
  return [=](FakeContext& c) {
    for (const auto& [k, v] : a) {
      if (k == "group" || k == "ceil_mode" || k == "blocksize" || k == "output_height" ||
          k == "output_width" || k == "count_include_pad" || k == "storage_order")
        c.attr_i(k, v[0]);
      else
        c.attr_ints(k, v);
    }
    if (!pad.empty()) c.attr_s("auto_pad", pad);
    if (!range_sym.empty()) c.range(range_sym, range[0], range[1], range.size() > 2 ? range[2] : 1);
  };
}

INSTANTIATE_TEST_SUITE_P(
    Conv, ConvPoolTest,
    ::testing::Values(
        SetupCase{"Same3x3",
                  "Conv",
                  {ffact("n, 3, h, w"), ffact("8, 3, 3, 3")},
                  attrs({{"pads", {1, 1, 1, 1}}}),
                  "[n, 8, h, w]"},
        SetupCase{"Stride2Pad1",
                  "Conv",
                  {ffact("n, 3, h, w"), ffact("16, 3, 3, 3")},
                  attrs({{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}}, "", "h", {32, 1024, 32}),
                  "[n, 16, floordiv(h,2), floordiv(w+1,2)]"},
        SetupCase{"Dilated",
                  "Conv",
                  {ffact("1, 4, h, 20"), ffact("4, 4, 3, 3")},
                  attrs({{"dilations", {2, 2}}}),
                  "[1, 4, h-4, 16]"},
        SetupCase{"AsymmetricPads",
                  "Conv",
                  {ffact("1, 1, h, w"), ffact("2, 1, 3, 3")},
                  attrs({{"pads", {0, 1, 2, 0}}}),
                  "[1, 2, h, w-1]"},
        SetupCase{"KernelFromAttr",
                  "Conv",
                  {ffact("1, 1, 10, 10"), ffact("2, 1, ?, ?")},
                  attrs({{"kernel_shape", {5, 5}}}),
                  "[1, 2, 6, 6]"},
        SetupCase{"SameUpperStride2",
                  "Conv",
                  {ffact("n, 3, h, w"), ffact("8, 3, 3, 3")},
                  attrs({{"strides", {2, 2}}}, "SAME_UPPER", "h", {32, 1024, 32}),
                  "[n, 8, floordiv(h,2), floordiv(w+1,2)]"},
        SetupCase{"SameUpperStride32",
                  "Conv",
                  {ffact("n, 3, h, w"), ffact("8, 3, 7, 7")},
                  attrs({{"strides", {32, 32}}}, "SAME_UPPER", "h", {32, 1024, 32}),
                  "[n, 8, floordiv(h,32), floordiv(w+31,32)]"},
        SetupCase{"SameLowerStride3",
                  "Conv",
                  {ffact("n, 3, 9, 10"), ffact("8, 3, 3, 3")},
                  attrs({{"strides", {3, 3}}}, "SAME_LOWER"),
                  "[n, 8, 3, 4]"},
        SetupCase{"ValidStride2",
                  "Conv",
                  {ffact("n, 3, h, 11"), ffact("8, 3, 3, 3")},
                  attrs({{"strides", {2, 2}}}, "VALID", "h", {32, 1024, 32}),
                  "[n, 8, floordiv(h,2)-1, 5]"},
        SetupCase{"Conv1D",
                  "Conv",
                  {ffact("b, 80, t"), ffact("256, 80, 5")},
                  attrs({{"pads", {2, 2}}}),
                  "[b, 256, t]"},
        SetupCase{"Conv3D",
                  "Conv",
                  {ffact("1, 2, d, 8, 8"), ffact("4, 2, 3, 3, 3")},
                  attrs({{"strides", {1, 2, 2}}}),
                  "[1, 4, d-2, 3, 3]"},
        SetupCase{"Depthwise",
                  "Conv",
                  {ffact("n, 32, h, w"), ffact("32, 1, 3, 3"), ffact("32")},
                  attrs({{"group", {32}}, {"pads", {1, 1, 1, 1}}}),
                  "[n, 32, h, w]"},
        SetupCase{"GroupedChannelRequirement",
                  "Conv",
                  {ffact("n, c, h, w"), ffact("64, 16, 1, 1")},
                  attrs({{"group", {4}}}),
                  "[n, 64, h, w]",
                  {"c == 64"}},
        SetupCase{"SymbolicKernel",
                  "Conv",
                  {ffact("1, 3, h, w"), ffact("8, 3, k, k")},
                  none,
                  "[1, 8, h-k+1, w-k+1]"},
        SetupCase{"RankFromWOnly",
                  "Conv",
                  {TensorFact::unknown(DataType::kFloat), ffact("8, 3, 3, 3")},
                  none,
                  "[?, 8, ?, ?]"},
        SetupCase{"NothingKnown",
                  "Conv",
                  {TensorFact::unknown(DataType::kFloat), TensorFact::unknown(DataType::kFloat)},
                  none,
                  "<unknown rank>"},
        SetupCase{"ConvInteger",
                  "ConvInteger",
                  {fact(DataType::kUint8, "1, 3, 8, 8"), fact(DataType::kUint8, "4, 3, 3, 3")},
                  none,
                  "[1, 4, 6, 6]"},
        SetupCase{"QLinearConv",
                  "QLinearConv",
                  {fact(DataType::kUint8, "n, 3, h, w"), ffact(""), fact(DataType::kUint8, ""),
                   fact(DataType::kUint8, "8, 3, 3, 3"), ffact(""), fact(DataType::kUint8, ""),
                   ffact(""), fact(DataType::kUint8, ""), fact(DataType::kInt32, "8")},
                  attrs({{"pads", {1, 1, 1, 1}}}),
                  "[n, 8, h, w]"},
        SetupCase{"TransposeStride2",
                  "ConvTranspose",
                  {ffact("n, 16, h, w"), ffact("16, 8, 4, 4")},
                  attrs({{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}),
                  "[n, 8, 2*h, 2*w]"},
        SetupCase{"TransposeOutputPadding",
                  "ConvTranspose",
                  {ffact("n, 16, h, w"), ffact("16, 8, 3, 3")},
                  attrs({{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}}),
                  "[n, 8, 2*h, 2*w]"},
        SetupCase{"TransposeGroupDilation",
                  "ConvTranspose",
                  {ffact("1, 4, 5, 5"), ffact("4, 2, 3, 3")},
                  attrs({{"group", {2}}, {"dilations", {2, 2}}}),
                  "[1, 4, 9, 9]"},
        SetupCase{"TransposeOutputShape",
                  "ConvTranspose",
                  {ffact("n, 16, h, w"), ffact("16, 8, 3, 3")},
                  attrs({{"strides", {2, 2}}, {"output_shape", {64, 48}}}),
                  "[n, 8, 64, 48]"},
        SetupCase{"TransposeOutputShapeWithNC",
                  "ConvTranspose",
                  {ffact("n, 16, h, w"), ffact("16, 8, 3, 3")},
                  attrs({{"output_shape", {1, 8, 64, 48}}}),
                  "[n, 8, 64, 48]"},
        SetupCase{"TransposeSameUpper",
                  "ConvTranspose",
                  {ffact("n, 16, h, w"), ffact("16, 8, 3, 3")},
                  attrs({{"strides", {2, 2}}}, "SAME_UPPER"),
                  "[n, 8, 2*h, 2*w]"},
        SetupCase{"TransposeSameStrideBeyondKernelUnknown",
                  "ConvTranspose",
                  {ffact("n, 16, h, w"), ffact("16, 8, 1, 1")},
                  attrs({{"strides", {4, 4}}}, "SAME_LOWER"),
                  "[n, 8, ?, ?]"},
        SetupCase{"TransposeValid",
                  "ConvTranspose",
                  {ffact("n, 16, h, 7"), ffact("16, 8, 3, 3")},
                  attrs({{"strides", {2, 2}}}, "VALID"),
                  "[n, 8, 2*h+1, 15]"},
        SetupCase{"TransposeChannels",
                  "ConvTranspose",
                  {ffact("n, c, h, w"), ffact("16, 8, 1, 1")},
                  none,
                  "[n, 8, h, w]",
                  {"c == 16"}}),
    case_name);

INSTANTIATE_TEST_SUITE_P(
    Pool, ConvPoolTest,
    ::testing::Values(
        SetupCase{"MaxPool2x2",
                  "MaxPool",
                  {ffact("n, c, h, w")},
                  attrs({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}, "", "h", {32, 1024, 32}),
                  "[n, c, floordiv(h,2), floordiv(w,2)]"},
        SetupCase{"MaxPoolFloor",
                  "MaxPool",
                  {ffact("1, 1, 6, 7")},
                  attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}}),
                  "[1, 1, 2, 3]"},
        SetupCase{"MaxPoolCeil",
                  "MaxPool",
                  {ffact("1, 1, 6, 7")},
                  attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", {1}}}),
                  "[1, 1, 3, 3]"},
        SetupCase{"MaxPoolCeilIgnoredBefore10",
                  "MaxPool",
                  {ffact("1, 1, 6, 7")},
                  attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", {1}}}),
                  "[1, 1, 2, 3]",
                  {},
                  8},
        SetupCase{
            "MaxPoolCeilLastWindowDropped",
            "MaxPool",
            {ffact("1, 1, 5")},
            attrs({{"kernel_shape", {2}}, {"strides", {2}}, {"pads", {1, 1}}, {"ceil_mode", {1}}}),
            "[1, 1, 3]"},
        SetupCase{"MaxPoolCeilSymbolicEven",
                  "MaxPool",
                  {ffact("n, c, h")},
                  attrs({{"kernel_shape", {3}}, {"strides", {2}}, {"ceil_mode", {1}}}, "", "h",
                        {32, 1024, 32}),
                  "[n, c, floordiv(h,2)]"},
        SetupCase{"MaxPoolResNetStem",
                  "MaxPool",
                  {ffact("n, 64, h, w")},
                  attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}, "",
                        "h", {64, 1024, 64}),
                  "[n, 64, floordiv(h,2), floordiv(w+1,2)]"},
        SetupCase{"MaxPoolDilated",
                  "MaxPool",
                  {ffact("1, 1, 10")},
                  attrs({{"kernel_shape", {3}}, {"dilations", {3}}}),
                  "[1, 1, 4]"},
        SetupCase{"MaxPoolSameUpper",
                  "MaxPool",
                  {ffact("1, 1, h, 9")},
                  attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}}, "SAME_UPPER"),
                  "[1, 1, floordiv(h+1,2), 5]"},
        SetupCase{"MaxPoolSameDilatedUnknown",
                  "MaxPool",
                  {ffact("1, 1, 9")},
                  attrs({{"kernel_shape", {3}}, {"dilations", {2}}}, "SAME_LOWER"),
                  "[1, 1, ?]"},
        SetupCase{"MaxPoolValid",
                  "MaxPool",
                  {ffact("1, 1, h")},
                  attrs({{"kernel_shape", {3}}, {"strides", {2}}}, "VALID"),
                  "[1, 1, floordiv(h+1,2)-1]"},
        SetupCase{"MaxPool3D",
                  "MaxPool",
                  {ffact("1, 1, 4, 8, 8")},
                  attrs({{"kernel_shape", {2, 2, 2}}, {"strides", {2, 2, 2}}}),
                  "[1, 1, 2, 4, 4]"},
        SetupCase{"MaxPoolUnknownRankFromKernel",
                  "MaxPool",
                  {TensorFact::unknown(DataType::kFloat)},
                  attrs({{"kernel_shape", {2, 2}}}),
                  "[?, ?, ?, ?]"},
        SetupCase{
            "AveragePoolCountIncludePad",
            "AveragePool",
            {ffact("n, c, h, w")},
            attrs({{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}, {"count_include_pad", {1}}}),
            "[n, c, h, w]"},
        SetupCase{"AveragePoolCeil",
                  "AveragePool",
                  {ffact("1, 1, 6")},
                  attrs({{"kernel_shape", {3}}, {"strides", {2}}, {"ceil_mode", {1}}}),
                  "[1, 1, 3]"},
        SetupCase{"AveragePoolCeilIgnoredBefore10",
                  "AveragePool",
                  {ffact("1, 1, 6")},
                  attrs({{"kernel_shape", {3}}, {"strides", {2}}, {"ceil_mode", {1}}}),
                  "[1, 1, 2]",
                  {},
                  7},
        SetupCase{"LpPool",
                  "LpPool",
                  {ffact("1, 2, 8, 8")},
                  attrs({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}),
                  "[1, 2, 4, 4]"},
        SetupCase{
            "GlobalAveragePool", "GlobalAveragePool", {ffact("n, c, h, w")}, none, "[n, c, 1, 1]"},
        SetupCase{"GlobalMaxPool1D", "GlobalMaxPool", {ffact("n, c, t")}, none, "[n, c, 1]"},
        SetupCase{
            "GlobalLpPool3D", "GlobalLpPool", {ffact("n, c, d, h, w")}, none, "[n, c, 1, 1, 1]"},
        SetupCase{"GlobalPoolUnknownRank",
                  "GlobalMaxPool",
                  {TensorFact::unknown(DataType::kFloat)},
                  none,
                  "<unknown rank>"},
        SetupCase{"MaxRoiPool",
                  "MaxRoiPool",
                  {ffact("n, 256, h, w"), ffact("r, 5")},
                  attrs({{"pooled_shape", {7, 7}}}),
                  "[r, 256, 7, 7]"},
        SetupCase{"RoiAlign",
                  "RoiAlign",
                  {ffact("n, 256, h, w"), ffact("r, 4"), fact(DataType::kInt64, "r")},
                  attrs({{"output_height", {14}}, {"output_width", {7}}}),
                  "[r, 256, 14, 7]"},
        SetupCase{"RoiAlignDefaults",
                  "RoiAlign",
                  {ffact("n, 256, h, w"), ffact("?, 4"), fact(DataType::kInt64, "r")},
                  none,
                  "[r, 256, 1, 1]"},
        SetupCase{"MaxUnpoolComputed",
                  "MaxUnpool",
                  {ffact("n, c, h, w"), fact(DataType::kInt64, "n, c, h, w")},
                  attrs({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}),
                  "[n, c, 2*h, 2*w]"},
        SetupCase{"MaxUnpoolPads",
                  "MaxUnpool",
                  {ffact("1, 1, 3"), fact(DataType::kInt64, "1, 1, 3")},
                  attrs({{"kernel_shape", {3}}, {"strides", {2}}, {"pads", {1, 0}}}),
                  "[1, 1, 6]"},
        SetupCase{"MaxUnpoolOutputShapeValue",
                  "MaxUnpool",
                  {ffact("n, c, h, w"), fact(DataType::kInt64, "n, c, h, w"),
                   ints({"n", "c", "2*h+1", "2*w"})},
                  attrs({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}),
                  "[n, c, 2*h+1, 2*w]"},
        SetupCase{"MaxUnpoolOutputShapeUnknown",
                  "MaxUnpool",
                  {ffact("n, c, h, w"), fact(DataType::kInt64, "n, c, h, w"),
                   fact(DataType::kInt64, "4")},
                  attrs({{"kernel_shape", {2, 2}}}),
                  "[MaxUnpool_0.out0.d0, MaxUnpool_0.out0.d1, MaxUnpool_0.out0.d2, "
                  "MaxUnpool_0.out0.d3]"},
        SetupCase{"DepthToSpace",
                  "DepthToSpace",
                  {ffact("n, 64, h, w")},
                  attrs({{"blocksize", {4}}}),
                  "[n, 4, 4*h, 4*w]"},
        SetupCase{"DepthToSpaceSymbolicChannels",
                  "DepthToSpace",
                  {ffact("n, 4*c, h, w")},
                  attrs({{"blocksize", {2}}}),
                  "[n, c, 2*h, 2*w]"},
        SetupCase{"SpaceToDepth",
                  "SpaceToDepth",
                  {ffact("n, 3, 2*h, 2*w")},
                  attrs({{"blocksize", {2}}}),
                  "[n, 12, h, w]"},
        SetupCase{"GridSample",
                  "GridSample",
                  {ffact("n, c, h, w"), ffact("n, 32, 48, 2")},
                  none,
                  "[n, c, 32, 48]"},
        SetupCase{"GridSampleBatchFromGrid",
                  "GridSample",
                  {ffact("?, 3, h, w"), ffact("b, ho, wo, 2")},
                  none,
                  "[b, 3, ho, wo]"},
        SetupCase{"GridSample5D",
                  "GridSample",
                  {ffact("n, c, d, h, w"), ffact("n, 4, 5, 6, 3")},
                  none,
                  "[n, c, 4, 5, 6]"}),
    case_name);

TEST(ConvPoolTest, MaxPoolIndicesOutput) {
  FakeContext ctx("MaxPool", {ffact("n, c, h, w")}, 2);
  ctx.attr_ints("kernel_shape", {2, 2}).attr_ints("strides", {2, 2}).attr_i("storage_order", 1);
  ASSERT_TRUE(ctx.run().ok());
  EXPECT_EQ(ctx.out_str(1), ctx.out_str(0));
  EXPECT_EQ(ctx.out(1).dtype, DataType::kInt64);
  EXPECT_EQ(ctx.out(0).dtype, DataType::kFloat);
}

TEST(ConvPoolTest, Dtypes) {
  FakeContext ci("ConvInteger",
                 {fact(DataType::kUint8, "1, 3, 8, 8"), fact(DataType::kUint8, "4, 3, 3, 3")});
  ASSERT_TRUE(ci.run().ok());
  EXPECT_EQ(ci.out().dtype, DataType::kInt32);
  FakeContext q("QLinearConv",
                {fact(DataType::kUint8, "1, 3, 8, 8"), ffact(""), fact(DataType::kUint8, ""),
                 fact(DataType::kInt8, "4, 3, 3, 3"), ffact(""), fact(DataType::kInt8, ""),
                 ffact(""), fact(DataType::kInt8, "")});
  ASSERT_TRUE(q.run().ok());
  EXPECT_EQ(q.out().dtype, DataType::kInt8);
}

TEST(ConvPoolTest, Errors) {
  auto code = [](FakeContext c) { return c.run().code(); };
  EXPECT_EQ(code(FakeContext("Conv", {ffact("1, 3"), ffact("8, 3, 3, 3")})),
            StatusCode::kInvalidModel);
  EXPECT_EQ(code(FakeContext("Conv", {ffact("1, 3, 8, 8, 8"), ffact("8, 3, 3, 3")})),
            StatusCode::kInvalidModel);
  FakeContext strides("Conv", {ffact("1, 3, 8, 8"), ffact("8, 3, 3, 3")});
  strides.attr_ints("strides", {2, 2, 2});
  EXPECT_EQ(strides.run().code(), StatusCode::kInvalidModel);
  FakeContext zero_stride("Conv", {ffact("1, 3, 8, 8"), ffact("8, 3, 3, 3")});
  zero_stride.attr_ints("strides", {0, 1});
  EXPECT_EQ(zero_stride.run().code(), StatusCode::kInvalidModel);
  FakeContext pads("Conv", {ffact("1, 3, 8, 8"), ffact("8, 3, 3, 3")});
  pads.attr_ints("pads", {1, 1});
  EXPECT_EQ(pads.run().code(), StatusCode::kInvalidModel);
  FakeContext auto_pad("Conv", {ffact("1, 3, 8, 8"), ffact("8, 3, 3, 3")});
  auto_pad.attr_s("auto_pad", "SAME");
  EXPECT_EQ(auto_pad.run().code(), StatusCode::kInvalidModel);
  EXPECT_EQ(code(FakeContext("MaxPool", {ffact("1, 3, 8, 8")})), StatusCode::kInvalidModel);
  FakeContext group("Conv", {ffact("1, 3, 8, 8"), ffact("8, 3, 3, 3")});
  group.attr_i("group", 0);
  EXPECT_EQ(group.run().code(), StatusCode::kInvalidModel);
  FakeContext out_shape("ConvTranspose", {ffact("1, 3, 8, 8"), ffact("3, 3, 3, 3")});
  out_shape.attr_ints("output_shape", {1, 2, 3});
  EXPECT_EQ(out_shape.run().code(), StatusCode::kInvalidModel);
  FakeContext d2s("DepthToSpace", {ffact("1, 3, 8")});
  d2s.attr_i("blocksize", 2);
  EXPECT_EQ(d2s.run().code(), StatusCode::kInvalidModel);
  FakeContext unpool("MaxUnpool",
                     {ffact("1, 1, 4, 4"), ffact("1, 1, 4, 4"), ints({"1", "1", "8"})});
  unpool.attr_ints("kernel_shape", {2, 2});
  EXPECT_EQ(unpool.run().code(), StatusCode::kInvalidModel);
}

// ONNX Runtime's pool output size (pool_attributes.h) in plain integers, for comparison.
int64_t ort_pool_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                     bool ceil_mode) {
  const int64_t num = in + pb + pe - d * (k - 1) - 1;
  int64_t out = num / s + 1;
  if (ceil_mode) {
    out = static_cast<int64_t>(std::ceil(static_cast<float>(num) / static_cast<float>(s))) + 1;
    if ((out - 1) * s >= in + pb) --out;
  }
  return out;
}

// Every formula the rule builds, evaluated over the whole range, against the reference.
TEST(ConvPoolTest, PoolFormulaMatchesOnnxRuntimeEverywhere) {
  for (int64_t k : {1, 2, 3, 5})
    for (int64_t s : {1, 2, 3})
      for (int64_t d : {1, 2})
        for (int64_t pb : {0, 1, 2})
          for (int64_t pe : {0, 1, 2, 4})
            for (bool ceil_mode : {false, true}) {
              if (pb >= k || pe > 2 * k) continue;
              FakeContext ctx("MaxPool", {ffact("1, 1, h")});
              ctx.attr_ints("kernel_shape", {k}).attr_ints("strides", {s});
              ctx.attr_ints("dilations", {d}).attr_ints("pads", {pb, pe});
              ctx.attr_i("ceil_mode", ceil_mode).range("h", 1, 64);
              ASSERT_TRUE(ctx.run().ok());
              const sym::SymExpr out = *(*ctx.out().dims)[2];
              for (int64_t h = 1; h <= 64; ++h) {
                if (h + pb + pe - d * (k - 1) - 1 < 0) continue;  // no full window: invalid
                auto got = sym::evaluate(out, {{sym::symbol("h"), h}});
                ASSERT_TRUE(got.ok());
                EXPECT_EQ(*got, ort_pool_out(h, k, s, d, pb, pe, ceil_mode))
                    << "k=" << k << " s=" << s << " d=" << d << " pads=" << pb << "," << pe
                    << " ceil=" << ceil_mode << " h=" << h << " expr=" << out.to_string();
              }
            }
}

TEST(ConvPoolTest, SameFormulaMatchesOnnxRuntimeEverywhere) {
  for (int64_t k : {1, 2, 3, 4})
    for (int64_t s : {1, 2, 3, 4})
      for (const char* pad : {"SAME_UPPER", "SAME_LOWER"}) {
        FakeContext ctx("Conv", {ffact("1, 1, h"), ffact("1, 1, ?")});
        ctx.attr_ints("kernel_shape", {k}).attr_ints("strides", {s}).attr_s("auto_pad", pad);
        ctx.range("h", 1, 64);
        ASSERT_TRUE(ctx.run().ok());
        const sym::SymExpr out = *(*ctx.out().dims)[2];
        for (int64_t h = 1; h <= 64; ++h) {
          // ONNX Runtime's conv: pad to (ceil(h/s)-1)*s + k - h, then slide.
          const int64_t target = (h + s - 1) / s;
          const int64_t pad_needed = (target - 1) * s + k - h;
          const int64_t want = (h + pad_needed - k) / s + 1;
          EXPECT_EQ(*sym::evaluate(out, {{sym::symbol("h"), h}}), want) << out.to_string();
        }
      }
}

TEST(ConvPoolTest, Registry) {
  const auto& r = OpRegistry::standard();
  for (const char* op :
       {"Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool",
        "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "MaxRoiPool", "RoiAlign",
        "DepthToSpace", "SpaceToDepth", "GridSample"}) {
    const OpSpec* spec = r.find(op, 17);
    ASSERT_NE(spec, nullptr) << op;
    EXPECT_EQ(spec->op_class, OpClass::kISDOS) << op;
    EXPECT_TRUE(spec->value_inputs.empty()) << op;
  }
  const OpSpec* unpool = r.find("MaxUnpool", 11);
  ASSERT_NE(unpool, nullptr);
  EXPECT_EQ(unpool->op_class, OpClass::kISVDOS);
  EXPECT_EQ(unpool->value_inputs, std::vector<int>{2});
  EXPECT_EQ(r.find("MaxPool", 9)->since, 8);
  EXPECT_EQ(r.find("MaxPool", 12)->since, 10);
}

}  // namespace
}  // namespace sod2::testing

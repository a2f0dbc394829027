#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

TensorFact scalar(const std::string& v) { return ints({v}, true); }
TensorFact unknown_scalar() { return fact(DataType::kInt64, ""); }

TEST(MiscOps, Random) {
  const std::vector<RuleCase> cases = {
      {"normal", "RandomNormal", {}, {"float32 [2, 3]"}, {ais("shape", {2, 3})}, 1},
      {"uniform double",
       "RandomUniform",
       {},
       {"float64 [4]"},
       {ais("shape", {4}), ai("dtype", 11)},
       1},
      {"normal like", "RandomNormalLike", {ffact("n, 3")}, {"float32 [n, 3]"}, {}, 1},
      {"uniform like with dtype",
       "RandomUniformLike",
       {ffact("n, 3")},
       {"float64 [n, 3]"},
       {ai("dtype", 11)},
       1},
      {"bernoulli", "Bernoulli", {ffact("n, 3")}, {"float32 [n, 3]"}, {}, 15},
      {"multinomial", "Multinomial", {ffact("b, 10")}, {"int32 [b, 5]"}, {ai("sample_size", 5)}, 7},
      {"multinomial int64 default size",
       "Multinomial",
       {ffact("b, 10")},
       {"int64 [b, 1]"},
       {ai("dtype", 7)},
       7},
      {"eyelike", "EyeLike", {fact(DataType::kInt32, "n, m")}, {"int32 [n, m]"}, {}, 9},
      {"eyelike dtype", "EyeLike", {ffact("4, 4")}, {"int64 [4, 4]"}, {ai("dtype", 7)}, 9},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(MiscOps, WindowsAndMel) {
  const std::vector<RuleCase> cases = {
      {"hann of a known size", "HannWindow", {scalar("n")}, {"float32 [n]"}},
      {"hamming of a constant",
       "HammingWindow",
       {scalar("400")},
       {"float32 [400]"},
       {ai("periodic", 0)}},
      {"blackman unknown size",
       "BlackmanWindow",
       {unknown_scalar()},
       {"float32 [BlackmanWindow_0.out0.d0]"}},
      {"window dtype", "HannWindow", {scalar("8")}, {"float64 [8]"}, {ai("output_datatype", 11)}},
      {"mel",
       "MelWeightMatrix",
       {scalar("80"), scalar("512"), scalar("16000"), ffact(""), ffact("")},
       {"float32 [257, 80]"}},
      {"mel symbolic",
       "MelWeightMatrix",
       {scalar("m"), scalar("d"), scalar("16000"), ffact(""), ffact("")},
       {"float32 [floordiv(d,2)+1, m]"}},
      {"mel unknown",
       "MelWeightMatrix",
       {unknown_scalar(), unknown_scalar(), scalar("16000"), ffact(""), ffact("")},
       {"float32 [MelWeightMatrix_0.out0.d0, MelWeightMatrix_0.out0.d1]"}},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(MiscOps, DftStft) {
  const TensorFact signal = ffact("b, n, 1");
  const std::vector<RuleCase> cases = {
      {"dft real to complex", "DFT", {signal}, {"float32 [b, n, 2]"}},
      {"dft onesided", "DFT", {signal}, {"float32 [b, floordiv(n,2)+1, 2]"}, {ai("onesided", 1)}},
      {"dft length", "DFT", {signal, scalar("512")}, {"float32 [b, 512, 2]"}},
      {"dft unknown length", "DFT", {signal, unknown_scalar()}, {"float32 [b, DFT_0.out0.d1, 2]"}},
      {"dft 2-D signal, axis 2",
       "DFT",
       {ffact("b, h, w, 2")},
       {"float32 [b, h, w, 2]"},
       {ai("axis", 2)}},
      {"dft negative axis",
       "DFT",
       {ffact("b, h, w, 2")},
       {"float32 [b, h, floordiv(w,2)+1, 2]"},
       {ai("axis", -2), ai("onesided", 1)}},
      {"dft unknown rank",
       "DFT",
       {TensorFact::unknown(DataType::kFloat)},
       {"float32 <unknown rank>"}},
      {"stft with frame_length",
       "STFT",
       {ffact("b, 16000, 1"), scalar("160"), ffact("400"), scalar("400")},
       {"float32 [b, 98, 201, 2]"}},
      {"stft window gives the frame length",
       "STFT",
       {ffact("b, l, 1"), scalar("160"), ffact("400")},
       {"float32 [b, floordiv(l+80,160)-2, 201, 2]"},
       {ai("onesided", 1)},
       17,
       {{"l", 400, 160000}}},
      {"stft two-sided",
       "STFT",
       {ffact("b, 1000, 2"), scalar("100"), ffact("200")},
       {"float32 [b, 9, 200, 2]"},
       {ai("onesided", 0)}},
      {"stft unknown step",
       "STFT",
       {ffact("b, 1000, 1"), unknown_scalar(), ffact("200")},
       {"float32 [b, STFT_0.out0.d1, 101, 2]"}},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(MiscOps, Quantization) {
  const std::vector<RuleCase> cases = {
      {"quantize default uint8",
       "QuantizeLinear",
       {ffact("n, 3"), ffact("")},
       {"uint8 [n, 3]"},
       {},
       13},
      {"quantize to int8",
       "QuantizeLinear",
       {ffact("n, 3"), ffact(""), fact(DataType::kInt8, "")},
       {"int8 [n, 3]"},
       {},
       13},
      {"dequantize",
       "DequantizeLinear",
       {fact(DataType::kInt8, "n, 3"), ffact("3"), fact(DataType::kInt8, "3")},
       {"float32 [n, 3]"},
       {ai("axis", 1)},
       13},
      {"dynamic quantize",
       "DynamicQuantizeLinear",
       {ffact("n, 3")},
       {"uint8 [n, 3]", "float32 []", "uint8 []"},
       {},
       11},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(MiscOps, StringsAndText) {
  const std::vector<RuleCase> cases = {
      {"normalizer without stopwords keeps the shape",
       "StringNormalizer",
       {fact(DataType::kString, "c")},
       {"string [c]"},
       {},
       10},
      {"stopwords make the length an execution dim",
       "StringNormalizer",
       {fact(DataType::kString, "1, c")},
       {"string [1, StringNormalizer_0.out0.d1]"},
       {astrs("stopwords", {"a", "the"})},
       10},
      {"tfidf 1-D",
       "TfIdfVectorizer",
       {fact(DataType::kInt32, "c")},
       {"float32 [7]"},
       {ais("ngram_indexes", {0, 6, 2})},
       9},
      {"tfidf 2-D",
       "TfIdfVectorizer",
       {fact(DataType::kInt32, "n, c")},
       {"float32 [n, 3]"},
       {ais("ngram_indexes", {0, 1, 2})},
       9},
  };
  run_cases(cases, Requirements::kUnchecked);

  FakeContext ctx("StringNormalizer", {fact(DataType::kString, "c")}, 1, 10);
  ctx.attr(astrs("stopwords", {"a"})).range("c", 2, 50);
  ASSERT_TRUE(ctx.run().ok());
  const sym::SymbolRange r = ctx.ranges().get(sym::symbol("StringNormalizer_0.out0.d0"));
  EXPECT_EQ(r.lo, 1);
  EXPECT_EQ(r.hi, 50);
}

TEST(MiscOps, Optionals) {
  FakeContext wrap("Optional", {ffact("n, 3")}, 1, 15);
  ASSERT_TRUE(wrap.run().ok());
  EXPECT_EQ(wrap.out().category, TypeCategory::kOptional);
  ASSERT_NE(wrap.out().element, nullptr);
  EXPECT_EQ(wrap.out_str(), "optional of [n, 3]");

  FakeContext get("OptionalGetElement", {wrap.out()}, 1, 15);
  ASSERT_TRUE(get.run().ok());
  EXPECT_EQ(describe(get.out()), "float32 [n, 3]");

  FakeContext has("OptionalHasElement", {wrap.out()}, 1, 15);
  ASSERT_TRUE(has.run().ok());
  EXPECT_EQ(describe(has.out()), "bool []");

  FakeContext none("Optional", {}, 1, 15);
  ASSERT_TRUE(none.run().ok());
  EXPECT_EQ(none.out().category, TypeCategory::kOptional);
  EXPECT_EQ(none.out().element, nullptr);
  FakeContext get_none("OptionalGetElement", {none.out()}, 1, 15);
  ASSERT_TRUE(get_none.run().ok());
  EXPECT_EQ(get_none.out_str(), "<unknown rank>");
}

TEST(MiscOps, Errors) {
  const std::vector<BadCase> bad = {
      {"RandomNormal", {}, {}},
      {"RandomUniform", {}, {ais("shape", {2, -1})}},
      {"EyeLike", {ffact("3")}, {}},
      {"DFT", {ffact("b, n, 1")}, {ai("axis", 2)}},
      {"DFT", {ffact("b, n, 1")}, {ai("axis", 3)}},
      {"TfIdfVectorizer", {ffact("3")}, {}},
  };
  expect_invalid_model(bad);
}

TEST(MiscOps, Registry) {
  const OpRegistry& r = OpRegistry::standard();
  const std::vector<std::tuple<const char*, OpClass, std::vector<int>>> expected = {
      {"RandomNormal", OpClass::kISDOS, {}},
      {"EyeLike", OpClass::kISDO, {}},
      {"HannWindow", OpClass::kISVDOS, {0}},
      {"MelWeightMatrix", OpClass::kISVDOS, {0, 1}},
      {"DFT", OpClass::kISVDOS, {1}},
      {"STFT", OpClass::kISVDOS, {1, 3}},
      {"StringNormalizer", OpClass::kEDO, {}},
      {"TfIdfVectorizer", OpClass::kISDOS, {}},
      {"OptionalHasElement", OpClass::kISDOS, {}},
      {"DynamicQuantizeLinear", OpClass::kISDOS, {}},
  };
  for (const auto& [op, cls, vin] : expected) {
    const OpSpec* s = r.find(op, 17);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, cls) << op;
    EXPECT_EQ(s->value_inputs, vin) << op;
  }
}

}  // namespace
}  // namespace sod2::testing

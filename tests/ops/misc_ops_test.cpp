#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "fake_context.h"

namespace sod2::testing {
namespace {

Attribute ai(std::string n, int64_t v) {
  Attribute a;
  a.name = std::move(n);
  a.type = AttributeType::kInt;
  a.i = v;
  return a;
}
Attribute ais(std::string n, std::vector<int64_t> v) {
  Attribute a;
  a.name = std::move(n);
  a.type = AttributeType::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute astrs(std::string n, std::vector<std::string> v) {
  Attribute a;
  a.name = std::move(n);
  a.type = AttributeType::kStrings;
  a.strings = std::move(v);
  return a;
}

std::string describe(const TensorFact& f) {
  return std::string(data_type_name(f.dtype)) + " " + f.to_string();
}

struct Case {
  std::string name;
  std::string op;
  std::vector<TensorFact> in;
  std::vector<std::string> out;
  std::vector<Attribute> attrs = {};
  int64_t opset = 17;
  std::vector<std::tuple<std::string, int64_t, int64_t>> ranges = {};
};

void run_case(const Case& c) {
  SCOPED_TRACE(c.name);
  FakeContext ctx(c.op, c.in, c.out.size(), c.opset);
  for (const Attribute& a : c.attrs) ctx.attr(a);
  for (const auto& [s, lo, hi] : c.ranges) ctx.range(s, lo, hi);
  const Status st = ctx.run();
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (size_t i = 0; i < c.out.size(); ++i)
    EXPECT_EQ(describe(ctx.out(i)), c.out[i]) << "output " << i;
}

TensorFact of(DataType dt, const std::string& dims) { return fact(dt, dims); }
TensorFact scalar(const std::string& v) { return ints({v}, true); }
TensorFact unknown_scalar() { return fact(DataType::kInt64, ""); }

TEST(MiscOps, Random) {
  const std::vector<Case> cases = {
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
      {"eyelike", "EyeLike", {of(DataType::kInt32, "n, m")}, {"int32 [n, m]"}, {}, 9},
      {"eyelike dtype", "EyeLike", {ffact("4, 4")}, {"int64 [4, 4]"}, {ai("dtype", 7)}, 9},
  };
  for (const Case& c : cases) run_case(c);
}

TEST(MiscOps, WindowsAndMel) {
  const std::vector<Case> cases = {
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
  for (const Case& c : cases) run_case(c);
}

TEST(MiscOps, DftStft) {
  const TensorFact signal = ffact("b, n, 1");
  const std::vector<Case> cases = {
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
  for (const Case& c : cases) run_case(c);
}

TEST(MiscOps, Quantization) {
  const std::vector<Case> cases = {
      {"quantize default uint8",
       "QuantizeLinear",
       {ffact("n, 3"), ffact("")},
       {"uint8 [n, 3]"},
       {},
       13},
      {"quantize to int8",
       "QuantizeLinear",
       {ffact("n, 3"), ffact(""), of(DataType::kInt8, "")},
       {"int8 [n, 3]"},
       {},
       13},
      {"dequantize",
       "DequantizeLinear",
       {of(DataType::kInt8, "n, 3"), ffact("3"), of(DataType::kInt8, "3")},
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
  for (const Case& c : cases) run_case(c);
}

TEST(MiscOps, StringsAndText) {
  const std::vector<Case> cases = {
      {"normalizer without stopwords keeps the shape",
       "StringNormalizer",
       {of(DataType::kString, "c")},
       {"string [c]"},
       {},
       10},
      {"stopwords make the length an execution dim",
       "StringNormalizer",
       {of(DataType::kString, "1, c")},
       {"string [1, StringNormalizer_0.out0.d1]"},
       {astrs("stopwords", {"a", "the"})},
       10},
      {"tfidf 1-D",
       "TfIdfVectorizer",
       {of(DataType::kInt32, "c")},
       {"float32 [7]"},
       {ais("ngram_indexes", {0, 6, 2})},
       9},
      {"tfidf 2-D",
       "TfIdfVectorizer",
       {of(DataType::kInt32, "n, c")},
       {"float32 [n, 3]"},
       {ais("ngram_indexes", {0, 1, 2})},
       9},
  };
  for (const Case& c : cases) run_case(c);

  FakeContext ctx("StringNormalizer", {of(DataType::kString, "c")}, 1, 10);
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
  struct Bad {
    std::string op;
    std::vector<TensorFact> in;
    std::vector<Attribute> attrs;
  };
  const std::vector<Bad> bad = {
      {"RandomNormal", {}, {}},
      {"RandomUniform", {}, {ais("shape", {2, -1})}},
      {"EyeLike", {ffact("3")}, {}},
      {"DFT", {ffact("b, n, 1")}, {ai("axis", 2)}},
      {"DFT", {ffact("b, n, 1")}, {ai("axis", 3)}},
      {"TfIdfVectorizer", {ffact("3")}, {}},
  };
  for (const Bad& b : bad) {
    FakeContext ctx(b.op, b.in, 1, 17);
    for (const Attribute& a : b.attrs) ctx.attr(a);
    const Status st = ctx.run();
    EXPECT_EQ(st.code(), StatusCode::kInvalidModel) << b.op << ": " << st.to_string();
  }
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

#include <gtest/gtest.h>

#include "fake_context.h"

namespace sod2::testing {
namespace {

struct Case {
  std::string name;
  std::string op;
  std::vector<TensorFact> inputs;
  std::function<void(FakeContext&)> setup;
  std::vector<std::string> want;  // each output as printed
  std::vector<std::string> requirements = {};
  int64_t opset = 17;
};

class RecurrentTest : public ::testing::TestWithParam<Case> {};

TEST_P(RecurrentTest, Outputs) {
  const Case& c = GetParam();
  FakeContext ctx(c.op, c.inputs, c.want.size(), c.opset);
  if (c.setup) c.setup(ctx);
  const Status st = ctx.run();
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (size_t i = 0; i < c.want.size(); ++i) EXPECT_EQ(ctx.out_str(i), c.want[i]) << "output " << i;
  EXPECT_EQ(ctx.requirements, c.requirements);
}

void none(FakeContext&) {}
auto bidir_hidden(int64_t hidden, int64_t layout = -1) {
  return [=](FakeContext& c) {
    c.attr_s("direction", "bidirectional").attr_i("hidden_size", hidden);
    if (layout >= 0) c.attr_i("layout", layout);
  };
}
TensorFact omitted() { return TensorFact::unknown(DataType::kFloat); }

INSTANTIATE_TEST_SUITE_P(
    Rules, RecurrentTest,
    ::testing::Values(Case{"LstmBidirectionalLayout0",
                           "LSTM",
                           {ffact("s, b, 64"), ffact("2, 512, 64"), ffact("2, 512, 128")},
                           bidir_hidden(128),
                           {"[s, 2, b, 128]", "[2, b, 128]", "[2, b, 128]"}},
                      Case{"LstmBidirectionalLayout1",
                           "LSTM",
                           {ffact("b, s, 64"), ffact("2, 512, 64"), ffact("2, 512, 128")},
                           bidir_hidden(128, 1),
                           {"[b, s, 2, 128]", "[b, 2, 128]", "[b, 2, 128]"}},
                      Case{"LstmLayoutIgnoredBefore14",
                           "LSTM",
                           {ffact("s, b, 64"), ffact("2, 512, 64"), ffact("2, 512, 128")},
                           bidir_hidden(128, 1),
                           {"[s, 2, b, 128]", "[2, b, 128]", "[2, b, 128]"},
                           {},
                           13},
                      Case{"LstmHiddenFromR",
                           "LSTM",
                           {ffact("s, b, 10"), ffact("1, 80, 10"), ffact("1, 80, 20")},
                           none,
                           {"[s, 1, b, 20]", "[1, b, 20]", "[1, b, 20]"}},
                      Case{"LstmOnlyY",
                           "LSTM",
                           {ffact("s, b, 10"), ffact("1, 80, 10"), ffact("1, 80, 20")},
                           none,
                           {"[s, 1, b, 20]"}},
                      Case{"GruHiddenFromW",
                           "GRU",
                           {ffact("s, b, 16"), ffact("1, 96, 16"), omitted()},
                           [](FakeContext& c) { c.attr_s("direction", "reverse"); },
                           {"[s, 1, b, 32]", "[1, b, 32]"}},
                      Case{"GruLayout1",
                           "GRU",
                           {ffact("b, s, 16"), ffact("1, 96, 16"), ffact("1, 96, 32")},
                           [](FakeContext& c) { c.attr_i("layout", 1); },
                           {"[b, s, 1, 32]", "[b, 1, 32]"}},
                      Case{"RnnForward",
                           "RNN",
                           {ffact("s, b, 8"), ffact("1, 4, 8"), ffact("1, 4, 4")},
                           [](FakeContext& c) { c.attr_i("hidden_size", 4); },
                           {"[s, 1, b, 4]", "[1, b, 4]"}},
                      Case{"BatchFromSequenceLens",
                           "RNN",
                           {ffact("s, ?, 8"), ffact("1, 4, 8"), ffact("1, 4, 4"), omitted(),
                            fact(DataType::kInt32, "n")},
                           none,
                           {"[s, 1, n, 4]", "[1, n, 4]"}},
                      Case{"BatchFromInitialH",
                           "GRU",
                           {ffact("s, ?, 8"), ffact("2, 12, 8"), ffact("2, 12, 4"), omitted(),
                            omitted(), ffact("2, n, 4")},
                           [](FakeContext& c) { c.attr_s("direction", "bidirectional"); },
                           {"[s, 2, n, 4]", "[2, n, 4]"}},
                      Case{"Requirements",
                           "LSTM",
                           {ffact("s, b, i"), ffact("d, 4*h, 16"), ffact("1, 4*h, h")},
                           none,
                           {"[s, 1, b, h]", "[1, b, h]", "[1, b, h]"},
                           {"d == 1", "i == 16"}},
                      Case{"HiddenAttrVsR",
                           "RNN",
                           {ffact("s, b, 8"), ffact("1, 4, 8"), ffact("1, 4, 5")},
                           [](FakeContext& c) { c.attr_i("hidden_size", 4); },
                           {"[s, 1, b, 4]"},
                           {"5 == 4"}},
                      Case{"UnknownInputsStayUnknown",
                           "LSTM",
                           {omitted(), omitted(), omitted()},
                           none,
                           {"[?, 1, ?, ?]", "[1, ?, ?]", "[1, ?, ?]"}},
                      Case{"ReverseSequence",
                           "ReverseSequence",
                           {ffact("t, b, 16"), fact(DataType::kInt64, "n")},
                           none,
                           {"[t, b, 16]"},
                           {"b == n"}},
                      Case{"ReverseSequenceBatchFirst",
                           "ReverseSequence",
                           {ffact("b, t, 16"), fact(DataType::kInt64, "b")},
                           [](FakeContext& c) { c.attr_i("batch_axis", 0).attr_i("time_axis", 1); },
                           {"[b, t, 16]"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(RecurrentTest, Errors) {
  FakeContext dir("LSTM", {ffact("s, b, 8"), ffact("1, 16, 8"), ffact("1, 16, 4")}, 3);
  dir.attr_s("direction", "sideways");
  EXPECT_EQ(dir.run().code(), StatusCode::kInvalidModel);
  FakeContext rank("GRU", {ffact("s, 8"), ffact("1, 12, 8"), ffact("1, 12, 4")}, 2);
  EXPECT_EQ(rank.run().code(), StatusCode::kInvalidModel);
  FakeContext layout("RNN", {ffact("s, b, 8"), ffact("1, 4, 8"), ffact("1, 4, 4")}, 2);
  layout.attr_i("layout", 2);
  EXPECT_EQ(layout.run().code(), StatusCode::kInvalidModel);
  FakeContext axes("ReverseSequence", {ffact("t, b, 16"), fact(DataType::kInt64, "b")});
  axes.attr_i("batch_axis", 2);
  EXPECT_EQ(axes.run().code(), StatusCode::kInvalidModel);
}

TEST(RecurrentTest, Registry) {
  const auto& r = OpRegistry::standard();
  for (const char* op : {"LSTM", "GRU", "RNN", "ReverseSequence"}) {
    const OpSpec* spec = r.find(op, 17);
    ASSERT_NE(spec, nullptr) << op;
    EXPECT_EQ(spec->op_class, OpClass::kISDOS) << op;
    EXPECT_TRUE(spec->value_inputs.empty()) << op;
  }
  EXPECT_EQ(r.find("LSTM", 13)->since, 1);
  EXPECT_EQ(r.find("LSTM", 14)->since, 14);
}

}  // namespace
}  // namespace sod2::testing

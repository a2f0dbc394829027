#include <gtest/gtest.h>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

class RecurrentTest : public ::testing::TestWithParam<SetupCase> {};

TEST_P(RecurrentTest, Outputs) { run_case(GetParam()); }

auto bidir_hidden(int64_t hidden, int64_t layout = -1) {
  return [=](FakeContext& c) {
    c.attr_s("direction", "bidirectional").attr_i("hidden_size", hidden);
    if (layout >= 0) c.attr_i("layout", layout);
  };
}
TensorFact omitted() { return TensorFact::unknown(DataType::kFloat); }

INSTANTIATE_TEST_SUITE_P(
    Rules, RecurrentTest,
    ::testing::Values(SetupCase{"LstmBidirectionalLayout0",
                                "LSTM",
                                {ffact("s, b, 64"), ffact("2, 512, 64"), ffact("2, 512, 128")},
                                bidir_hidden(128),
                                {"[s, 2, b, 128]", "[2, b, 128]", "[2, b, 128]"}},
                      SetupCase{"LstmBidirectionalLayout1",
                                "LSTM",
                                {ffact("b, s, 64"), ffact("2, 512, 64"), ffact("2, 512, 128")},
                                bidir_hidden(128, 1),
                                {"[b, s, 2, 128]", "[b, 2, 128]", "[b, 2, 128]"}},
                      SetupCase{"LstmLayoutIgnoredBefore14",
                                "LSTM",
                                {ffact("s, b, 64"), ffact("2, 512, 64"), ffact("2, 512, 128")},
                                bidir_hidden(128, 1),
                                {"[s, 2, b, 128]", "[2, b, 128]", "[2, b, 128]"},
                                {},
                                13},
                      SetupCase{"LstmHiddenFromR",
                                "LSTM",
                                {ffact("s, b, 10"), ffact("1, 80, 10"), ffact("1, 80, 20")},
                                none,
                                {"[s, 1, b, 20]", "[1, b, 20]", "[1, b, 20]"}},
                      SetupCase{"LstmOnlyY",
                                "LSTM",
                                {ffact("s, b, 10"), ffact("1, 80, 10"), ffact("1, 80, 20")},
                                none,
                                {"[s, 1, b, 20]"}},
                      SetupCase{"GruHiddenFromW",
                                "GRU",
                                {ffact("s, b, 16"), ffact("1, 96, 16"), omitted()},
                                [](FakeContext& c) { c.attr_s("direction", "reverse"); },
                                {"[s, 1, b, 32]", "[1, b, 32]"}},
                      SetupCase{"GruLayout1",
                                "GRU",
                                {ffact("b, s, 16"), ffact("1, 96, 16"), ffact("1, 96, 32")},
                                [](FakeContext& c) { c.attr_i("layout", 1); },
                                {"[b, s, 1, 32]", "[b, 1, 32]"}},
                      SetupCase{"RnnForward",
                                "RNN",
                                {ffact("s, b, 8"), ffact("1, 4, 8"), ffact("1, 4, 4")},
                                [](FakeContext& c) { c.attr_i("hidden_size", 4); },
                                {"[s, 1, b, 4]", "[1, b, 4]"}},
                      SetupCase{"BatchFromSequenceLens",
                                "RNN",
                                {ffact("s, ?, 8"), ffact("1, 4, 8"), ffact("1, 4, 4"), omitted(),
                                 fact(DataType::kInt32, "n")},
                                none,
                                {"[s, 1, n, 4]", "[1, n, 4]"}},
                      SetupCase{"BatchFromInitialH",
                                "GRU",
                                {ffact("s, ?, 8"), ffact("2, 12, 8"), ffact("2, 12, 4"), omitted(),
                                 omitted(), ffact("2, n, 4")},
                                [](FakeContext& c) { c.attr_s("direction", "bidirectional"); },
                                {"[s, 2, n, 4]", "[2, n, 4]"}},
                      SetupCase{"Requirements",
                                "LSTM",
                                {ffact("s, b, i"), ffact("d, 4*h, 16"), ffact("1, 4*h, h")},
                                none,
                                {"[s, 1, b, h]", "[1, b, h]", "[1, b, h]"},
                                {"d == 1", "i == 16"}},
                      SetupCase{"HiddenAttrVsR",
                                "RNN",
                                {ffact("s, b, 8"), ffact("1, 4, 8"), ffact("1, 4, 5")},
                                [](FakeContext& c) { c.attr_i("hidden_size", 4); },
                                {"[s, 1, b, 4]"},
                                {"5 == 4"}},
                      SetupCase{"UnknownInputsStayUnknown",
                                "LSTM",
                                {omitted(), omitted(), omitted()},
                                none,
                                {"[?, 1, ?, ?]", "[1, ?, ?]", "[1, ?, ?]"}},
                      SetupCase{"ReverseSequence",
                                "ReverseSequence",
                                {ffact("t, b, 16"), fact(DataType::kInt64, "n")},
                                none,
                                {"[t, b, 16]"},
                                {"b == n"}},
                      SetupCase{
                          "ReverseSequenceBatchFirst",
                          "ReverseSequence",
                          {ffact("b, t, 16"), fact(DataType::kInt64, "b")},
                          [](FakeContext& c) { c.attr_i("batch_axis", 0).attr_i("time_axis", 1); },
                          {"[b, t, 16]"}}),
    case_name);

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

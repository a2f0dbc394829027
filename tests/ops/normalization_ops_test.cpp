#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

const TensorFact kUnknown = TensorFact::unknown();

TEST(NormalizationOps, BatchNormalization) {
  const TensorFact x = ffact("n, 64, h, w"), c = ffact("64");
  const std::vector<RuleCase> cases = {
      {"inference", "BatchNormalization", {x, c, c, c, c}, {"float32 [n, 64, h, w]"}, {}, 15},
      {"training outputs opset 15",
       "BatchNormalization",
       {x, c, c, c, c},
       {"float32 [n, 64, h, w]", "float32 [64]", "float32 [64]"},
       {ai("training_mode", 1)},
       15},
      {"statistics of another type",
       "BatchNormalization",
       {fact(DataType::kFloat16, "n, 8"), fact(DataType::kFloat16, "8"),
        fact(DataType::kFloat16, "8"), ffact("8"), ffact("8")},
       {"float16 [n, 8]", "float32 [8]", "float32 [8]"},
       {ai("training_mode", 1)},
       15},
      {"opset 9 four statistics outputs",
       "BatchNormalization",
       {x, c, c, c, c},
       {"float32 [n, 64, h, w]", "float32 [64]", "float32 [64]", "float32 [64]", "float32 [64]"},
       {},
       9},
      {"C from X when the statistics are unknown",
       "BatchNormalization",
       {ffact("n, c, l"), kUnknown, kUnknown, kUnknown, kUnknown},
       {"float32 [n, c, l]", "float32 [c]", "float32 [c]"},
       {ai("training_mode", 1)},
       14},
      {"opset 6 non-spatial statistics",
       "BatchNormalization",
       {ffact("n, 3, 5"), ffact("3, 5"), ffact("3, 5"), ffact("3, 5"), ffact("3, 5")},
       {"float32 [n, 3, 5]", "float32 [3, 5]", "float32 [3, 5]", "float32 [3, 5]",
        "float32 [3, 5]"},
       {ai("spatial", 0)},
       6},
      {"non-spatial without statistics shapes stays unknown",
       "BatchNormalization",
       {ffact("n, 3, 5"), kUnknown, kUnknown, kUnknown, kUnknown},
       {"float32 [n, 3, 5]", "float32 <unknown rank>"},
       {ai("spatial", 0)},
       7},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(NormalizationOps, LayerNormalization) {
  const TensorFact x = ffact("b, s, 768"), g = ffact("768");
  const std::vector<RuleCase> cases = {
      {"axis -1",
       "LayerNormalization",
       {x, g, g},
       {"float32 [b, s, 768]", "float32 [b, s, 1]", "float32 [b, s, 1]"}},
      {"axis 1",
       "LayerNormalization",
       {x, ffact("s, 768")},
       {"float32 [b, s, 768]", "float32 [b, 1, 1]", "float32 [b, 1, 1]"},
       {ai("axis", 1)}},
      {"axis 0",
       "LayerNormalization",
       {x, ffact("b, s, 768")},
       {"float32 [b, s, 768]", "float32 [1, 1, 1]"},
       {ai("axis", 0)}},
      {"float16 input, float statistics",
       "LayerNormalization",
       {fact(DataType::kFloat16, "b, 4"), fact(DataType::kFloat16, "4")},
       {"float16 [b, 4]", "float32 [b, 1]", "float32 [b, 1]"}},
      {"stash type double",
       "LayerNormalization",
       {x, g},
       {"float32 [b, s, 768]", "float64 [b, s, 1]"},
       {ai("stash_type", 11)}},
      {"unknown rank",
       "LayerNormalization",
       {TensorFact::unknown(DataType::kFloat), g},
       {"float32 <unknown rank>", "float32 <unknown rank>"}},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(NormalizationOps, SameShape) {
  const std::vector<RuleCase> cases = {
      {"instance norm",
       "InstanceNormalization",
       {ffact("n, c, h, w"), ffact("c"), ffact("c")},
       {"float32 [n, c, h, w]"},
       {},
       6},
      {"lp norm", "LpNormalization", {ffact("n, 16")}, {"float32 [n, 16]"}, {ai("axis", 0)}, 1},
      {"mvn",
       "MeanVarianceNormalization",
       {ffact("n, c, h, w")},
       {"float32 [n, c, h, w]"},
       {ais("axes", {0, 2, 3})},
       13},
      {"lrn", "LRN", {ffact("n, c, h, w")}, {"float32 [n, c, h, w]"}, {ai("size", 5)}, 13},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(NormalizationOps, Losses) {
  const TensorFact scores = ffact("n, c, d"), target = fact(DataType::kInt64, "n, d");
  const std::vector<RuleCase> cases = {
      {"nll mean", "NegativeLogLikelihoodLoss", {scores, target}, {"float32 []"}, {}, 13},
      {"nll sum",
       "NegativeLogLikelihoodLoss",
       {scores, target},
       {"float32 []"},
       {as("reduction", "sum")},
       13},
      {"nll none",
       "NegativeLogLikelihoodLoss",
       {scores, target},
       {"float32 [n, d]"},
       {as("reduction", "none")},
       13},
      {"nll none completed from the target",
       "NegativeLogLikelihoodLoss",
       {ffact("?, c, ?"), fact(DataType::kInt64, "n, d")},
       {"float32 [n, d]"},
       {as("reduction", "none")},
       12},
      {"nll none from the target alone",
       "NegativeLogLikelihoodLoss",
       {TensorFact::unknown(DataType::kFloat), fact(DataType::kInt64, "n")},
       {"float32 [n]"},
       {as("reduction", "none")},
       13},
      {"sce log_prob",
       "SoftmaxCrossEntropyLoss",
       {ffact("n, c"), fact(DataType::kInt64, "n")},
       {"float32 []", "float32 [n, c]"},
       {},
       13},
      {"sce none",
       "SoftmaxCrossEntropyLoss",
       {scores, target},
       {"float32 [n, d]", "float32 [n, c, d]"},
       {as("reduction", "none")},
       12},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(NormalizationOps, Errors) {
  const std::vector<BadCase> bad = {
      {"LayerNormalization", {ffact("b, 4"), ffact("4")}, {ai("axis", 2)}},
      {"LayerNormalization", {ffact("b, 4"), ffact("4")}, {ai("axis", -3)}},
      {"LpNormalization", {ffact("b, 4")}, {ai("axis", 5)}},
      {"NegativeLogLikelihoodLoss", {ffact("n, c"), ffact("n")}, {as("reduction", "max")}},
  };
  expect_invalid_model(bad);
}

TEST(NormalizationOps, Registry) {
  for (const char* op : {"BatchNormalization", "InstanceNormalization", "LayerNormalization",
                         "LpNormalization", "MeanVarianceNormalization", "LRN",
                         "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    const OpSpec* s = OpRegistry::standard().find(op, 17);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, OpClass::kISDOS) << op;
    EXPECT_TRUE(s->value_inputs.empty()) << op;
  }
}

}  // namespace
}  // namespace sod2::testing

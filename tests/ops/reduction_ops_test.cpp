#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

const TensorFact kX = ffact("b, s, 64");

TEST(ReductionOps, ReduceSumAxesInput) {
  const std::vector<RuleCase> cases = {
      {"keepdims 1", "ReduceSum", {kX, ints({"1"})}, "float32 [b, 1, 64]"},
      {"keepdims 0", "ReduceSum", {kX, ints({"1"})}, "float32 [b, 64]", {ai("keepdims", 0)}},
      {"negative and unordered axes",
       "ReduceSum",
       {kX, ints({"-1", "0"})},
       "float32 [s]",
       {ai("keepdims", 0)}},
      {"repeated axes reduce once",
       "ReduceSum",
       {kX, ints({"1", "-2"})},
       "float32 [b, 64]",
       {ai("keepdims", 0)}},
      {"no axes reduces all", "ReduceSum", {kX}, "float32 [1, 1, 1]"},
      {"no axes keepdims 0 is a scalar", "ReduceSum", {kX}, "float32 []", {ai("keepdims", 0)}},
      {"no axes with noop is identity",
       "ReduceSum",
       {kX},
       "float32 [b, s, 64]",
       {ai("noop_with_empty_axes", 1)}},
      {"empty axes with noop is identity",
       "ReduceSum",
       {kX, ints({})},
       "float32 [b, s, 64]",
       {ai("noop_with_empty_axes", 1), ai("keepdims", 0)}},
      {"empty axes without noop reduces all",
       "ReduceSum",
       {kX, ints({})},
       "float32 []",
       {ai("keepdims", 0)}},
      {"axes of shape [0] are empty",
       "ReduceSum",
       {kX, fact(DataType::kInt64, "0")},
       "float32 [b, s, 64]",
       {ai("noop_with_empty_axes", 1)}},
      {"unknown axes keepdims 1: each dim or 1",
       "ReduceSum",
       {ffact("b, 1, 64"), fact(DataType::kInt64, "?")},
       "float32 [ReduceSum_0.out0.d0, 1, ReduceSum_0.out0.d2]"},
      {"unknown single axis keepdims 0",
       "ReduceSum",
       {kX, fact(DataType::kInt64, "1")},
       "float32 [ReduceSum_0.out0.d0, ReduceSum_0.out0.d1]",
       {ai("keepdims", 0)}},
      {"equal neighbours stay known",
       "ReduceSum",
       {ffact("n, n, 4"), fact(DataType::kInt64, "1")},
       "float32 [n, ReduceSum_0.out0.d1]",
       {ai("keepdims", 0)}},
      {"unknown axes count keepdims 0: rank unknown",
       "ReduceSum",
       {kX, fact(DataType::kInt64, "?")},
       "float32 <unknown rank>",
       {ai("keepdims", 0)}},
      {"two unknown axes keepdims 0: rank unknown",
       "ReduceSum",
       {kX, fact(DataType::kInt64, "2")},
       "float32 <unknown rank>",
       {ai("keepdims", 0)}},
      {"unknown input rank",
       "ReduceSum",
       {TensorFact::unknown(DataType::kFloat), ints({"1"})},
       "float32 <unknown rank>"},
      {"opset 11 reads the attribute",
       "ReduceSum",
       {kX},
       "float32 [b, 64]",
       {ais("axes", {1}), ai("keepdims", 0)},
       11},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(ReductionOps, AttributeAxes) {
  const std::vector<RuleCase> cases = {
      {"mean opset 17 negative axis", "ReduceMean", {kX}, "float32 [b, s, 1]", {ais("axes", {-1})}},
      {"mean keepdims 0",
       "ReduceMean",
       {kX},
       "float32 [b, s]",
       {ais("axes", {-1}), ai("keepdims", 0)}},
      {"max of all", "ReduceMax", {ffact("n, 3")}, "float32 [1, 1]", {}, 13},
      {"empty axes attribute reduces all",
       "ReduceL2",
       {kX},
       "float32 []",
       {ais("axes", {}), ai("keepdims", 0)}},
      {"unknown rank, all axes, keepdims 0",
       "ReduceLogSumExp",
       {TensorFact::unknown(DataType::kFloat)},
       "float32 []",
       {ai("keepdims", 0)}},
      {"unknown rank keeps dims unknown",
       "ReduceL1",
       {TensorFact::unknown(DataType::kFloat)},
       "float32 <unknown rank>"},
      {"prod",
       "ReduceProd",
       {ffact("2, ?, 5")},
       "float32 [2, 5]",
       {ais("axes", {1}), ai("keepdims", 0)}},
      {"sum square", "ReduceSumSquare", {ffact("h, w")}, "float32 [h, 1]", {ais("axes", {1})}, 13},
      {"log sum", "ReduceLogSum", {ffact("h, w")}, "float32 [1, w]", {ais("axes", {0})}, 1},
      {"min",
       "ReduceMin",
       {ffact("h, w")},
       "float32 [w]",
       {ais("axes", {-2}), ai("keepdims", 0)},
       12},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(ReductionOps, Values) {
  const std::vector<RuleCase> cases = {
      {"prod of a shape slice is numel",
       "ReduceProd",
       {ints({"n", "s", "4"})},
       "int64 [] = (4*n*s)",
       {ai("keepdims", 0)}},
      {"prod keepdims", "ReduceProd", {ints({"n", "2"})}, "int64 [1] = (2*n)", {ais("axes", {0})}},
      {"sum with axes input",
       "ReduceSum",
       {ints({"n", "m", "1"}), ints({"0"})},
       "int64 [] = (m+n+1)",
       {ai("keepdims", 0)}},
      {"sum noop keeps values",
       "ReduceSum",
       {ints({"n", "2"})},
       "int64 [2] = (n, 2)",
       {ai("noop_with_empty_axes", 1)}},
      {"sum of a scalar", "ReduceSum", {ints({"n"}, true)}, "int64 [] = (n)", {}},
      {"max", "ReduceMax", {ints({"n", "3"})}, "int64 [] = (max(n,3))", {ai("keepdims", 0)}},
      {"min", "ReduceMin", {ints({"n", "3", "1"})}, "int64 [1] = (min(n,1))", {}},
      {"max of nothing stays unknown", "ReduceMax", {ints({})}, "int64 [1]", {}},
      {"sum of nothing is 0", "ReduceSum", {ints({})}, "int64 [] = (0)", {ai("keepdims", 0)}},
      {"mean has no value rule", "ReduceMean", {ints({"4", "4"})}, "int64 []", {ai("keepdims", 0)}},
      {"float sum may round",
       "ReduceSum",
       {[] {
         TensorFact f = ints({"n", "m"});
         f.dtype = DataType::kFloat;
         return f;
       }()},
       "float32 []",
       {ai("keepdims", 0)}},
      {"unknown axes give no value",
       "ReduceSum",
       {ints({"n", "2"}), fact(DataType::kInt64, "1")},
       "int64 [ReduceSum_0.out0.d0]"},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(ReductionOps, ArgMaxArgMin) {
  const std::vector<RuleCase> cases = {
      {"default axis 0 keepdims", "ArgMax", {kX}, "int64 [1, s, 64]"},
      {"keepdims 0", "ArgMax", {kX}, "int64 [b, 64]", {ai("axis", 1), ai("keepdims", 0)}},
      {"negative axis", "ArgMin", {kX}, "int64 [b, s, 1]", {ai("axis", -1)}, 13},
      {"select_last_index does not change the shape",
       "ArgMin",
       {kX},
       "int64 [b, s]",
       {ai("axis", 2), ai("keepdims", 0), ai("select_last_index", 1)},
       12},
      {"unknown rank", "ArgMax", {TensorFact::unknown(DataType::kFloat)}, "int64 <unknown rank>"},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(ReductionOps, Errors) {
  const std::vector<BadCase> bad = {
      {"ReduceSum", {kX, ints({"3"})}, {}, 13},
      {"ReduceSum", {kX}, {ais("axes", {-4})}, 11},
      {"ReduceMean", {ffact("")}, {ais("axes", {0})}, 17},
      {"ArgMax", {kX}, {ai("axis", 3)}, 13},
  };
  expect_invalid_model(bad, "out of range");
}

TEST(ReductionOps, Registry) {
  const OpRegistry& r = OpRegistry::standard();
  const OpSpec* sum13 = r.find("ReduceSum", 13);
  ASSERT_NE(sum13, nullptr);
  EXPECT_EQ(sum13->op_class, OpClass::kISVDOS);
  EXPECT_EQ(sum13->value_inputs, std::vector<int>{1});
  EXPECT_EQ(r.find("ReduceSum", 12)->op_class, OpClass::kISDOS);
  for (const char* op :
       {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
        "ReduceMin", "ReduceProd", "ReduceSumSquare", "ArgMax", "ArgMin"}) {
    const OpSpec* s = r.find(op, 17);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, OpClass::kISDOS) << op;
    EXPECT_TRUE(s->value_inputs.empty()) << op;
  }
}

}  // namespace
}  // namespace sod2::testing

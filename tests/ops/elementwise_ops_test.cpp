#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

TensorFact typed(DataType dt, std::vector<std::string> values, bool scalar = false) {
  TensorFact f = ints(std::move(values), scalar);
  f.dtype = dt;
  return f;
}
TensorFact bools(std::vector<std::string> v, bool scalar = false) {
  return typed(DataType::kBool, std::move(v), scalar);
}
TensorFact floats(std::vector<std::string> v, bool scalar = false) {
  return typed(DataType::kFloat, std::move(v), scalar);
}
TensorFact unknown_rank(DataType dt) { return TensorFact::unknown(dt); }

const DataType kF = DataType::kFloat;

TEST(ElementwiseOps, UnaryShapesAndValues) {
  const std::vector<RuleCase> cases = {
      {"relu keeps the shape", "Relu", {ffact("batch, 3, h")}, {"float32 [batch, 3, h]"}},
      {"relu of values", "Relu", {ints({"n", "-2"})}, {"int64 [2] = (n, 0)"}},
      {"sigmoid unknown rank", "Sigmoid", {unknown_rank(kF)}, {"float32 <unknown rank>"}},
      {"neg values", "Neg", {ints({"n", "3"})}, {"int64 [2] = (-n, -3)"}},
      {"abs of a dim is the dim", "Abs", {ints({"n"})}, {"int64 [1] = (n)"}},
      {"abs of non-positive", "Abs", {ints({"-n"})}, {"int64 [1] = (n)"}},
      {"abs of unknown sign stays unknown", "Abs", {ints({"n-5"})}, {"int64 [1]"}},
      {"sign", "Sign", {ints({"n+1", "-2", "0"})}, {"int64 [3] = (1, -1, 0)"}},
      {"sign unknown", "Sign", {ints({"n-1"})}, {"int64 [1]"}},
      {"not flips booleans", "Not", {bools({"1", "0"})}, {"bool [2] = (0, 1)"}},
      {"isnan is bool", "IsNaN", {ffact("n, 4")}, {"bool [n, 4]"}},
      {"isinf of tracked values", "IsInf", {floats({"n"})}, {"bool [1] = (0)"}},
      {"floor of integral values",
       "Floor",
       {floats({"n"}, true)},
       {"float32 [] = (n)"},
       {},
       13,
       {{"n", 0, 100}}},
      {"identity keeps values", "Identity", {ints({"n", "2"})}, {"int64 [2] = (n, 2)"}},
      {"softmax opset 13", "Softmax", {ffact("b, s, 10")}, {"float32 [b, s, 10]"}},
      {"softmax opset 11 coerces at axis == rank",
       "Softmax",
       {ffact("b, 10")},
       {"float32 [b, 10]"},
       {ai("axis", 2)},
       11},
      {"logsoftmax negative axis",
       "LogSoftmax",
       {ffact("b, 10")},
       {"float32 [b, 10]"},
       {ai("axis", -2)}},
      {"hardmax", "Hardmax", {ffact("?, 5")}, {"float32 [?, 5]"}, {}, 11},
      {"trilu", "Trilu", {ffact("b, n, n")}, {"float32 [b, n, n]"}, {ai("upper", 0)}, 14},
      {"det drops two dims", "Det", {ffact("b, n, n")}, {"float32 [b]"}},
      {"det of a matrix is a scalar", "Det", {ffact("3, 3")}, {"float32 []"}},
      {"det requires square", "Det", {ffact("b, m, n")}, {"float32 [b]"}, {}, 17, {}, {"m == n"}},
      {"elu", "Elu", {ffact("?, 7")}, {"float32 [?, 7]"}, {af("alpha", 0.5f)}, 6},
      {"hardswish", "HardSwish", {ffact("n, 7")}, {"float32 [n, 7]"}, {}, 14},
  };
  run_cases(cases);
}

TEST(ElementwiseOps, CumSum) {
  const std::vector<RuleCase> cases = {
      {"shape", "CumSum", {ffact("b, s"), ints({"1"}, true)}, {"float32 [b, s]"}},
      {"values",
       "CumSum",
       {ints({"1", "n", "2"}), ints({"0"}, true)},
       {"int64 [3] = (1, n+1, n+3)"}},
      {"exclusive",
       "CumSum",
       {ints({"1", "n", "2"}), ints({"-1"}, true)},
       {"int64 [3] = (0, 1, n+1)"},
       {ai("exclusive", 1)}},
      {"reverse",
       "CumSum",
       {ints({"1", "n", "2"}), ints({"0"}, true)},
       {"int64 [3] = (n+3, n+2, 2)"},
       {ai("reverse", 1)}},
      {"axis unknown keeps shape only",
       "CumSum",
       {ints({"1", "2"}), fact(DataType::kInt64, "")},
       {"int64 [2]"}},
  };
  run_cases(cases);
}

TEST(ElementwiseOps, CastValues) {
  const std::vector<RuleCase> cases = {
      {"int64 to float within range",
       "Cast",
       {ints({"n", "4"})},
       {"float32 [2] = (n, 4)"},
       {ai("to", 1)},
       17,
       {{"n", 1, 1024}}},
      {"float back to int64", "Cast", {floats({"n", "4"})}, {"int64 [2] = (n, 4)"}, {ai("to", 7)}},
      {"unbounded dim may round in float",
       "Cast",
       {ints({"n", "4"})},
       {"float32 [2]"},
       {ai("to", 1)}},
      {"narrowing keeps fitting constants",
       "Cast",
       {ints({"100", "-5"})},
       {"int8 [2] = (100, -5)"},
       {ai("to", 3)}},
      {"narrowing drops what wraps", "Cast", {ints({"300"})}, {"int8 [1]"}, {ai("to", 3)}},
      {"uint8 cannot hold negatives", "Cast", {ints({"-1"})}, {"uint8 [1]"}, {ai("to", 2)}},
      {"to bool", "Cast", {ints({"n+1", "0"})}, {"bool [2] = (1, 0)"}, {ai("to", 9)}},
      {"to bool unknown", "Cast", {ints({"n"})}, {"bool [1]"}, {ai("to", 9)}},
      {"bool to int", "Cast", {bools({"1", "0"})}, {"int32 [2] = (1, 0)"}, {ai("to", 6)}},
      {"opset 1 names the type", "Cast", {ints({"n"})}, {"int32 [1]"}, {as("to", "INT32")}, 1},
      {"int32 of a bounded dim",
       "Cast",
       {ints({"n"})},
       {"int32 [1] = (n)"},
       {ai("to", 6)},
       9,
       {{"n", 0, 4096}}},
      {"cast to string", "Cast", {ints({"3"})}, {"string [1]"}, {ai("to", 8)}},
      {"castlike",
       "CastLike",
       {ints({"n"}), fact(DataType::kInt32, "")},
       {"int32 [1] = (n)"},
       {},
       15,
       {{"n", 0, 100}}},
      {"castlike of unknown type",
       "CastLike",
       {ffact("b, 3"), TensorFact::unknown()},
       {"undefined [b, 3]"},
       {},
       15},
  };
  run_cases(cases);
}

TEST(ElementwiseOps, ClipDropoutPRelu) {
  const std::vector<RuleCase> cases = {
      {"clip opset 6 attributes",
       "Clip",
       {ffact("n, 3")},
       {"float32 [n, 3]"},
       {af("min", 0.f), af("max", 6.f)},
       6},
      {"clip opset 6 values",
       "Clip",
       {floats({"n", "9"})},
       {"float32 [2] = (min(n,6), 6)"},
       {af("min", 0.f), af("max", 6.f)},
       6},
      {"clip opset 13 one input", "Clip", {ffact("n, 3")}, {"float32 [n, 3]"}, {}, 13},
      {"clip opset 13 three inputs",
       "Clip",
       {ints({"n", "10", "-3"}), ints({"0"}, true), ints({"8"}, true)},
       {"int64 [3] = (min(n,8), 8, 0)"},
       {},
       13},
      {"clip with an unknown bound",
       "Clip",
       {ints({"n"}), fact(DataType::kInt64, "")},
       {"int64 [1]"},
       {},
       13},
      {"dropout mask is bool",
       "Dropout",
       {ffact("b, s, 64")},
       {"float32 [b, s, 64]", "bool [b, s, 64]"},
       {},
       13},
      {"dropout mask before 10 has the input type",
       "Dropout",
       {ffact("b, 8")},
       {"float32 [b, 8]", "float32 [b, 8]"},
       {ai("is_test", 1)},
       7},
      {"dropout ratio input",
       "Dropout",
       {ffact("b, 8"), ffact(""), fact(DataType::kBool, "")},
       {"float32 [b, 8]", "bool [b, 8]"},
       {},
       12},
      {"prelu slope names a dim",
       "PRelu",
       {ffact("n, ?, h, w"), ffact("16, 1, 1")},
       {"float32 [n, 16, h, w]"},
       {},
       9},
      {"prelu slope scalar", "PRelu", {ffact("n, c"), ffact("1")}, {"float32 [n, c]"}, {}, 16},
      {"prelu slope requires equality",
       "PRelu",
       {ffact("n, c"), ffact("8")},
       {"float32 [n, c]"},
       {},
       16,
       {},
       {"c == 8"}},
  };
  run_cases(cases);
}

TEST(ElementwiseOps, Broadcasting) {
  const std::vector<RuleCase> cases = {
      {"ones and symbols",
       "Add",
       {ffact("batch, 1, seq"), ffact("4, 1")},
       {"float32 [batch, 4, seq]"}},
      {"rank extension", "Mul", {ffact("3"), ffact("n, h, 3")}, {"float32 [n, h, 3]"}},
      {"unknown against known >= 2", "Sub", {ffact("?, 5"), ffact("7, 5")}, {"float32 [7, 5]"}},
      {"unknown against 1 stays unknown",
       "Sub",
       {ffact("?, 5"), ffact("1, 5")},
       {"float32 [?, 5]"}},
      {"symbols that may be 1 stay open",
       "Add",
       {ffact("n, 3"), ffact("m, 3")},
       {"float32 [?, 3]"}},
      {"symbols >= 2 must match",
       "Add",
       {ffact("n, 3"), ffact("m, 3")},
       {"float32 [n, 3]"},
       {},
       17,
       {{"n", 2, 64}, {"m", 2, 64}},
       {"n == m"}},
      {"symbols >= 1 give max",
       "Add",
       {ffact("n"), ffact("m")},
       {"float32 [max(m,n)]"},
       {},
       17,
       {{"n", 1, 64}, {"m", 1, 64}}},
      {"unknown rank", "Add", {unknown_rank(kF), ffact("3")}, {"float32 <unknown rank>"}},
      {"legacy broadcast keeps A",
       "Add",
       {ffact("n, 3, h, w"), ffact("3")},
       {"float32 [n, 3, h, w]"},
       {ai("broadcast", 1), ai("axis", 1)},
       6},
      {"legacy no-broadcast fills from B",
       "Mul",
       {ffact("?, 3"), ffact("n, 3")},
       {"float32 [n, 3]"},
       {},
       6},
      {"comparison is bool", "Greater", {ffact("b, 1"), ffact("b, 8")}, {"bool [b, 8]"}},
      {"less or equal is bool", "LessOrEqual", {ffact("4"), ffact("")}, {"bool [4]"}, {}, 12},
      {"where takes X's type",
       "Where",
       {fact(DataType::kBool, "b, 1, s"), fact(DataType::kInt64, "s"), fact(DataType::kInt64, "")},
       {"int64 [b, 1, s]"}},
      {"max variadic", "Max", {ffact("1, h"), ffact("c, 1"), ffact("h")}, {"float32 [c, h]"}},
      {"sum before opset 8 merges equal shapes",
       "Sum",
       {ffact("?, 4"), ffact("n, ?")},
       {"float32 [n, 4]"},
       {},
       6},
      {"mean", "Mean", {ffact("n, 4"), ffact("4")}, {"float32 [n, 4]"}, {}, 13},
      {"bitshift",
       "BitShift",
       {fact(DataType::kUint32, "n"), fact(DataType::kUint32, "1")},
       {"uint32 [n]"},
       {as("direction", "LEFT")},
       11},
  };
  run_cases(cases);
}

TEST(ElementwiseOps, ArithmeticValues) {
  const std::vector<RuleCase> cases = {
      {"shape values times a scalar",
       "Mul",
       {ints({"n", "s"}), ints({"2"}, true)},
       {"int64 [2] = (2*n, 2*s)"}},
      {"add vectors", "Add", {ints({"n", "1"}), ints({"1", "m"})}, {"int64 [2] = (n+1, m+1)"}},
      {"sub", "Sub", {ints({"n"}, true), ints({"1"}, true)}, {"int64 [] = (n-1)"}},
      {"div of a dim by a constant",
       "Div",
       {ints({"n", "8"}), ints({"2"}, true)},
       {"int64 [2] = (floordiv(n,2), 4)"}},
      {"div truncates toward zero",
       "Div",
       {ints({"-7", "7"}), ints({"2"}, true)},
       {"int64 [2] = (-3, 3)"}},
      {"div by a negative", "Div", {ints({"7"}), ints({"-2"})}, {"int64 [1] = (-3)"}},
      {"div of unknown sign stays unknown", "Div", {ints({"n-5"}), ints({"2"})}, {"int64 [1]"}},
      {"div by a maybe-zero symbol stays unknown",
       "Div",
       {ints({"n"}), ints({"m"})},
       {"int64 [1]"}},
      {"div by a positive symbol",
       "Div",
       {ints({"n"}), ints({"m"})},
       {"int64 [1] = (floordiv(n,m))"},
       {},
       17,
       {{"m", 1, 64}}},
      {"float div only when exact",
       "Div",
       {floats({"8", "7"}), floats({"2"}, true)},
       {"float32 [2]"}},
      {"float div exact",
       "Div",
       {floats({"8", "6"}), floats({"2"}, true)},
       {"float32 [2] = (4, 3)"}},
      {"float mul within range",
       "Mul",
       {floats({"n"}), floats({"2"}, true)},
       {"float32 [1] = (2*n)"},
       {},
       17,
       {{"n", 0, 1000}}},
      {"float mul may round", "Mul", {floats({"n"}), floats({"2"}, true)}, {"float32 [1]"}},
      {"int32 add may wrap",
       "Add",
       {typed(DataType::kInt32, {"n"}), typed(DataType::kInt32, {"1"})},
       {"int32 [1]"}},
      {"mod is python's for ints",
       "Mod",
       {ints({"-7", "7"}), ints({"3"}, true)},
       {"int64 [2] = (2, 1)"}},
      {"fmod has the dividend's sign",
       "Mod",
       {ints({"-7", "7"}), ints({"3"}, true)},
       {"int64 [2] = (-1, 1)"},
       {ai("fmod", 1)}},
      {"mod of a symbol", "Mod", {ints({"n"}), ints({"4"})}, {"int64 [1] = (mod(n,4))"}},
      {"pow", "Pow", {ints({"n"}), ints({"2"}, true)}, {"int64 [1] = (n*n)"}, {}, 15},
      {"max values", "Max", {ints({"n", "3"}), ints({"1"}, true)}, {"int64 [2] = (max(n,1), 3)"}},
      {"min values",
       "Min",
       {ints({"n", "5"}), ints({"4", "m"})},
       {"int64 [2] = (min(n,4), min(m,5))"}},
      {"sum values", "Sum", {ints({"n"}), ints({"m"}), ints({"1"})}, {"int64 [1] = (m+n+1)"}},
      {"mismatched value lengths give none",
       "Add",
       {ints({"1", "2", "3"}), ints({"1", "2"})},
       {"int64 [3]"},
       {},
       17,
       {},
       {"3 == 2"}},
      {"bitshift left",
       "BitShift",
       {typed(DataType::kUint64, {"n"}), typed(DataType::kUint64, {"3"})},
       {"uint64 [1] = (8*n)"},
       {as("direction", "LEFT")},
       11},
  };
  run_cases(cases);
}

TEST(ElementwiseOps, LogicAndComparisonValues) {
  const std::vector<RuleCase> cases = {
      {"equal proves",
       "Equal",
       {ints({"n", "n+1", "2*n"}), ints({"n", "n", "n+n"})},
       {"bool [3] = (1, 0, 1)"}},
      {"equal of unrelated symbols stays unknown",
       "Equal",
       {ints({"n"}), ints({"m"})},
       {"bool [1]"}},
      {"equal under ranges",
       "Equal",
       {ints({"n"}), ints({"0"})},
       {"bool [1] = (0)"},
       {},
       17,
       {{"n", 1, 8}}},
      {"less", "Less", {ints({"n", "n"}), ints({"n+1", "n"})}, {"bool [2] = (1, 0)"}},
      {"greater", "Greater", {ints({"n+2"}), ints({"n"})}, {"bool [1] = (1)"}},
      {"greater or equal", "GreaterOrEqual", {ints({"n"}), ints({"n"})}, {"bool [1] = (1)"}},
      {"and", "And", {bools({"1", "0", "1"}), bools({"1", "1", "0"})}, {"bool [3] = (1, 0, 0)"}},
      {"or", "Or", {bools({"1", "0"}), bools({"0", "0"})}, {"bool [2] = (1, 0)"}},
      {"xor", "Xor", {bools({"1", "1"}), bools({"0", "1"})}, {"bool [2] = (1, 0)"}},
      {"where selects shape values",
       "Where",
       {bools({"1", "0"}), ints({"n", "m"}), ints({"1", "2"})},
       {"int64 [2] = (n, 2)"}},
      {"where with a scalar condition",
       "Where",
       {bools({"0"}, true), ints({"n", "m"}), ints({"-1"}, true)},
       {"int64 [2] = (-1, -1)"}},
      {"where only needs the chosen side",
       "Where",
       {bools({"1"}, true), ints({"n"}), fact(DataType::kInt64, "1")},
       {"int64 [1] = (n)"}},
      {"where with unknown condition",
       "Where",
       {fact(DataType::kBool, "2"), ints({"n", "m"}), ints({"1", "2"})},
       {"int64 [2]"}},
      // Equal(Shape, 0) → Where(..., default, Shape): the Reshape-0 idiom of exporters.
      {"where of equal",
       "Where",
       {bools({"0", "1"}), ints({"n", "4"}), ints({"7", "7"})},
       {"int64 [2] = (7, 4)"}},
  };
  run_cases(cases);
}

TEST(ElementwiseOps, Errors) {
  const std::vector<BadCase> bad = {
      {"Softmax", {ffact("b, 10")}, {ai("axis", 2)}, 13},
      {"Softmax", {ffact("b, 10")}, {ai("axis", 3)}, 11},
      {"CumSum", {ffact("b, 10"), ints({"2"}, true)}, {}, 14},
      {"Trilu", {ffact("10")}, {}, 14},
      {"Det", {ffact("10")}, {}, 11},
      {"Cast", {ffact("10")}, {}, 13},
      {"Cast", {ffact("10")}, {ai("to", 99)}, 13},
  };
  expect_invalid_model(bad);
}

TEST(ElementwiseOps, Registry) {
  const OpRegistry& r = OpRegistry::standard();
  for (const char* op : {"Add", "Relu", "Where", "Cast", "Clip", "Dropout", "CumSum", "Trilu",
                         "Det", "BitShift", "IsInf", "Celu", "Hardmax", "Identity"}) {
    const OpSpec* s = r.find(op, 17);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->op_class, OpClass::kISDOS) << op;
    EXPECT_TRUE(s->value_inputs.empty()) << op;
    EXPECT_NE(s->rule, nullptr) << op;
  }
  EXPECT_EQ(r.find("Clip", 6)->since, 1);
  EXPECT_EQ(r.find("Clip", 13)->since, 11);
  EXPECT_EQ(r.find("Dropout", 11)->since, 10);
  EXPECT_EQ(r.find("Add", 14)->since, 7);
}

}  // namespace
}  // namespace sod2::testing

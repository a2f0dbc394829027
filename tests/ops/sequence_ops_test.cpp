#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "rule_cases.h"

namespace sod2::testing {
namespace {

TensorFact seq(const TensorFact& element) {
  TensorFact s = TensorFact::unknown(element.dtype);
  s.category = TypeCategory::kSequence;
  s.element = std::make_shared<const TensorFact>(element);
  return s;
}

TEST(SequenceOps, ElementFacts) {
  const TensorFact a = ffact("n, 3"), s = seq(a);
  const std::vector<RuleCase> cases = {
      {"construct of equal shapes", "SequenceConstruct", {a, a}, "float32 sequence of [n, 3]"},
      {"construct merges differing dims",
       "SequenceConstruct",
       {a, ffact("m, 3"), a},
       "float32 sequence of [?, 3]"},
      {"construct of differing ranks",
       "SequenceConstruct",
       {a, ffact("3")},
       "float32 sequence of <unknown rank>"},
      {"construct keeps common values",
       "SequenceConstruct",
       {ints({"n"}), ints({"n"})},
       "int64 sequence of [1] = (n)"},
      {"empty", "SequenceEmpty", {}, "float32 sequence of <unknown rank>"},
      {"empty of int64", "SequenceEmpty", {}, "int64 sequence of <unknown rank>", {ai("dtype", 7)}},
      {"insert the same shape", "SequenceInsert", {s, a}, "float32 sequence of [n, 3]"},
      {"insert another shape",
       "SequenceInsert",
       {s, ffact("n, 4"), ints({"0"}, true)},
       "float32 sequence of [n, ?]"},
      {"insert into an unknown sequence",
       "SequenceInsert",
       {TensorFact::unknown(), a},
       "float32 sequence of <unknown rank>"},
      {"erase", "SequenceErase", {s, ints({"-1"}, true)}, "float32 sequence of [n, 3]"},
      {"at", "SequenceAt", {s, ints({"1"}, true)}, "float32 [n, 3]"},
      {"at of an unknown sequence",
       "SequenceAt",
       {TensorFact::unknown(), ints({"1"}, true)},
       "undefined <unknown rank>"},
      {"length unknown is an execution symbol",
       "SequenceLength",
       {s},
       "int64 [] = (SequenceLength_0.length)"},
      {"map outputs unknown elements", "SequenceMap", {s}, "undefined sequence"},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(SequenceOps, SplitToSequence) {
  const TensorFact x = ffact("n, 6");
  const std::vector<RuleCase> cases = {
      {"no split: slices of 1",
       "SplitToSequence",
       {x},
       "float32 sequence of [n, 1]",
       {ai("axis", 1)}},
      {"no split, keepdims 0",
       "SplitToSequence",
       {x},
       "float32 sequence of [n]",
       {ai("axis", -1), ai("keepdims", 0)}},
      {"scalar split dividing the dim",
       "SplitToSequence",
       {x, ints({"2"}, true)},
       "float32 sequence of [n, 2]",
       {ai("axis", 1)}},
      {"scalar split with a remainder",
       "SplitToSequence",
       {x, ints({"4"}, true)},
       "float32 sequence of [n, ?]",
       {ai("axis", 1)}},
      {"equal split sizes",
       "SplitToSequence",
       {x, ints({"3", "3"})},
       "float32 sequence of [n, 3]",
       {ai("axis", 1)}},
      {"different split sizes",
       "SplitToSequence",
       {x, ints({"2", "4"})},
       "float32 sequence of [n, ?]",
       {ai("axis", 1)}},
      {"unknown split",
       "SplitToSequence",
       {x, fact(DataType::kInt64, "2")},
       "float32 sequence of [?, 6]"},
      {"keepdims ignored with split",
       "SplitToSequence",
       {x, ints({"1"}, true)},
       "float32 sequence of [1, 6]",
       {ai("keepdims", 0)}},
  };
  run_cases(cases, Requirements::kUnchecked);
}

TEST(SequenceOps, ConcatFromSequence) {
  const TensorFact s = seq(ffact("n, 3"));
  const std::vector<RuleCase> cases = {
      {"concat dim is an execution dim",
       "ConcatFromSequence",
       {s},
       "float32 [ConcatFromSequence_0.out0.d0, 3]",
       {ai("axis", 0)}},
      {"stack on a new axis",
       "ConcatFromSequence",
       {s},
       "float32 [n, ConcatFromSequence_0.out0.d1, 3]",
       {ai("axis", 1), ai("new_axis", 1)}},
      {"new axis at the end",
       "ConcatFromSequence",
       {s},
       "float32 [n, 3, ConcatFromSequence_0.out0.d2]",
       {ai("axis", -1), ai("new_axis", 1)}},
      {"unknown element",
       "ConcatFromSequence",
       {TensorFact::unknown()},
       "undefined <unknown rank>",
       {ai("axis", 0)}},
  };
  run_cases(cases, Requirements::kUnchecked);

  for (auto [axis, new_axis] : {std::pair<int64_t, int64_t>{2, 0}, {3, 1}, {-4, 1}}) {
    FakeContext ctx("ConcatFromSequence", {s}, 1, 11);
    ctx.attr(ai("axis", axis)).attr(ai("new_axis", new_axis));
    EXPECT_EQ(ctx.run().code(), StatusCode::kInvalidModel) << axis << " " << new_axis;
  }
  FakeContext bad("SplitToSequence", {ffact("n, 6")}, 1, 11);
  bad.attr(ai("axis", 2));
  EXPECT_EQ(bad.run().code(), StatusCode::kInvalidModel);
}

struct Chain {
  Graph g{"g"};
  ValueId value(const std::string& name, ValueKind kind = ValueKind::kNodeOutput) {
    Value v;
    v.name = name;
    v.kind = kind;
    return *g.add_value(v);
  }
  NodeId node(const std::string& op, std::vector<ValueId> in, ValueId out,
              std::vector<Attribute> attrs = {}) {
    Node n;
    n.attributes = std::move(attrs);
    n.name = op + "_" + std::to_string(g.num_nodes());
    n.op_type = op;
    n.opset = 17;
    n.inputs = std::move(in);
    n.outputs = {out};
    return g.add_node(std::move(n));
  }
};

TEST(SequenceOps, LengthFromProducers) {
  Chain c;
  const ValueId a = c.value("a", ValueKind::kGraphInput), b = c.value("b", ValueKind::kGraphInput);
  const ValueId s = c.value("s"), s2 = c.value("s2"), s3 = c.value("s3"), e = c.value("e"),
                e2 = c.value("e2"), len = c.value("len"), len2 = c.value("len2"),
                cat = c.value("cat"), cat2 = c.value("cat2");
  c.node("SequenceConstruct", {a, b}, s);
  c.node("SequenceInsert", {s, a}, s2);
  c.node("SequenceErase", {s2}, s3);
  const NodeId n_len = c.node("SequenceLength", {s3}, len);
  c.node("SequenceEmpty", {}, e);
  const NodeId n_ins = c.node("SequenceInsert", {e, a}, e2);
  const NodeId n_len2 = c.node("SequenceLength", {e2}, len2);
  const NodeId n_stack = c.node("ConcatFromSequence", {s}, cat, {ai("axis", 0), ai("new_axis", 1)});
  const NodeId n_cat = c.node("ConcatFromSequence", {s2}, cat2, {ai("axis", 0)});
  c.g.link();

  const TensorFact element = ffact("n, 3");
  FakeContext l1(c.g, n_len, {seq(element)});
  ASSERT_TRUE(l1.run().ok());
  EXPECT_EQ(describe(l1.out()), "int64 [] = (2)");

  FakeContext l2(c.g, n_len2, {seq(element)});
  ASSERT_TRUE(l2.run().ok());
  EXPECT_EQ(describe(l2.out()), "int64 [] = (1)");

  // Inserting into a known-empty sequence: the tensor alone is the element fact.
  FakeContext ins(c.g, n_ins, {seq(TensorFact::unknown(DataType::kFloat)), ffact("k, 5")});
  ASSERT_TRUE(ins.run().ok());
  EXPECT_EQ(describe(ins.out()), "float32 sequence of [k, 5]");

  FakeContext stack(c.g, n_stack, {seq(element)});
  ASSERT_TRUE(stack.run().ok());
  EXPECT_EQ(describe(stack.out()), "float32 [2, n, 3]");

  FakeContext cat3(c.g, n_cat, {seq(element)});
  ASSERT_TRUE(cat3.run().ok());
  EXPECT_EQ(describe(cat3.out()), "float32 [3*n, 3]");
}

TEST(SequenceOps, Registry) {
  const OpRegistry& r = OpRegistry::standard();
  EXPECT_EQ(r.find("SequenceLength", 17)->op_class, OpClass::kISDO);
  EXPECT_EQ(r.find("SplitToSequence", 17)->op_class, OpClass::kEDO);
  EXPECT_EQ(r.find("SplitToSequence", 17)->value_inputs, std::vector<int>{1});
  EXPECT_EQ(r.find("SequenceMap", 17)->op_class, OpClass::kEDO);
  for (const char* op : {"SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase",
                         "SequenceAt", "ConcatFromSequence"})
    EXPECT_EQ(r.find(op, 17)->op_class, OpClass::kISDOS) << op;
}

}  // namespace
}  // namespace sod2::testing

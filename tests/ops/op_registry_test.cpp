// Every operator libonnx defines in the standard domain has a class, at every opset it exists in;
// everything else is class unknown.
#include <gtest/gtest.h>

#include <set>

#include "core/ops/op_registry.h"
#include "onnx/defs/schema.h"

namespace sod2 {
namespace {

TEST(OpRegistry, EveryStandardOpHasAClassAndARule) {
  std::set<std::string> missing, without_rule;
  for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (!schema.domain().empty()) continue;
    const OpSpec* spec = OpRegistry::standard().find(schema.Name(), schema.SinceVersion());
    if (!spec) {
      missing.insert(schema.Name());
      continue;
    }
    if (!spec->rule) without_rule.insert(schema.Name());
    EXPECT_NE(spec->op_class, OpClass::kUnknown) << schema.Name();
  }
  std::string list;
  for (const auto& n : missing) list += n + " ";
  EXPECT_TRUE(missing.empty()) << "ops without a class: " << list;
  list.clear();
  for (const auto& n : without_rule) list += n + " ";
  EXPECT_TRUE(without_rule.empty()) << "ops without a shape rule: " << list;
}

// The roofline's counts (op_work.h) cover every op: an op without a rule would silently drop out
// of a model's total.
TEST(OpRegistry, EveryStandardOpHasAWorkRuleAndEveryRuleAnOp) {
  std::set<std::string> without_work;
  for (const auto& name : OpRegistry::standard().op_types())
    for (const OpSpec& spec : *OpRegistry::standard().versions(name))
      if (!spec.work) without_work.insert(name);
  std::string list;
  for (const auto& n : without_work) list += n + " ";
  EXPECT_TRUE(without_work.empty()) << "ops without a work rule: " << list;
  std::set<std::string> seen;
  for (const auto& [op, rule] : op_work_table()) {
    EXPECT_NE(OpRegistry::standard().versions(op), nullptr) << "work rule for unknown op " << op;
    EXPECT_TRUE(seen.insert(op).second) << "two work rules for " << op;
    EXPECT_NE(rule, nullptr) << op;
  }
}

TEST(OpRegistry, ValueInputsExistInTheSchema) {
  for (const auto& name : OpRegistry::standard().op_types()) {
    for (const OpSpec& spec : *OpRegistry::standard().versions(name)) {
      const auto* schema = onnx::OpSchemaRegistry::Schema(name, static_cast<int>(spec.since));
      // Registered for an opset libonnx lacks (tests/onnx/op_definitions_test.cpp checks those
      // against the project's own definitions).
      const int libonnx_max =
          onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
      if (!schema || spec.since > libonnx_max) continue;
      for (int i : spec.value_inputs)
        EXPECT_LT(i, schema->max_input()) << name << " since " << spec.since;
      if (spec.op_class == OpClass::kISVDOS)
        EXPECT_FALSE(spec.value_inputs.empty()) << name << " is ISVDOS without value inputs";
    }
  }
}

TEST(OpRegistry, ClassesFollowOpsetChanges) {
  const auto cls = [](const char* op, int64_t opset) {
    Node n;
    n.op_type = op;
    n.opset = opset;
    return op_class_of(n);
  };
  EXPECT_EQ(cls("Slice", 9), OpClass::kISDOS);    // starts/ends attributes
  EXPECT_EQ(cls("Slice", 10), OpClass::kISVDOS);  // starts/ends inputs
  EXPECT_EQ(cls("Squeeze", 11), OpClass::kISDOS);
  EXPECT_EQ(cls("Squeeze", 13), OpClass::kISVDOS);
  EXPECT_EQ(cls("Shape", 15), OpClass::kISDO);
  EXPECT_EQ(cls("NonZero", 13), OpClass::kEDO);
  EXPECT_EQ(cls("Conv", 11), OpClass::kISDOS);
  Node custom;
  custom.op_type = "Conv";
  custom.domain = "com.example";
  EXPECT_EQ(op_class_of(custom), OpClass::kUnknown);
}

}  // namespace
}  // namespace sod2

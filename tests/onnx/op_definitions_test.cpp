// The project's own definitions of opsets 18-23 (core/onnx/op_definitions.h): arity and attribute
// checks beyond libonnx's opsets, types-only versions read as the older definition, ops that do
// not exist refused by name, and the changes still refused (opset_changes.h).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/onnx/onnx_import.h"
#include "core/onnx/op_definitions.h"
#include "core/onnx/op_schema_check.h"
#include "core/ops/op_registry.h"
#include "proto_builder.h"

namespace sod2 {
namespace {

using namespace sod2::testing;

Expected<Model> import(const onnx::ModelProto& m) {
  const auto bytes = serialize(m);
  return import_onnx_bytes(bytes, "", "test.onnx");
}

onnx::AttributeProto* add_string_attr(onnx::NodeProto* n, const std::string& name,
                                      const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
  return a;
}

bool has_warning(const Model& m, const std::string& text) {
  for (const auto& d : m.diagnostics)
    if (d.message.find(text) != std::string::npos) return true;
  return false;
}

TEST(OpDefinitions, TableIsSortedUniqueAndWithinOpsets18To23) {
  std::set<std::pair<std::string, int64_t>> seen;
  for (const auto& d : onnx_import::op_definitions()) {
    EXPECT_GE(d.since, 18) << d.op_type;
    EXPECT_LE(d.since, onnx_import::kNewestDefinedOpset) << d.op_type;
    EXPECT_TRUE(seen.insert({std::string(d.op_type), d.since}).second)
        << d.op_type << "-" << d.since << " is listed twice";
    if (d.kind != onnx_import::DefKind::kTypesOnly) {
      EXPECT_LE(d.min_inputs, d.max_inputs) << d.op_type;
      EXPECT_LE(d.min_outputs, d.max_outputs) << d.op_type;
      EXPECT_GE(d.min_outputs, 1) << d.op_type;
    }
  }
}

// Which new or changed versions the op table (core/ops) has a spec for from that version on: the
// rest are the ops this build reads but does not analyse at their new meaning (listed here so a
// change shows up in review).
TEST(OpDefinitions, OpTableCoversTheNewVersions) {
  std::string uncovered;
  for (const auto& d : onnx_import::op_definitions()) {
    if (d.kind == onnx_import::DefKind::kTypesOnly) continue;
    const OpSpec* spec = OpRegistry::standard().find(d.op_type, d.since);
    const bool covered = spec && spec->since == d.since;
    if (!covered) uncovered += std::string(d.op_type) + "-" + std::to_string(d.since) + " ";
    if (spec && spec->since >= d.since) {
      for (int i : spec->value_inputs)
        EXPECT_LT(i, d.max_inputs) << d.op_type << "-" << d.since << " value input " << i;
    }
  }
  // ImageDecoder has no kernel either.
  EXPECT_EQ(uncovered, "ImageDecoder-20 ")
      << "versions without their own op spec";
}

TEST(OpDefinitions, ResolvesTheNewestChangeAndSkipsTypesOnlyVersions) {
  using onnx_import::definition_after;
  // Pad: 18 (axes), 19 (wrap), 21 and 23 (types only).
  ASSERT_NE(definition_after("Pad", 17, 23), nullptr);
  EXPECT_EQ(definition_after("Pad", 17, 23)->since, 19);
  EXPECT_EQ(definition_after("Pad", 17, 18)->since, 18);
  // Conv-22 only added bfloat16: libonnx's Conv-11 still holds.
  EXPECT_EQ(definition_after("Conv", 17, 22), nullptr);
  // GroupNormalization 18 then 21.
  EXPECT_EQ(definition_after("GroupNormalization", 17, 20)->since, 18);
  EXPECT_EQ(definition_after("GroupNormalization", 17, 21)->since, 21);
  EXPECT_EQ(definition_after("Gelu", 17, 19), nullptr);
  EXPECT_EQ(definition_after("Gelu", 17, 23)->since, 20);
}

TEST(OpDefinitions, ReduceMeanAt18TakesAxesAsAnInput) {
  auto m = make_model(18);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}, int64_t{3}});
  add_input(g, "axes", {int64_t{1}}, onnx::TensorProto::INT64);
  auto* n = add_node(g, "ReduceMean", {"x", "axes"}, {"y"}, "mean");
  add_int_attr(n, "keepdims", 0);
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
}

TEST(OpDefinitions, ArityIsCheckedBeyondLibonnx) {
  auto m = make_model(18);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}, int64_t{3}});
  add_node(g, "ReduceMean", {"x", "a", "b"}, {"y"}, "mean");
  add_output(g, "y");
  auto model = import(m);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("has 3 inputs but 'ReduceMean' at opset 18 takes 1 to 2"),
            std::string::npos)
      << model.status().message();
}

TEST(OpDefinitions, AttributeTypesAndRequiredAttributesAreChecked) {
  {
    auto m = make_model(18);
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{1}, int64_t{4}, int64_t{2}});
    add_input(g, "s", {int64_t{2}});
    add_input(g, "b", {int64_t{2}});
    add_node(g, "GroupNormalization", {"x", "s", "b"}, {"y"}, "gn");
    add_output(g, "y");
    auto model = import(m);
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.status().message().find("required attribute 'num_groups'"), std::string::npos)
        << model.status().message();
  }
  {
    auto m = make_model(20);
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{4}});
    auto* n = add_node(g, "Gelu", {"x"}, {"y"}, "gelu");
    add_int_attr(n, "approximate", 1);
    add_output(g, "y");
    auto model = import(m);
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.status().message().find("attribute 'approximate' must be of type string"),
              std::string::npos)
        << model.status().message();
  }
  {
    auto m = make_model(20);
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{4}});
    auto* n = add_node(g, "Gelu", {"x"}, {"y"}, "gelu");
    add_string_attr(n, "approximate", "tanh");
    add_int_attr(n, "bogus", 1);
    add_output(g, "y");
    auto model = import(m);
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    EXPECT_TRUE(has_warning(*model, "attribute 'bogus' is not part of 'Gelu' at opset 20"));
  }
}

TEST(OpDefinitions, TypesOnlyBumpReadsAsTheOlderDefinition) {
  // Opset 22 only added bfloat16 to Conv and Elu: their opset 11/6 definitions (libonnx) hold,
  // arity included.
  auto m = make_model(22);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}});
  add_float_initializer(g, "w", {1, 1, 1, 1}, {2.f});
  add_node(g, "Conv", {"x", "w"}, {"c"}, "conv");
  add_node(g, "Elu", {"c"}, {"y"}, "elu");
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();

  auto bad = make_model(22);
  auto* bg = bad.mutable_graph();
  add_input(bg, "x", {int64_t{4}});
  add_node(bg, "Elu", {"x", "x"}, {"y"}, "elu");
  add_output(bg, "y");
  auto refused = import(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("has 2 inputs but 'Elu' at opset 22"),
            std::string::npos)
      << refused.status().message();
}

TEST(OpDefinitions, UnknownOpsAreRefusedByName) {
  {
    auto m = make_model(21);
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{4}});
    add_node(g, "Frobnicate", {"x"}, {"y"}, "f");
    add_output(g, "y");
    auto model = import(m);
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.status().message().find("op 'Frobnicate' is not defined in domain 'ai.onnx' "
                                            "at opset 21 (this build defines its operators up to "
                                            "opset 23)"),
              std::string::npos)
        << model.status().message();
  }
  {
    // Gelu exists from opset 20 only.
    auto m = make_model(19);
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{4}});
    add_node(g, "Gelu", {"x"}, {"y"}, "gelu");
    add_output(g, "y");
    auto model = import(m);
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.status().message().find("(it was added at opset 20)"), std::string::npos)
        << model.status().message();
  }
}

TEST(OpDefinitions, ChangesNotImplementedAreRefusedOnlyWhenUsed) {
  // QuantizeLinear-23's precision is not implemented; DequantizeLinear-23's output_dtype is.
  auto model_with = [](bool precision) {
    auto m = make_model(23);
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{4}});
    add_float_initializer(g, "s", {}, {0.5f});
    auto* q = add_node(g, "QuantizeLinear", {"x", "s"}, {"q"}, "q");
    if (precision) add_int_attr(q, "precision", onnx::TensorProto::FLOAT16);
    add_int_attr(add_node(g, "DequantizeLinear", {"q", "s"}, {"y"}, "dq"), "output_dtype",
                 onnx::TensorProto::FLOAT16);
    add_output(g, "y");
    return m;
  };
  auto plain = import(model_with(false));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  auto typed = import(model_with(true));
  ASSERT_FALSE(typed.ok());
  EXPECT_EQ(typed.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(typed.status().message().find("attribute 'precision'"), std::string::npos)
      << typed.status().message();
}

// Blocked quantization (block_size, opset 21) is implemented: it imports.
TEST(OpDefinitions, BlockedQuantizationImports) {
  auto m = make_model(21);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}, int64_t{4}}, onnx::TensorProto::INT8);
  add_float_initializer(g, "s", {2, 2}, {0.5f, 1.f, 2.f, 4.f});
  auto* n = add_node(g, "DequantizeLinear", {"x", "s"}, {"y"}, "dq");
  add_int_attr(n, "block_size", 2);
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
}

}  // namespace
}  // namespace sod2

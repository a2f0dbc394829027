// int4/uint4 (ONNX opset 21) at import: constants unpack into int8/uint8 tensors of the same
// values; whatever would compute a 4-bit tensor is refused by name (core/onnx/four_bit.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/onnx/onnx_import.h"
#include "core/onnx/onnx_shape_io.h"
#include "proto_builder.h"

namespace sod2 {
namespace {

using namespace sod2::testing;

constexpr int32_t kUint4 = 21;
constexpr int32_t kInt4 = 22;

Expected<Model> import(const onnx::ModelProto& m) {
  const auto bytes = serialize(m);
  return import_onnx_bytes(bytes, "", "four_bit.onnx");
}

onnx::TensorProto* add_packed(onnx::GraphProto* g, const std::string& name, int32_t type,
                              std::vector<int64_t> dims, const std::string& raw) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(raw);
  return t;
}

// A model that only reads x, so the initializers under test need no consumer.
onnx::ModelProto base_model() {
  auto m = make_model(21, 10);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_node(g, "Identity", {"x"}, {"y"});
  add_output(g, "y");
  return m;
}

std::vector<int64_t> values_of(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.int_at(i).value_or(999));
  return out;
}

void expect_refused(const onnx::ModelProto& m, const std::vector<std::string>& parts) {
  auto model = import(m);
  ASSERT_FALSE(model.ok());
  const std::string msg = model.status().message();
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported) << msg;
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << p << ": " << msg;
  EXPECT_NE(msg.find("supported for constants only"), std::string::npos) << msg;
}

TEST(FourBitImport, OddCountsUnpackLowNibbleFirstAndSignExtendInt4) {
  auto m = base_model();
  auto* g = m.mutable_graph();
  // int4 -8, 7, -1, 0, 3: nibbles 8 7 | F 0 | 3 and a padding nibble (A) that must be ignored.
  add_packed(g, "w4", kInt4, {5}, std::string("\x78\x0F\xA3", 3));
  // uint4 0, 15, 8, 1, 9 as [5, 1].
  add_packed(g, "u4", kUint4, {5, 1}, std::string("\xF0\x18\x09", 3));
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Graph& graph = *model->graph;
  const Tensor* w = graph.initializer_of(graph.find("w4"));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype(), DataType::kInt8);
  EXPECT_EQ(w->dims(), (std::vector<int64_t>{5}));
  EXPECT_EQ(values_of(*w), (std::vector<int64_t>{-8, 7, -1, 0, 3}));
  const Tensor* u = graph.initializer_of(graph.find("u4"));
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->dtype(), DataType::kUint8);
  EXPECT_EQ(u->dims(), (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(values_of(*u), (std::vector<int64_t>{0, 15, 8, 1, 9}));
}

TEST(FourBitImport, Int32DataHoldsOnePackedByteAnEntry) {
  auto m = base_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w4");
  t->set_data_type(kInt4);
  t->add_dims(3);
  t->add_int32_data(0x9F);  // -1, -7
  t->add_int32_data(0x07);  // 7 and padding
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Tensor* w = model->graph->initializer_of(model->graph->find("w4"));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(values_of(*w), (std::vector<int64_t>{-1, -7, 7}));

  t->set_int32_data(1, 0x107);
  auto bad = import(m);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("initializer 'w4': int32_data[1] = 263"), std::string::npos)
      << bad.status().message();
}

TEST(FourBitImport, PackedDataOfTheWrongLengthNamesTheTensor) {
  for (const std::string& raw : {std::string("\x78\x0F", 2), std::string("\x78\x0F\x03\x00", 4)}) {
    auto m = base_model();
    add_packed(m.mutable_graph(), "w4", kInt4, {5}, raw);
    auto model = import(m);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.status().code(), StatusCode::kInvalidModel);
    EXPECT_NE(
        model.status().message().find("initializer 'w4': holds " + std::to_string(raw.size()) +
                                      " bytes of packed int4 data but dims [5] need 3"),
        std::string::npos)
        << model.status().message();
  }
  // Absurd dims over a tiny buffer: refused by size, nothing allocated for them.
  auto m = base_model();
  add_packed(m.mutable_graph(), "huge", kUint4, {1 << 20, 1 << 10}, std::string("\x01", 1));
  auto model = import(m);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("initializer 'huge': holds 1 bytes"), std::string::npos)
      << model.status().message();
}

TEST(FourBitImport, ConstantNodeAndItsValueInfoReadAsInt8) {
  auto m = make_model(21, 10);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_float_initializer(g, "scale", {}, {0.5f});
  auto* c = add_node(g, "Constant", {}, {"q"}, "weights");
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(kInt4);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->set_raw_data(std::string("\x8F", 1));  // -1, -8
  auto* vi = g->add_value_info();
  vi->set_name("q");
  set_tensor_type(vi, kInt4, {int64_t{2}});
  add_node(g, "DequantizeLinear", {"q", "scale"}, {"w"});
  add_node(g, "Add", {"x", "w"}, {"y"});
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Graph& graph = *model->graph;
  EXPECT_EQ(graph.value(graph.find("q")).dtype, DataType::kInt8);
  const Attribute* value = graph.node(0).attribute("value");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(values_of(value->t), (std::vector<int64_t>{-1, -8}));
}

TEST(FourBitImport, ComputedFourBitTensorsAreRefusedByName) {
  {  // a graph input
    auto m = make_model(21, 10);
    auto* g = m.mutable_graph();
    add_input(g, "codes", {int64_t{4}}, kInt4);
    add_node(g, "Identity", {"codes"}, {"y"});
    add_output(g, "y", {}, kInt4);
    expect_refused(m, {"graph input 'codes'", "is declared int4"});
  }
  {  // Cast to uint4
    auto m = make_model(21, 10);
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{4}});
    add_int_attr(add_node(g, "Cast", {"x"}, {"y"}, "to_nibbles"), "to", kUint4);
    add_output(g, "y", {}, onnx::TensorProto::UINT8);
    expect_refused(m, {"node 'to_nibbles' (Cast)", "casts to uint4"});
  }
  {  // QuantizeLinear to int4: by output_dtype, or through a 4-bit zero point behind a Reshape
    for (bool by_zero_point : {false, true}) {
      auto m = make_model(21, 10);
      auto* g = m.mutable_graph();
      add_input(g, "x", {int64_t{2}});
      add_float_initializer(g, "scale", {}, {0.5f});
      auto* q = add_node(g, "QuantizeLinear", {"x", "scale"}, {"y"}, "quant");
      if (by_zero_point) {
        add_packed(g, "zp1", kInt4, {1}, std::string("\x01", 1));
        auto* shape = g->add_initializer();
        shape->set_name("scalar");
        shape->set_data_type(onnx::TensorProto::INT64);
        shape->add_dims(0);
        add_node(g, "Reshape", {"zp1", "scalar"}, {"zp"});
        q->add_input("zp");
      } else {
        add_int_attr(q, "output_dtype", kInt4);
      }
      add_output(g, "y", {}, onnx::TensorProto::INT8);
      if (by_zero_point)
        expect_refused(m, {"node 'quant' (QuantizeLinear)", "y_zero_point 'zp'"});
      else
        expect_refused(m, {"node 'quant' (QuantizeLinear)", "quantizes to int4"});
    }
  }
  {  // a constant of the main graph returned as an output
    auto m = base_model();
    auto* g = m.mutable_graph();
    add_packed(g, "w4", kUint4, {2}, std::string("\x21", 1));
    auto* out = g->add_output();
    out->set_name("w4");
    expect_refused(m, {"graph output 'w4'"});
  }
}

// A zero point that reaches QuantizeLinear through an If whose branches pass an outer int4
// constant on is still a 4-bit one.
TEST(FourBitImport, FourBitValuesAreFollowedThroughIfBranches) {
  auto m = make_model(21, 10);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_input(g, "c", {}, onnx::TensorProto::BOOL);
  add_float_initializer(g, "scale", {}, {0.5f});
  add_packed(g, "zp4", kInt4, {}, std::string("\x03", 1));
  auto* n = add_node(g, "If", {"c"}, {"zp"}, "pick");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* body = a->mutable_g();
    body->set_name(branch);
    add_node(body, "Identity", {"zp4"}, {std::string(branch) + "_out"});
    body->add_output()->set_name(std::string(branch) + "_out");
  }
  add_node(g, "QuantizeLinear", {"x", "scale", "zp"}, {"y"}, "quant");
  add_output(g, "y", {}, onnx::TensorProto::INT8);
  expect_refused(m, {"node 'quant' (QuantizeLinear)", "y_zero_point 'zp'"});
}

// --write-shapes: the values of a 4-bit constant read as int8 here; value_info saying so would
// contradict the file's int4, so they get none.
TEST(FourBitImport, WrittenShapesLeaveFourBitValuesAlone) {
  auto m = make_model(21, 10);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_float_initializer(g, "scale", {}, {0.5f});
  auto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(2);
  auto* c = add_node(g, "Constant", {}, {"q"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(kInt4);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->set_raw_data(std::string("\x8F", 1));
  add_node(g, "Reshape", {"q", "shape"}, {"r"});
  add_node(g, "DequantizeLinear", {"r", "scale"}, {"w"});
  add_node(g, "Add", {"x", "w"}, {"y"});
  add_output(g, "y");
  const auto dir =
      std::filesystem::temp_directory_path() / ("sod2_four_bit_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "in.onnx").string(), out = (dir / "out.onnx").string();
  std::ofstream(in, std::ios::binary) << m.SerializeAsString();
  ShapeAnnotations shapes(1);
  for (const char* name : {"q", "r"})
    shapes[0][name] = {DataType::kInt8, ShapeDecl({DimDecl::constant(2)})};
  for (const char* name : {"w", "y"})
    shapes[0][name] = {DataType::kFloat, ShapeDecl({DimDecl::constant(2)})};
  const Status st = write_shapes_to_onnx(in, out, shapes);
  ASSERT_TRUE(st.ok()) << st.to_string();
  onnx::ModelProto written;
  std::ifstream file(out, std::ios::binary);
  ASSERT_TRUE(written.ParseFromIstream(&file));
  std::vector<std::string> annotated;
  for (const auto& vi : written.graph().value_info()) annotated.push_back(vi.name());
  EXPECT_EQ(annotated, (std::vector<std::string>{"w"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sod2

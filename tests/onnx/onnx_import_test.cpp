// Importer behaviour on small hand-built models: scoping, naming, opsets, tensors, external data.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../common/bounded_run.h"
#include "core/onnx/onnx_import.h"
#include "proto_builder.h"

namespace sod2 {
namespace {

using namespace sod2::testing;

Expected<Model> import(const onnx::ModelProto& m, const std::string& base_dir = "") {
  const auto bytes = serialize(m);
  return import_onnx_bytes(bytes, base_dir, "test.onnx");
}

const Node* find_node(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes())
    if (n.op_type == op) return &n;
  return nullptr;
}

TEST(OnnxImport, ReadsInputsOutputsAndSymbolicDims) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("batch"), int64_t{3}, std::string("")});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Graph& graph = *model->graph;
  ASSERT_EQ(graph.inputs().size(), 1u);
  const Value& x = graph.value(graph.inputs()[0]);
  EXPECT_EQ(x.kind, ValueKind::kGraphInput);
  EXPECT_EQ(x.dtype, DataType::kFloat);
  ASSERT_TRUE(x.shape.has_value());
  EXPECT_EQ(shape_to_string(x.shape), "[batch, 3, ?]");
  const Value& y = graph.value(graph.outputs()[0]);
  EXPECT_EQ(y.producer, 0);
  EXPECT_EQ(graph.node(0).name, "relu");
  EXPECT_EQ(graph.node(0).opset, 17);
  EXPECT_EQ(x.consumers, std::vector<NodeId>{0});
}

TEST(OnnxImport, InitializerListedAsInputIsAnInitializer) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_input(g, "w", {int64_t{2}});
  add_float_initializer(g, "w", {2}, {1.5f, -2.0f});
  add_node(g, "Add", {"x", "w"}, {"y"});
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Graph& graph = *model->graph;
  ASSERT_EQ(graph.inputs().size(), 1u);
  const ValueId w = graph.find("w");
  ASSERT_NE(w, kNoValue);
  EXPECT_EQ(graph.value(w).kind, ValueKind::kInitializer);
  const Tensor* t = graph.initializer_of(w);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->double_at(1), -2.0);
}

TEST(OnnxImport, GeneratesUniqueNodeNames) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_node(g, "Relu", {"x"}, {"a"});
  add_node(g, "Relu", {"a"}, {"b"});
  add_node(g, "Relu", {"b"}, {"c"}, "dup");
  add_node(g, "Relu", {"c"}, {"d"}, "dup");
  add_output(g, "d");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  std::set<std::string> names;
  for (const Node& n : model->graph->nodes()) names.insert(n.name);
  EXPECT_EQ(names.size(), 4u);
  EXPECT_TRUE(names.count("Relu_0"));
  EXPECT_TRUE(names.count("dup"));
  ASSERT_FALSE(model->diagnostics.empty());
  EXPECT_NE(model->diagnostics[0].message.find("'dup' is used more than once"), std::string::npos);
}

TEST(OnnxImport, AcceptsNodesOutOfOrderAndSortsThem) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_node(g, "Relu", {"a"}, {"b"}, "second");
  add_node(g, "Relu", {"x"}, {"a"}, "first");
  add_output(g, "b");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto order = model->graph->topological_order();
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(model->graph->node((*order)[0]).name, "first");
}

// An If inside a Loop body reads a value of the main graph: each graph on the way gets an
// outer-scope value, and the node owning each subgraph depends on it.
TEST(OnnxImport, OuterScopeReferencesBecomeImplicitInputs) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{4}});
  add_input(g, "cond", {}, onnx::TensorProto::BOOL);
  add_input(g, "trip", {}, onnx::TensorProto::INT64);
  add_node(g, "Relu", {"x"}, {"outer_val"}, "producer");

  onnx::GraphProto then_g, else_g, body;
  then_g.set_name("then");
  add_node(&then_g, "Identity", {"outer_val"}, {"t_out"});
  add_output(&then_g, "t_out", {int64_t{4}});
  else_g.set_name("else");
  add_node(&else_g, "Neg", {"outer_val"}, {"e_out"});
  add_output(&else_g, "e_out", {int64_t{4}});

  body.set_name("body");
  add_input(&body, "i", {}, onnx::TensorProto::INT64);
  add_input(&body, "c_in", {}, onnx::TensorProto::BOOL);
  add_node(&body, "Identity", {"c_in"}, {"c_out"});
  auto* if_node = add_node(&body, "If", {"c_in"}, {"if_out"}, "inner_if");
  auto* a_then = if_node->add_attribute();
  a_then->set_name("then_branch");
  a_then->set_type(onnx::AttributeProto::GRAPH);
  *a_then->mutable_g() = then_g;
  auto* a_else = if_node->add_attribute();
  a_else->set_name("else_branch");
  a_else->set_type(onnx::AttributeProto::GRAPH);
  *a_else->mutable_g() = else_g;
  add_output(&body, "c_out", {}, onnx::TensorProto::BOOL);
  add_output(&body, "if_out", {int64_t{4}});

  auto* loop = add_node(g, "Loop", {"trip", "cond"}, {"scan"}, "loop");
  auto* a_body = loop->add_attribute();
  a_body->set_name("body");
  a_body->set_type(onnx::AttributeProto::GRAPH);
  *a_body->mutable_g() = body;
  add_output(g, "scan");

  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Graph& main = *model->graph;
  EXPECT_EQ(main.total_nodes(), 6u);
  EXPECT_EQ(main.total_subgraphs(), 3u);
  const Node* loop_node = find_node(main, "Loop");
  ASSERT_NE(loop_node, nullptr);
  ASSERT_EQ(loop_node->implicit_inputs.size(), 1u);
  EXPECT_EQ(main.value(loop_node->implicit_inputs[0]).name, "outer_val");
  // The Loop must run after the node producing what its body reads.
  auto order = main.topological_order();
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(main.node((*order)[0]).name, "producer");

  const Graph* body_graph = loop_node->subgraphs()[0];
  const ValueId captured = body_graph->find("outer_val");
  ASSERT_NE(captured, kNoValue);
  EXPECT_EQ(body_graph->value(captured).kind, ValueKind::kOuterScope);
  EXPECT_EQ(body_graph->value(captured).outer_graph, &main);
  const Node* inner_if = find_node(*body_graph, "If");
  ASSERT_NE(inner_if, nullptr);
  EXPECT_EQ(inner_if->implicit_inputs, std::vector<ValueId>{captured});
  EXPECT_EQ(body_graph->value(captured).consumers.size(), 1u);
}

TEST(OnnxImport, NormalisesAiOnnxDomain) {
  auto m = make_model();
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_node(g, "Relu", {"x"}, {"y"})->set_domain("ai.onnx");
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->graph->node(0).domain, "");
  EXPECT_EQ(model->opset(""), 17);
}

// Opsets up to 23 are this build's own (libonnx's schemas, then op_definitions.h): no warning.
// Beyond them an op is read with its newest known definition, and the import says so.
TEST(OnnxImport, NewerOpsetImportsKnownOpsWithAWarning) {
  for (int64_t opset : {19, 23, 24}) {
    auto m = make_model(opset);
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{2}});
    add_node(g, "Relu", {"x"}, {"y"});
    add_output(g, "y");
    auto model = import(m);
    ASSERT_TRUE(model.ok()) << opset << ": " << model.status().to_string();
    if (opset <= 23) {
      EXPECT_TRUE(model->diagnostics.empty()) << opset << ": " << model->diagnostics[0].message;
      continue;
    }
    ASSERT_FALSE(model->diagnostics.empty());
    EXPECT_NE(model->diagnostics[0].message.find("opset 24"), std::string::npos);
    EXPECT_NE(model->diagnostics[0].message.find("up to opset 23"), std::string::npos);
  }
}

TEST(OnnxImport, NewerOpsetRefusesOpsThatChangedMeaning) {
  // QuantizeLinear-23 added precision; this build does not implement it yet.
  auto m = make_model(23);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}, int64_t{4}});
  add_float_initializer(g, "scale", {}, {1.f});
  add_int_attr(add_node(g, "QuantizeLinear", {"x", "scale"}, {"y"}, "q"), "precision",
               onnx::TensorProto::FLOAT16);
  add_output(g, "y", {}, onnx::TensorProto::UINT8);
  auto model = import(m);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("node 'q' (QuantizeLinear)"), std::string::npos);
  EXPECT_NE(model.status().message().find("opset 23"), std::string::npos);
}

TEST(OnnxImport, CustomDomainOpsImport) {
  auto m = make_model();
  auto* o = m.add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_node(g, "Mystery", {"x"}, {"y"})->set_domain("com.example");
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->graph->node(0).domain, "com.example");
  EXPECT_EQ(model->graph->node(0).opset, 1);
}

TEST(OnnxImport, OldIrWithoutOpsetImportMeansOpset1) {
  auto m = make_model(17, 2);
  m.clear_opset_import();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_node(g, "Relu", {"x"}, {"y"});
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->opset(""), 1);
}

TEST(OnnxImport, DecodesTypedTensorFields) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  auto* half = g->add_initializer();
  half->set_name("h");
  half->set_data_type(onnx::TensorProto::FLOAT16);
  half->add_dims(2);
  half->add_int32_data(0x3C00);  // 1.0
  half->add_int32_data(0xC000);  // -2.0
  auto* i64 = g->add_initializer();
  i64->set_name("shape");
  i64->set_data_type(onnx::TensorProto::INT64);
  i64->add_dims(3);
  for (int64_t v : {4, -1, 7}) i64->add_int64_data(v);
  add_input(g, "x", {int64_t{2}});
  add_node(g, "Identity", {"x"}, {"y"});
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Graph& graph = *model->graph;
  const Tensor* h = graph.initializer_of(graph.find("h"));
  EXPECT_EQ(h->double_at(0), 1.0);
  EXPECT_EQ(h->double_at(1), -2.0);
  const Tensor* s = graph.initializer_of(graph.find("shape"));
  EXPECT_EQ(s->int_at(1), -1);
  EXPECT_EQ(s->int_at(2), 7);
  EXPECT_EQ(s->bytes().size(), 24u);
}

TEST(OnnxImport, DensifiesSparseInitializers) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  auto* sp = g->add_sparse_initializer();
  sp->add_dims(2);
  sp->add_dims(3);
  auto* values = sp->mutable_values();
  values->set_name("sparse");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(2);
  values->add_float_data(5.0f);
  values->add_float_data(6.0f);
  auto* idx = sp->mutable_indices();
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_dims(2);
  idx->add_int64_data(1);
  idx->add_int64_data(5);
  add_input(g, "x", {int64_t{2}, int64_t{3}});
  add_node(g, "Add", {"x", "sparse"}, {"y"});
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Tensor* t = model->graph->initializer_of(model->graph->find("sparse"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->double_at(0), 0.0);
  EXPECT_EQ(t->double_at(1), 5.0);
  EXPECT_EQ(t->double_at(5), 6.0);
}

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sod2_ext_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "weights");
    std::ofstream out(dir_ / "weights" / "w.bin", std::ios::binary);
    const float data[4] = {0.f, 1.f, 2.f, 3.f};
    out.write("PAD!", 4);  // an offset the importer must honour
    out.write(reinterpret_cast<const char*>(data), sizeof(data));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  onnx::ModelProto model_with_location(const std::string& location, const std::string& length) {
    auto m = make_model();
    auto* g = m.mutable_graph();
    auto* t = g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const std::string& k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", location);
    kv("offset", "4");
    kv("length", length);
    add_input(g, "x", {int64_t{4}});
    add_node(g, "Add", {"x", "w"}, {"y"});
    add_output(g, "y");
    return m;
  }

  std::filesystem::path dir_;
};

TEST_F(ExternalDataTest, LoadsRelativeFileAtOffset) {
  auto model = import(model_with_location("weights/w.bin", "16"), dir_.string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Tensor* t = model->graph->initializer_of(model->graph->find("w"));
  EXPECT_EQ(t->double_at(3), 3.0);
}

TEST_F(ExternalDataTest, RefusesTraversalAbsoluteMissingAndShortFiles) {
  struct Case {
    std::string location, length, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"../w.bin", "16", "leaves the model's folder"},
           {"weights/../../etc/passwd", "16", "leaves the model's folder"},
           {"/etc/passwd", "16", "is absolute"},
           {"weights/missing.bin", "16", "does not exist"},
           {"weights/w.bin", "32", "does not match"},
       }) {
    auto model = import(model_with_location(c.location, c.length), dir_.string());
    ASSERT_FALSE(model.ok()) << c.location;
    EXPECT_NE(model.status().message().find(c.expect), std::string::npos)
        << c.location << ": " << model.status().message();
    EXPECT_NE(model.status().message().find("initializer 'w'"), std::string::npos);
  }
}

TEST_F(ExternalDataTest, ReportsRangeBeyondFile) {
  auto m = model_with_location("weights/w.bin", "16");
  m.mutable_graph()->mutable_initializer(0)->mutable_external_data(1)->set_value("8");
  auto model = import(m, dir_.string());
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("lies outside"), std::string::npos)
      << model.status().message();
}

// A link in the location is refused wherever it points: out of the folder (here to the root, so
// 'root/etc/passwd' would compile /etc/passwd into a package) and, for one rule that needs no
// resolving, back inside it too.
TEST_F(ExternalDataTest, RefusesSymbolicLinksOutOfTheFolderAndWithinIt) {
  std::filesystem::create_directory_symlink("/", dir_ / "root");
  std::filesystem::create_symlink("/etc/passwd", dir_ / "weights" / "passwd.bin");
  std::filesystem::create_symlink("w.bin", dir_ / "weights" / "alias.bin");
  std::filesystem::create_directory_symlink("weights", dir_ / "alias_dir");
  for (const std::string& location :
       {std::string("root/etc/passwd"), std::string("weights/passwd.bin"),
        std::string("weights/alias.bin"), std::string("alias_dir/w.bin")}) {
    auto model = import(model_with_location(location, "16"), dir_.string());
    ASSERT_FALSE(model.ok()) << location << " was followed";
    EXPECT_NE(model.status().message().find("symbolic link"), std::string::npos)
        << location << ": " << model.status().message();
    EXPECT_NE(model.status().message().find("initializer 'w'"), std::string::npos);
  }
}

TEST_F(ExternalDataTest, RefusesAFifoOrAFolderAsTheDataFileWithoutHanging) {
  ASSERT_EQ(::mkfifo((dir_ / "weights" / "fifo.bin").c_str(), 0600), 0);
  for (const std::string& location : {std::string("weights/fifo.bin"), std::string("weights")}) {
    const auto run = testing::run_bounded(
        [&] {
          auto model = import(model_with_location(location, "16"), dir_.string());
          return model.ok() ? std::string("accepted") : model.status().message();
        },
        5);
    ASSERT_TRUE(run.finished) << location << ": " << run.result;
    EXPECT_NE(run.result.find("not a regular file"), std::string::npos) << run.result;
    EXPECT_NE(run.result.find(location), std::string::npos) << run.result;
  }
}

// Test-data tensors and input tensor files: a FIFO must not block, /dev/zero must not be read
// until memory runs out, and a file beyond protobuf's limit is refused by its size, unread.
class TensorFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sod2_tensor_file_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static testing::BoundedRun read(const std::string& path) {
    return testing::run_bounded(
        [&] {
          auto t = read_tensor_file(path);
          return t.ok() ? std::string("accepted")
                        : std::string(status_code_name(t.status().code())) + ": " +
                              t.status().message();
        },
        5, uint64_t{1} << 30);
  }

  std::filesystem::path dir_;
};

TEST_F(TensorFileTest, AFifoIsRefusedWithoutBlocking) {
  const std::string fifo = (dir_ / "input_0.pb").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto run = read(fifo);
  ASSERT_TRUE(run.finished) << run.result;
  EXPECT_LT(run.seconds, 2.0);
  EXPECT_NE(run.result.find(fifo + ": is a FIFO (named pipe), not a regular file"),
            std::string::npos)
      << run.result;
}

TEST_F(TensorFileTest, DevZeroIsRefusedUnread) {
  const auto run = read("/dev/zero");
  ASSERT_TRUE(run.finished) << run.result;
  EXPECT_LT(run.seconds, 2.0);
  EXPECT_NE(run.result.find("/dev/zero: is a character device, not a regular file"),
            std::string::npos)
      << run.result;
}

TEST_F(TensorFileTest, AFileBeyondTheCapIsRefusedBySize) {
  const std::string big = (dir_ / "input_0.pb").string();
  std::ofstream(big).close();
  std::filesystem::resize_file(big, uint64_t{3} << 30);  // sparse: no disk is used
  const auto run = read(big);
  ASSERT_TRUE(run.finished) << run.result;
  EXPECT_LT(run.seconds, 2.0);
  EXPECT_NE(run.result.find("resource exhausted: " + big +
                            ": is 3221225472 bytes, more than the "
                            "2147483647 bytes"),
            std::string::npos)
      << run.result;
}

TEST_F(TensorFileTest, ARegularTensorFileStillReads) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(2);
  p.add_float_data(1.5f);
  p.add_float_data(-2.f);
  const std::string path = (dir_ / "input_0.pb").string();
  std::ofstream(path, std::ios::binary) << p.SerializeAsString();
  auto t = read_tensor_file(path);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->double_at(1), -2.0);
}

TEST(OnnxImport, IfBranchesMustMatchTheNodesOutputs) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  add_input(g, "c", {}, onnx::TensorProto::BOOL);
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  add_node(&then_g, "Relu", {"x"}, {"t1"});
  add_output(&then_g, "t1");
  add_output(&then_g, "x");  // two outputs where the node has one
  else_g.set_name("else");
  add_node(&else_g, "Neg", {"x"}, {"e1"});
  add_output(&else_g, "e1");
  auto* n = add_node(g, "If", {"c"}, {"y"}, "branch");
  for (auto [name, body] : {std::pair{"then_branch", &then_g}, std::pair{"else_branch", &else_g}}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = *body;
  }
  add_output(g, "y");
  auto model = import(m);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("node 'branch' (If): then_branch outputs has 2 but 1"),
            std::string::npos)
      << model.status().message();
}

TEST(OnnxImport, SparseTensorsAttributeIsDensified) {
  auto m = make_model();
  auto* o = m.add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}});
  auto* n = add_node(g, "Custom", {"x"}, {"y"});
  n->set_domain("com.example");
  auto* a = n->add_attribute();
  a->set_name("tables");
  a->set_type(onnx::AttributeProto::SPARSE_TENSORS);
  auto* sp = a->add_sparse_tensors();
  sp->add_dims(3);
  sp->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  sp->mutable_values()->add_dims(1);
  sp->mutable_values()->add_float_data(2.5f);
  sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(1);
  sp->mutable_indices()->add_int64_data(2);
  add_output(g, "y");
  auto model = import(m);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Attribute* attr = model->graph->node(0).attribute("tables");
  ASSERT_NE(attr, nullptr);
  EXPECT_EQ(attr->type, AttributeType::kSparseTensors);
  ASSERT_EQ(attr->tensors.size(), 1u);
  EXPECT_EQ(attr->tensors[0].double_at(2), 2.5);
}

TEST(OnnxImport, EmptyBytesSayEmpty) {
  auto model = import_onnx_bytes({}, "", "nothing.onnx");
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("is empty"), std::string::npos);
}

TEST(OnnxImport, ErrorsNameTheFile) {
  const std::vector<uint8_t> junk = {0xff, 0xff, 0xff, 0x01};
  auto model = import_onnx_bytes(junk, "", "junk.onnx");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kParseError);
  EXPECT_EQ(model.status().message().rfind("junk.onnx: ", 0), 0u) << model.status().message();
}

TEST(OnnxImport, DirectoriesAndDevicesAreRefusedByName) {
  auto dir = import_onnx_file("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("is a directory"), std::string::npos);
  auto dev = import_onnx_file("/dev/null");
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.status().message().find("not a regular file"), std::string::npos);
  const std::string fifo = "/tmp/sod2_model_fifo_" + std::to_string(::getpid()) + ".onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto run = testing::run_bounded(
      [&] {
        auto model = import_onnx_file(fifo);
        return model.ok() ? std::string("accepted") : model.status().message();
      },
      5);
  std::filesystem::remove(fifo);
  ASSERT_TRUE(run.finished) << run.result;
  EXPECT_NE(run.result.find("is a FIFO (named pipe), not a regular file"), std::string::npos)
      << run.result;
}

TEST(OnnxImport, MissingFileIsNotFound) {
  auto model = import_onnx_file("/nonexistent/dir/model.onnx");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("/nonexistent/dir/model.onnx"), std::string::npos);
}

}  // namespace
}  // namespace sod2

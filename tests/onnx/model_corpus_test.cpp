// Every model of the shared corpus imports, and what the IR holds matches the ONNX file counted
// independently with the protobuf classes, and the manifest's inputs and op histogram.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/onnx/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace sod2 {
namespace {

const std::filesystem::path kModels = std::filesystem::path(SOD2_SHARED_DIR) / "models";

struct ProtoCounts {
  size_t nodes = 0, initializers = 0, subgraphs = 0;
};

void count(const onnx::GraphProto& g, ProtoCounts* c) {
  c->initializers += static_cast<size_t>(g.initializer_size() + g.sparse_initializer_size());
  for (const auto& n : g.node()) {
    ++c->nodes;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) {
        ++c->subgraphs;
        count(a.g(), c);
      }
      for (const auto& sg : a.graphs()) {
        ++c->subgraphs;
        count(sg, c);
      }
    }
  }
}

nlohmann::json manifest() {
  std::ifstream in(kModels / "models.json");
  return nlohmann::json::parse(in);
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  if (!std::filesystem::exists(kModels / "models.json")) return names;
  for (const auto& e : manifest()) names.push_back(e["name"]);
  return names;
}

class ModelCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelCorpus, ImportsAndMatchesTheFile) {
  nlohmann::json entry;
  for (const auto& e : manifest())
    if (e["name"] == GetParam()) entry = e;
  const std::filesystem::path file = kModels / entry["file"].get<std::string>();

  auto model = import_onnx_file(file.string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Graph& g = *model->graph;

  onnx::ModelProto proto;
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  ProtoCounts expected;
  count(proto.graph(), &expected);
  EXPECT_EQ(g.total_nodes(), expected.nodes);
  EXPECT_EQ(g.total_initializers(), expected.initializers);
  EXPECT_EQ(g.total_subgraphs(), expected.subgraphs);
  EXPECT_EQ(g.num_nodes(), static_cast<size_t>(proto.graph().node_size()));
  EXPECT_EQ(model->opset(""), entry["opset"].get<int64_t>());

  size_t histogram_total = 0;
  for (const auto& [op, n] : entry["onnx_ops_histogram"].items()) histogram_total += n.get<size_t>();
  EXPECT_EQ(g.total_nodes(), histogram_total);

  ASSERT_EQ(g.inputs().size(), entry["inputs"].size());
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    const auto& want = entry["inputs"][i];
    EXPECT_EQ(v.name, want["name"].get<std::string>());
    EXPECT_EQ(data_type_name(v.dtype), want["dtype"].get<std::string>());
    ASSERT_TRUE(v.shape.has_value());
    ASSERT_EQ(v.shape->size(), want["dims"].size());
    for (size_t d = 0; d < v.shape->size(); ++d) {
      const auto& wd = want["dims"][d];
      EXPECT_EQ((*v.shape)[d].to_string(),
                wd.is_string() ? wd.get<std::string>() : std::to_string(wd.get<int64_t>()));
    }
  }
  ASSERT_EQ(g.outputs().size(), entry["outputs"].size());

  // Every graph is acyclic and every node is reachable in topological order.
  visit_graphs(g, [](const Graph& graph, const Node*) {
    auto order = graph.topological_order();
    ASSERT_TRUE(order.ok()) << order.status().to_string();
    EXPECT_EQ(order->size(), graph.num_nodes());
  });
}

TEST_P(ModelCorpus, ReferenceTensorsRead) {
  nlohmann::json entry;
  for (const auto& e : manifest())
    if (e["name"] == GetParam()) entry = e;
  const auto dir = (kModels / entry["file"].get<std::string>()).parent_path();
  size_t sets = 0;
  for (const auto& set : std::filesystem::directory_iterator(dir)) {
    if (set.path().filename().string().rfind("test_data_set_", 0) != 0) continue;
    ++sets;
    for (const auto& f : std::filesystem::directory_iterator(set.path())) {
      auto t = read_tensor_file(f.path().string());
      ASSERT_TRUE(t.ok()) << t.status().to_string();
      EXPECT_EQ(static_cast<size_t>(t->numel()) * data_type_size(t->dtype()), t->bytes().size());
    }
  }
  EXPECT_GE(sets, 1u);
}

INSTANTIATE_TEST_SUITE_P(SharedModels, ModelCorpus, ::testing::ValuesIn(model_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// Guards against an empty parameter list silently passing when ../shared is missing.
TEST(ModelCorpusPresence, CorpusIsThere) {
  ASSERT_TRUE(std::filesystem::exists(kModels / "models.json"))
      << "expected the model corpus at " << kModels << " (../shared beside the checkout)";
  EXPECT_GE(model_names().size(), 9u);
}

}  // namespace
}  // namespace sod2

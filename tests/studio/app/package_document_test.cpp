// The studio's view of a compiled package: for corpus models compiled with `sod2 compile`, the
// plan it evaluates at a binding is the one the runtime lays out there (same version, same arena
// as `sod2 run --json` reports), the timeline never puts two live tensors on the same bytes, the
// drawing holds every compiled node, and bad input is a clear error. A package compiled from a
// scoped model opens with its name scopes closed to a readable depth, as the model does.
#include "app/studio/document/package_document.h"

#include <gtest/gtest.h>

#include "../test_home.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "../../opt/corpus.h"
#include "app/cli/compile_command.h"
#include "app/cli/run_command.h"
#include "tests/bench/synthetic_models.h"

namespace sod2::studio {
namespace {

std::string bind_arg(const std::map<std::string, int64_t>& values) {
  std::string s;
  for (const auto& [k, v] : values) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return s;
}

// Compiles corpus model `name` with its ranges into a temporary package.
std::string compiled(const testing::CorpusModel& m) {
  const auto dir = sod2::testing::test_dir("package");
  std::filesystem::create_directories(dir);
  const auto ranges = dir / (testing::gtest_safe_name(m.name) + ".ranges.json");
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, r] : m.options.ranges) j[name] = {r.lo, r.hi, r.multiple};
  std::ofstream(ranges) << j.dump();
  const auto out = dir / (testing::gtest_safe_name(m.name) + ".sod2");
  std::ostringstream o, e;
  EXPECT_EQ(
      cli::run_compile({m.file.string(), "-o", out.string(), "--ranges", ranges.string()}, o, e), 0)
      << e.str();
  return out.string();
}

class PackageDocumentCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(PackageDocumentCorpus, EvaluatesThePlanTheRuntimeUses) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const std::string path = compiled(*m);
  auto doc = PackageDocument::open(path);
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  const PackageDocument& d = **doc;

  const DisplayGraph g = d.display_graph();
  ASSERT_FALSE(d.program().graphs.empty());
  EXPECT_EQ(g.display_of_node.size(), d.program().graphs[0].nodes.size());
  for (int id : g.display_of_node) EXPECT_GE(id, 0);

  const auto& values = m->bindings[1];
  auto at = d.plan_at(values);
  ASSERT_TRUE(at.ok()) << at.status().to_string();
  std::ostringstream out, err;
  ASSERT_EQ(
      cli::run_run({path, "--bind", bind_arg(values), "--runs", "1", "--warmup", "1", "--json"},
                   out, err),
      0)
      << err.str();
  std::string last;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) last = line;
  const nlohmann::json run = nlohmann::json::parse(last);
  EXPECT_EQ(at->version, run.at("plan_version").get<int32_t>());
  // Execution symbols (a NonZero count, a TopK routing) are planned at their bounds here; the
  // runtime binds their real values when their node runs and lays out no more than that.
  bool execution_symbols = false;
  for (const rt::SymbolDesc& s : d.program().symbols) execution_symbols |= s.execution;
  if (execution_symbols)
    EXPECT_GE(at->arena_bytes, run.at("arena_bytes").get<int64_t>());
  else
    EXPECT_EQ(at->arena_bytes, run.at("arena_bytes").get<int64_t>());

  // A valid plan: tensors live at the same step never share bytes, and all fit in the arena.
  const TimelineModel t = d.timeline(*at);
  const auto& r = t.rects();
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_LE(r[i].offset + r[i].size, at->arena_bytes) << r[i].name;
    for (size_t k = i + 1; k < r.size(); ++k) {
      const bool same_time = r[i].first_step <= r[k].last_step && r[k].first_step <= r[i].last_step;
      const bool same_bytes =
          r[i].offset < r[k].offset + r[k].size && r[k].offset < r[i].offset + r[i].size;
      if (r[i].size > 0 && r[k].size > 0)
        EXPECT_FALSE(same_time && same_bytes) << r[i].name << " and " << r[k].name;
    }
  }
  EXPECT_NE(d.summary_report(*at).find("arena"), std::string::npos);
  // Views (a Reshape's output...) are named on their tensor's rectangle, never one of their own.
  std::set<std::string> tensor_names, view_names;
  for (const TimelineRect& rect : r) {
    tensor_names.insert(rect.name);
    view_names.insert(rect.views.begin(), rect.views.end());
  }
  for (const std::string& v : view_names) EXPECT_EQ(tensor_names.count(v), 0u) << v;
  if (GetParam() == std::string("bert_tiny")) EXPECT_FALSE(view_names.empty());
}

INSTANTIATE_TEST_SUITE_P(Models, PackageDocumentCorpus,
                         ::testing::Values("bert_tiny", "yolo_tiny", "skipnet", "moe_tiny"),
                         [](const auto& info) { return testing::gtest_safe_name(info.param); });

// Compiles `model` into a temporary package named `name`.sod2.
std::string compiled(const onnx::ModelProto& model, const std::string& name) {
  const auto dir = sod2::testing::test_dir("package");
  std::filesystem::create_directories(dir);
  const auto onnx_file = dir / (name + ".onnx"), out = dir / (name + ".sod2");
  std::ofstream(onnx_file, std::ios::binary) << model.SerializeAsString();
  std::ostringstream o, e;
  EXPECT_EQ(cli::run_compile({onnx_file.string(), "-o", out.string()}, o, e), 0) << e.str();
  return out.string();
}

// Every compiled node is a member of exactly one drawn node, the one display_of_node names; no
// edge is repeated or loops.
void expect_each_node_drawn_once(const DisplayGraph& d, size_t num_nodes) {
  ASSERT_EQ(d.display_of_node.size(), num_nodes);
  std::vector<int> drawn_in(num_nodes, -1);
  for (const DisplayNode& n : d.nodes)
    for (NodeId m : n.members) {
      ASSERT_TRUE(m >= 0 && static_cast<size_t>(m) < num_nodes) << m;
      EXPECT_EQ(drawn_in[static_cast<size_t>(m)], -1) << "node " << m << " drawn twice";
      drawn_in[static_cast<size_t>(m)] = n.id;
    }
  for (size_t i = 0; i < num_nodes; ++i) EXPECT_EQ(drawn_in[i], d.display_of_node[i]) << i;
  std::set<std::pair<int, int>> edges;
  for (const DisplayEdge& e : d.edges) {
    EXPECT_NE(e.from, e.to);
    EXPECT_TRUE(edges.insert({e.from, e.to}).second) << e.from << "->" << e.to;
  }
}

TEST(PackageHierarchy, AScopedPackageOpensWithItsScopesClosedAndOpensOne) {
  auto doc = PackageDocument::open(compiled(bench::transformer_like(2000), "scoped_2000"));
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  const PackageDocument& pkg = **doc;
  const GraphHierarchy h = pkg.hierarchy();
  ASSERT_EQ(h.scope_of_node.size(), pkg.num_nodes());
  ASSERT_GT(h.scopes.size(), 1u);
  const DisplayGraph flat = pkg.display_graph();
  EXPECT_EQ(flat.nodes.size(), pkg.num_nodes() + 2);  // every compiled node, an input, an output

  const DisplayGraph d = pkg.display_graph(&h, h.default_expanded);
  EXPECT_LE(d.nodes.size(), GraphHierarchy::kDefaultItems + 2);
  expect_each_node_drawn_once(d, pkg.num_nodes());
  // The layers are boxes, labelled as a model's are.
  int layer = -1;
  for (const DisplayNode& n : d.nodes) {
    if (n.kind != DisplayNodeKind::kScope) continue;
    const NameScope& s = h.scopes[static_cast<size_t>(n.scope)];
    EXPECT_EQ(n.label, s.label);
    EXPECT_EQ(n.op, "scope, " + std::to_string(s.nodes) + " nodes");
    EXPECT_EQ(n.members.size(), static_cast<size_t>(s.nodes));
    EXPECT_TRUE(std::is_sorted(n.members.begin(), n.members.end()));
    EXPECT_TRUE(is_box(n));
    if (layer < 0 && s.label == "layers.3") layer = n.scope;
  }
  ASSERT_GT(layer, 0) << "layers.3 is drawn as a box";
  EXPECT_EQ(h.scopes[static_cast<size_t>(layer)].path, "/encoder/layers.3");

  // Opening layers.3 draws its attention and norm inside its frame; the other layers stay boxes.
  std::set<int> open = h.default_expanded;
  open.insert(layer);
  const DisplayGraph o = pkg.display_graph(&h, open);
  expect_each_node_drawn_once(o, pkg.num_nodes());
  EXPECT_GT(o.nodes.size(), d.nodes.size());
  int frame = -1;
  for (size_t f = 0; f < o.open_scopes.size(); ++f)
    if (o.open_scopes[f].scope == layer) frame = static_cast<int>(f);
  ASSERT_GE(frame, 0);
  EXPECT_EQ(o.open_scopes[static_cast<size_t>(frame)].title, "/encoder/layers.3");
  std::set<std::string> inside;
  for (const DisplayNode& n : o.nodes) {
    EXPECT_NE(n.kind == DisplayNodeKind::kScope ? n.scope : -1, layer);
    if (n.in_scope == frame) inside.insert(n.label);
  }
  EXPECT_EQ(inside, (std::set<std::string>{"attention", "norm"}));
}

TEST(PackageHierarchy, APackageWithoutScopesDrawsAsBefore) {
  onnx::ModelProto model = bench::transformer_like(300);
  for (onnx::NodeProto& n : *model.mutable_graph()->mutable_node()) {
    std::string name = n.name();
    std::replace(name.begin(), name.end(), '/', '_');
    n.set_name(name);
  }
  auto doc = PackageDocument::open(compiled(model, "unscoped_300"));
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  const GraphHierarchy h = (*doc)->hierarchy();
  EXPECT_EQ(h.scopes.size(), 1u);
  const DisplayGraph flat = (*doc)->display_graph();
  const DisplayGraph d = (*doc)->display_graph(&h, h.default_expanded);
  ASSERT_EQ(d.nodes.size(), flat.nodes.size());
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    EXPECT_EQ(d.nodes[i].id, flat.nodes[i].id);
    EXPECT_EQ(d.nodes[i].kind, flat.nodes[i].kind);
    EXPECT_EQ(d.nodes[i].label, flat.nodes[i].label);
    EXPECT_EQ(d.nodes[i].op, flat.nodes[i].op);
    EXPECT_EQ(d.nodes[i].op_class, flat.nodes[i].op_class);
    EXPECT_EQ(d.nodes[i].members, flat.nodes[i].members);
    EXPECT_EQ(d.nodes[i].in_scope, -1);
  }
  ASSERT_EQ(d.edges.size(), flat.edges.size());
  for (size_t i = 0; i < d.edges.size(); ++i) {
    EXPECT_EQ(d.edges[i].from, flat.edges[i].from);
    EXPECT_EQ(d.edges[i].to, flat.edges[i].to);
    EXPECT_EQ(d.edges[i].label, flat.edges[i].label);
  }
  EXPECT_EQ(d.display_of_node, flat.display_of_node);
  EXPECT_TRUE(d.open_scopes.empty());
}

TEST(PackageDocument, ABindingOutsideARangeNamesTheSymbol) {
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "yolo_tiny");
  ASSERT_TRUE(m.ok());
  auto doc = PackageDocument::open(compiled(*m));
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  auto values = (*doc)->initial_values();
  values["height"] = 33;  // off the multiple of 32
  auto at = (*doc)->plan_at(values);
  ASSERT_FALSE(at.ok());
  EXPECT_NE(at.status().message().find("height"), std::string::npos) << at.status().message();
}

TEST(PackageDocument, ACorruptedPackageIsAClearError) {
  const auto path = std::filesystem::temp_directory_path() / "studio_corrupt.sod2";
  std::filesystem::copy_file(SOD2_SOURCE_DIR
                             "/tests/fuzz/seeds/package_load/tiny_all_features.sod2",
                             path, std::filesystem::copy_options::overwrite_existing);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x5a');
  }
  auto doc = PackageDocument::open(path.string());
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("studio_corrupt.sod2"), std::string::npos)
      << doc.status().message();
}

}  // namespace
}  // namespace sod2::studio

// Name scopes, shape-computation clusters and folded Constants (graph_hierarchy.h), and the
// display graph drawn with them: on exporter-style scoped models and on every corpus model, each
// drawn node is in exactly one display node, folded Constants are found on their readers, the
// default drawing is small, and opening everything gives back the plain drawing.
#include "app/studio/graph/graph_hierarchy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "corpus_graphs.h"

namespace sod2::studio {
namespace {

using testing::corpus_graphs;

TEST(NameScope, SplitsTheScopeOffTheNodeName) {
  EXPECT_EQ(name_scope_of("/encoder/layers.3/attention/MatMul"),
            (std::vector<std::string>{"encoder", "layers.3", "attention"}));
  EXPECT_EQ(name_scope_of("model/dense/MatMul"), (std::vector<std::string>{"model", "dense"}));
  EXPECT_TRUE(name_scope_of("MatMul_12").empty());
  EXPECT_TRUE(name_scope_of("/Constant_3").empty());
  EXPECT_TRUE(name_scope_of("").empty());
  EXPECT_EQ(name_scope_of("//a//b/"), (std::vector<std::string>{"a", "b"}));
}

// Every node not folded is a member of exactly one display node, which display_node_of names;
// a folded Constant maps to a display node reading its value; edges are valid and unique.
void expect_partition(const Graph& g, const GraphHierarchy& h, const DisplayGraph& d,
                      const std::string& what) {
  std::vector<int> seen(g.num_nodes(), 0);
  for (const DisplayNode& n : d.nodes) {
    EXPECT_EQ(is_box(n), n.kind == DisplayNodeKind::kGroup || n.kind == DisplayNodeKind::kScope ||
                             n.kind == DisplayNodeKind::kShapes)
        << what;
    for (NodeId m : n.members) {
      ASSERT_LT(static_cast<size_t>(m), g.num_nodes()) << what;
      ++seen[static_cast<size_t>(m)];
      EXPECT_EQ(d.display_node_of(m), n.id) << what << ": " << g.node(m).name;
    }
    if (n.in_scope >= 0) ASSERT_LT(static_cast<size_t>(n.in_scope), d.open_scopes.size()) << what;
  }
  for (size_t i = 0; i < g.num_nodes(); ++i) {
    const Node& node = g.node(static_cast<NodeId>(i));
    if (!h.folded_constant[i]) {
      EXPECT_EQ(seen[i], 1) << what << ": " << node.name;
      continue;
    }
    EXPECT_EQ(seen[i], 0) << what << ": a folded Constant drawn: " << node.name;
    const int reader = d.display_node_of(static_cast<NodeId>(i));
    ASSERT_GE(reader, 0) << what << ": " << node.name;
    bool reads = false;
    for (NodeId m : d.nodes[static_cast<size_t>(reader)].members) {
      for (ValueId v : g.node(m).inputs) reads = reads || v == node.outputs.front();
      // A body reading it from the outer scope.
      for (ValueId v : g.node(m).implicit_inputs) reads = reads || v == node.outputs.front();
    }
    EXPECT_TRUE(reads) << what << ": " << node.name << " maps to a node not reading it";
  }
  std::set<std::pair<int, int>> pairs;
  for (const DisplayEdge& e : d.edges) {
    ASSERT_LT(static_cast<size_t>(e.from), d.nodes.size()) << what;
    ASSERT_LT(static_cast<size_t>(e.to), d.nodes.size()) << what;
    EXPECT_NE(e.from, e.to) << what;
    EXPECT_TRUE(pairs.insert({e.from, e.to}).second) << what;
  }
  // A frame holds 2 or more things: nodes, boxes or inner frames.
  std::vector<int> items(d.open_scopes.size(), 0);
  for (const DisplayNode& n : d.nodes)
    if (n.in_scope >= 0) ++items[static_cast<size_t>(n.in_scope)];
  for (size_t f = 0; f < d.open_scopes.size(); ++f) {
    EXPECT_LT(d.open_scopes[f].parent, static_cast<int>(f)) << what << ": parent after child";
    if (d.open_scopes[f].parent >= 0) ++items[static_cast<size_t>(d.open_scopes[f].parent)];
  }
  for (size_t f = 0; f < d.open_scopes.size(); ++f)
    EXPECT_GE(items[f], 2) << what << ": a frame around one thing: " << d.open_scopes[f].title;
}

TEST(GraphHierarchy, ScopesOfAnExportedTransformer) {
  const testing::CorpusGraph c = testing::compile_synthetic(2000);
  const Graph& g = *c.model->graph;
  const GraphHierarchy h = build_hierarchy(g, *c.rdp, &c.fusion);
  ASSERT_GE(h.scopes.size(), 3u);
  EXPECT_EQ(h.scopes[0].path, "");
  EXPECT_EQ(h.scopes[1].path, "/encoder");
  EXPECT_EQ(h.scopes[0].nodes, static_cast<int64_t>(g.num_nodes()));  // no Constant nodes
  int layers = 0;
  for (int child : h.scopes[1].children) {
    const NameScope& s = h.scopes[static_cast<size_t>(child)];
    EXPECT_EQ(s.parent, 1);
    EXPECT_EQ(s.depth, 2);
    EXPECT_EQ(s.path, "/encoder/" + s.label);
    ++layers;
  }
  EXPECT_GE(layers, 2000 / 20);
  // Every layer's Shape -> Gather -> Unsqueeze -> Concat arithmetic is one cluster of 7, in the
  // layer's attention scope.
  ASSERT_EQ(h.shape_clusters.size(), static_cast<size_t>(layers));
  for (const auto& cluster : h.shape_clusters) {
    EXPECT_EQ(cluster.size(), 7u);
    std::set<std::string> ops;
    for (NodeId m : cluster) ops.insert(g.node(m).op_type);
    EXPECT_EQ(ops, (std::set<std::string>{"Shape", "Gather", "Unsqueeze", "Concat"}));
    const std::string& scope =
        h.scopes[static_cast<size_t>(h.scope_of_node[static_cast<size_t>(cluster.front())])].path;
    EXPECT_NE(scope.find("/attention"), std::string::npos) << scope;
  }
  // The readable depth: the layers are open only if that stays small; it does not here.
  EXPECT_LE(h.items_when(h.default_expanded, &c.fusion), GraphHierarchy::kDefaultItems);
  EXPECT_TRUE(h.default_expanded.count(1)) << "the encoder is open";
  EXPECT_FALSE(h.default_expanded.count(h.scopes[1].children.front()));
}

TEST(GraphHierarchy, DrawsClosedScopesAsBoxesAndOpensThemOneByOne) {
  const testing::CorpusGraph c = testing::compile_synthetic(2000);
  const Graph& g = *c.model->graph;
  const GraphHierarchy h = build_hierarchy(g, *c.rdp, &c.fusion);
  DisplayState state;
  state.expanded_scopes = h.default_expanded;
  const DisplayGraph collapsed = build_display_graph(*c.model, *c.rdp, &c.fusion, &h, state);
  expect_partition(g, h, collapsed, "default");
  int scope_boxes = 0;
  for (const DisplayNode& n : collapsed.nodes) scope_boxes += n.kind == DisplayNodeKind::kScope;
  EXPECT_EQ(scope_boxes, static_cast<int>(h.scopes[1].children.size()));
  EXPECT_LE(collapsed.nodes.size(), GraphHierarchy::kDefaultItems + 2);  // + input and output
  // One open frame: the encoder.
  ASSERT_EQ(collapsed.open_scopes.size(), 1u);
  EXPECT_EQ(collapsed.open_scopes[0].title, "/encoder");
  // Layers follow each other: a chain of boxes, each reading the one before.
  const int first = collapsed.display_node_of(0);
  ASSERT_GE(first, 0);
  EXPECT_EQ(collapsed.nodes[static_cast<size_t>(first)].kind, DisplayNodeKind::kScope);
  EXPECT_EQ(collapsed.nodes[static_cast<size_t>(first)].label, "layers.0");

  // Opening layer 0 shows its two scopes; opening those shows its nodes, with its shape
  // arithmetic as one box until that is opened too.
  const int layer0 = h.scopes[1].children.front();
  state.expanded_scopes.insert(layer0);
  const DisplayGraph one = build_display_graph(*c.model, *c.rdp, &c.fusion, &h, state);
  expect_partition(g, h, one, "layer 0 open");
  EXPECT_EQ(one.nodes.size(), collapsed.nodes.size() + 1);  // attention + norm for layers.0
  for (int child : h.scopes[static_cast<size_t>(layer0)].children)
    state.expanded_scopes.insert(child);
  const DisplayGraph nodes = build_display_graph(*c.model, *c.rdp, &c.fusion, &h, state);
  expect_partition(g, h, nodes, "layer 0 and its scopes open");
  const int shapes = nodes.display_node_of(0);  // the layer's first node is its Shape
  ASSERT_GE(shapes, 0);
  EXPECT_EQ(nodes.nodes[static_cast<size_t>(shapes)].kind, DisplayNodeKind::kShapes);
  EXPECT_EQ(nodes.nodes[static_cast<size_t>(shapes)].members.size(), 7u);
  // Frames: the encoder, layers.0 and its attention; its norm scope draws one fused group, and
  // a frame around one thing is left out.
  ASSERT_EQ(nodes.open_scopes.size(), 3u);
  EXPECT_EQ(nodes.open_scopes[2].title, "/encoder/layers.0/attention");
  state.expanded_shapes.insert(h.shape_cluster_of[0]);
  const DisplayGraph open = build_display_graph(*c.model, *c.rdp, &c.fusion, &h, state);
  expect_partition(g, h, open, "layer 0 shapes open");
  EXPECT_EQ(open.nodes.size(), nodes.nodes.size() + 6);
  EXPECT_EQ(open.nodes[static_cast<size_t>(open.display_node_of(0))].op, "Shape");
}

TEST(GraphHierarchy, FoldsConstantsAndShapeArithmeticOnEveryCorpusModel) {
  size_t models_with_shapes = 0, models_with_constants = 0;
  for (const auto& c : corpus_graphs()) {
    const Graph& g = *c.model->graph;
    const GraphHierarchy h = build_hierarchy(g, *c.rdp, &c.fusion);
    ASSERT_EQ(h.scope_of_node.size(), g.num_nodes()) << c.name;
    for (size_t i = 0; i < g.num_nodes(); ++i) {
      const Node& node = g.node(static_cast<NodeId>(i));
      if (h.folded_constant[i]) EXPECT_EQ(node.op_type, "Constant") << c.name;
      const int cluster = h.shape_cluster_of[i];
      if (cluster < 0) continue;
      // Shape arithmetic computes small integer values, never from a tensor's contents.
      for (ValueId v : node.outputs) {
        const TensorFact& f = c.rdp->fact(g, v);
        EXPECT_TRUE(is_integer_type(f.dtype) || f.dtype == DataType::kBool)
            << c.name << ": " << node.name;
        ASSERT_TRUE(f.dims) << c.name << ": " << node.name;
        EXPECT_LE(f.dims->size(), 1u) << c.name << ": " << node.name;
      }
      if (node.op_type != "Shape" && node.op_type != "Size")
        for (ValueId v : node.inputs) {
          if (v == kNoValue) continue;
          const Value& value = g.value(v);
          EXPECT_NE(value.kind, ValueKind::kGraphInput) << c.name << ": " << node.name;
        }
    }
    models_with_shapes += !h.shape_clusters.empty();
    models_with_constants +=
        std::count(h.folded_constant.begin(), h.folded_constant.end(), true) > 0;

    DisplayState closed;
    closed.expanded_scopes = h.default_expanded;
    expect_partition(g, h, build_display_graph(*c.model, *c.rdp, &c.fusion, &h, closed),
                     c.name + " default");
    // Everything open: the plain drawing, less the folded Constants.
    DisplayState open;
    for (size_t s = 0; s < h.scopes.size(); ++s) open.expanded_scopes.insert(static_cast<int>(s));
    for (size_t k = 0; k < h.shape_clusters.size(); ++k)
      open.expanded_shapes.insert(static_cast<int>(k));
    const DisplayGraph all = build_display_graph(*c.model, *c.rdp, &c.fusion, &h, open);
    expect_partition(g, h, all, c.name + " open");
    const DisplayGraph plain = build_display_graph(*c.model, *c.rdp, &c.fusion, {});
    const auto folded = std::count(h.folded_constant.begin(), h.folded_constant.end(), true);
    EXPECT_EQ(all.nodes.size() + static_cast<size_t>(folded), plain.nodes.size()) << c.name;
  }
  // The corpus is torch exports: shape arithmetic and Constants in most models.
  EXPECT_GE(models_with_shapes, 3u);
  EXPECT_GE(models_with_constants, 3u);
}

TEST(GraphHierarchy, AHierarchyOfAnotherGraphIsNotUsed) {
  const testing::CorpusGraph c = testing::compile_synthetic(200);
  GraphHierarchy wrong = build_hierarchy(*c.model->graph, *c.rdp, &c.fusion);
  wrong.scope_of_node.pop_back();
  const DisplayGraph d = build_display_graph(*c.model, *c.rdp, &c.fusion, &wrong, {});
  EXPECT_EQ(d.nodes.size(), build_display_graph(*c.model, *c.rdp, &c.fusion, {}).nodes.size());
}

}  // namespace
}  // namespace sod2::studio

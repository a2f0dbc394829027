// build_display_graph on every corpus model, collapsed and with every group expanded: each
// main-graph node is shown exactly once, edges are valid and unique, boxes say what they hold.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "corpus_graphs.h"

namespace sod2::studio {
namespace {

using testing::corpus_graphs;

void expect_consistent(const testing::CorpusGraph& c, const DisplayGraph& d,
                       const std::string& what) {
  const Graph& g = *c.model->graph;
  std::vector<int> seen(g.num_nodes(), 0);
  int inputs = 0, outputs = 0;
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const DisplayNode& n = d.nodes[i];
    EXPECT_EQ(n.id, static_cast<int>(i)) << what;
    EXPECT_EQ(n.is_group_box, n.kind == DisplayNodeKind::kGroup) << what;
    inputs += n.kind == DisplayNodeKind::kGraphInput;
    outputs += n.kind == DisplayNodeKind::kGraphOutput;
    for (NodeId m : n.members) {
      ASSERT_GE(m, 0) << what;
      ASSERT_LT(static_cast<size_t>(m), g.num_nodes()) << what;
      ++seen[static_cast<size_t>(m)];
      EXPECT_EQ(d.display_node_of(m), n.id) << what << " node " << g.node(m).name;
    }
  }
  for (size_t m = 0; m < seen.size(); ++m)
    EXPECT_EQ(seen[m], 1) << what << ": node " << g.node(static_cast<NodeId>(m)).name;
  EXPECT_EQ(outputs, static_cast<int>(g.outputs().size())) << what;
  EXPECT_LE(inputs, static_cast<int>(g.inputs().size())) << what;
  EXPECT_EQ(d.display_node_of(-1), -1);
  EXPECT_EQ(d.display_node_of(static_cast<NodeId>(g.num_nodes())), -1);
  std::set<std::pair<int, int>> pairs;
  for (const DisplayEdge& e : d.edges) {
    ASSERT_GE(e.from, 0) << what;
    ASSERT_GE(e.to, 0) << what;
    ASSERT_LT(static_cast<size_t>(e.from), d.nodes.size()) << what;
    ASSERT_LT(static_cast<size_t>(e.to), d.nodes.size()) << what;
    EXPECT_NE(e.from, e.to) << what;
    EXPECT_TRUE(pairs.insert({e.from, e.to}).second) << what << ": duplicate edge";
    EXPECT_FALSE(e.label.empty()) << what;
  }
}

TEST(DisplayGraph, CorpusIsReadable) { EXPECT_GE(corpus_graphs().size(), 10u); }

TEST(DisplayGraph, CollapsedShowsEachNodeOnceAndOneBoxPerGroup) {
  for (const auto& c : corpus_graphs()) {
    const DisplayGraph d = build_display_graph(*c.model, *c.rdp, &c.fusion, {});
    expect_consistent(c, d, c.name + " collapsed");
    size_t hidden = 0, multi = 0;
    for (const auto& grp : c.fusion.groups)
      if (grp.nodes.size() >= 2) hidden += grp.nodes.size() - 1, ++multi;
    size_t boxes = 0, ops = 0;
    for (const DisplayNode& n : d.nodes) {
      boxes += n.is_group_box;
      ops += n.kind == DisplayNodeKind::kOp;
      if (!n.is_group_box) continue;
      EXPECT_GE(n.members.size(), 2u) << c.name;
      EXPECT_NE(n.label.find("(" + std::to_string(n.members.size()) + ")"), std::string::npos)
          << c.name << ": " << n.label;
      EXPECT_EQ(n.members, c.fusion.groups[static_cast<size_t>(n.group)].nodes) << c.name;
    }
    EXPECT_EQ(boxes, multi) << c.name;
    EXPECT_EQ(boxes + ops, c.model->graph->num_nodes() - hidden) << c.name;
  }
}

TEST(DisplayGraph, ExpandedShowsEveryNodeOnItsOwn) {
  for (const auto& c : corpus_graphs()) {
    const DisplayGraph d =
        build_display_graph(*c.model, *c.rdp, &c.fusion, testing::all_multi_node_groups(c.fusion));
    expect_consistent(c, d, c.name + " expanded");
    size_t ops = 0;
    for (const DisplayNode& n : d.nodes) {
      EXPECT_FALSE(n.is_group_box) << c.name;
      if (n.kind != DisplayNodeKind::kOp) continue;
      ++ops;
      ASSERT_EQ(n.members.size(), 1u);
      EXPECT_EQ(n.group, c.fusion.group_of[static_cast<size_t>(n.members[0])]) << c.name;
    }
    EXPECT_EQ(ops, c.model->graph->num_nodes()) << c.name;
  }
}

TEST(DisplayGraph, WithoutFusionNothingCollapses) {
  for (const auto& c : corpus_graphs()) {
    const DisplayGraph d = build_display_graph(*c.model, *c.rdp, nullptr, {});
    expect_consistent(c, d, c.name + " unfused");
    for (const DisplayNode& n : d.nodes) EXPECT_EQ(n.group, -1);
  }
}

TEST(DisplayGraph, EdgesCarrySymbolicShapes) {
  // Every corpus model has dynamic inputs, so some edge must show a named (symbolic) dim.
  for (const auto& c : corpus_graphs()) {
    const DisplayGraph d = build_display_graph(*c.model, *c.rdp, &c.fusion, {});
    bool symbolic = false;
    for (const DisplayEdge& e : d.edges) {
      EXPECT_TRUE(e.label == "rank ?" || (e.label.front() == '[' && e.label.back() == ']'))
          << c.name << ": " << e.label;
      for (char ch : e.label) symbolic = symbolic || std::isalpha(static_cast<unsigned char>(ch));
    }
    EXPECT_TRUE(symbolic) << c.name;
  }
}

TEST(DisplayGraph, ControlFlowNodesCountTheirBodies) {
  int with_bodies = 0;
  for (const auto& c : corpus_graphs()) {
    const DisplayGraph d = build_display_graph(*c.model, *c.rdp, &c.fusion, {});
    for (const DisplayNode& n : d.nodes) {
      if (!n.has_subgraphs) {
        EXPECT_EQ(n.subgraph_nodes, 0);
        continue;
      }
      ++with_bodies;
      EXPECT_GT(n.subgraph_nodes, 0) << c.name << ": " << n.label;
    }
  }
  EXPECT_GT(with_bodies, 0) << "the corpus has If/Loop models (skipnet, lstm_greedy...)";
}

}  // namespace
}  // namespace sod2::studio

namespace sod2::studio {
namespace {

// Kahn's algorithm: true when the edges leave no cycle (layouts rank an acyclic drawing).
bool acyclic(const DisplayGraph& d) {
  std::vector<int> indegree(d.nodes.size(), 0);
  std::vector<std::vector<int>> succ(d.nodes.size());
  for (const DisplayEdge& e : d.edges) {
    succ[static_cast<size_t>(e.from)].push_back(e.to);
    ++indegree[static_cast<size_t>(e.to)];
  }
  std::vector<int> ready;
  for (size_t i = 0; i < d.nodes.size(); ++i)
    if (indegree[i] == 0) ready.push_back(static_cast<int>(i));
  size_t visited = 0;
  while (!ready.empty()) {
    const int n = ready.back();
    ready.pop_back();
    ++visited;
    for (int s : succ[static_cast<size_t>(n)])
      if (--indegree[static_cast<size_t>(s)] == 0) ready.push_back(s);
  }
  return visited == d.nodes.size();
}

// Opening every If/Loop/Scan of every corpus model (every depth: a node is opened when its
// display node exists) draws each body node once, inside an amber frame's body, and keeps the
// drawing acyclic with each body's results flowing into its control-flow node.
TEST(DisplayGraphBodies, OpeningEveryControlFlowNodeDrawsItsBodiesAcyclically) {
  int opened_models = 0;
  for (const testing::CorpusGraph& c : testing::corpus_graphs()) {
    std::set<const Node*> open;
    for (int round = 0; round < 8; ++round) {  // open what the last round revealed
      const DisplayGraph d = build_display_graph(*c.model, *c.rdp, nullptr, {}, open);
      const size_t before = open.size();
      for (const DisplayNode& n : d.nodes)
        if (n.node && n.has_subgraphs) open.insert(n.node);
      if (open.size() == before) break;
    }
    if (open.empty()) continue;
    ++opened_models;
    const DisplayGraph d = build_display_graph(*c.model, *c.rdp, nullptr, {}, open);
    EXPECT_TRUE(acyclic(d)) << c.name;
    size_t body_nodes = 0;
    for (const DisplayNode& n : d.nodes) {
      if (!n.body_of) continue;
      ++body_nodes;
      EXPECT_TRUE(open.count(n.body_of)) << c.name << " " << n.label;
      EXPECT_FALSE(n.body.empty()) << c.name;
      ASSERT_NE(n.graph, nullptr);
      EXPECT_EQ(&n.graph->node(n.node_id), n.node) << c.name;
    }
    // Every node of every graph is drawn once: bodies of opened nodes add all their nodes.
    EXPECT_EQ(body_nodes + c.model->graph->num_nodes(), c.model->graph->total_nodes()) << c.name;
    for (const DisplayNode& n : d.nodes)
      if (n.node && n.has_subgraphs) EXPECT_TRUE(n.body_expanded) << c.name << " " << n.label;
    // A body's nodes reach its control-flow node.
    for (const DisplayNode& n : d.nodes) {
      if (!n.body_expanded) continue;
      bool fed_by_body = false;
      for (const DisplayEdge& e : d.edges)
        fed_by_body =
            fed_by_body || (e.to == n.id && d.nodes[static_cast<size_t>(e.from)].body_of == n.node);
      EXPECT_TRUE(fed_by_body) << c.name << " " << n.label;
    }
    // Closed again, the drawing is the plain one.
    EXPECT_EQ(build_display_graph(*c.model, *c.rdp, nullptr, {}, {}).nodes.size(),
              d.nodes.size() - body_nodes)
        << c.name;
  }
  EXPECT_GE(opened_models, 2);  // skipnet and ranet (If), lstm_greedy (Loop)
}

}  // namespace
}  // namespace sod2::studio

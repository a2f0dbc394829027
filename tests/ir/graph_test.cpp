// Graph building, linking, ordering and traversal on hand-built graphs.
#include <gtest/gtest.h>

#include "core/ir/graph.h"

namespace sod2 {
namespace {

ValueId add(Graph& g, const std::string& name, ValueKind kind = ValueKind::kNodeOutput) {
  Value v;
  v.name = name;
  v.kind = kind;
  return *g.add_value(std::move(v));
}

NodeId add_node(Graph& g, const std::string& name, std::vector<ValueId> in,
                std::vector<ValueId> out) {
  Node n;
  n.name = name;
  n.op_type = "Op";
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return g.add_node(std::move(n));
}

Attribute graph_attr(const std::string& name, std::shared_ptr<Graph> g) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kGraph;
  a.g = std::move(g);
  return a;
}

TEST(Graph, RejectsDuplicateNames) {
  Graph g("g");
  add(g, "x");
  Value dup;
  dup.name = "x";
  auto r = g.add_value(dup);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'x' is defined more than once"), std::string::npos);
}

TEST(Graph, LinksProducersAndConsumers) {
  Graph g("g");
  const ValueId x = add(g, "x", ValueKind::kGraphInput), a = add(g, "a"), b = add(g, "b");
  add_node(g, "n0", {x}, {a});
  add_node(g, "n1", {a, a, x}, {b});  // a node reading a value twice is one consumer
  g.link();
  EXPECT_EQ(g.value(a).producer, 0);
  EXPECT_EQ(g.value(b).producer, 1);
  EXPECT_EQ(g.value(a).consumers, std::vector<NodeId>{1});
  EXPECT_EQ(g.value(x).consumers, (std::vector<NodeId>{0, 1}));
}

TEST(Graph, TopologicalOrderKeepsFileOrderWhereFree) {
  Graph g("g");
  const ValueId x = add(g, "x", ValueKind::kGraphInput);
  const ValueId a = add(g, "a"), b = add(g, "b"), c = add(g, "c");
  add_node(g, "uses_b", {b}, {c});  // listed first, must run last
  add_node(g, "makes_a", {x}, {a});
  add_node(g, "makes_b", {a}, {b});
  g.link();
  auto order = g.topological_order();
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<NodeId>{1, 2, 0}));
}

TEST(Graph, ImplicitInputsOrderNodes) {
  Graph g("g");
  const ValueId a = add(g, "a"), b = add(g, "b");
  Node owner;
  owner.name = "if";
  owner.op_type = "If";
  owner.outputs = {b};
  owner.implicit_inputs = {a};  // its subgraph reads a
  g.add_node(owner);
  add_node(g, "makes_a", {}, {a});
  g.link();
  auto order = g.topological_order();
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<NodeId>{1, 0}));
}

TEST(Graph, CycleIsAnErrorNamingANode) {
  Graph g("g");
  const ValueId a = add(g, "a"), b = add(g, "b");
  add_node(g, "first", {b}, {a});
  add_node(g, "second", {a}, {b});
  g.link();
  auto order = g.topological_order();
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("cycle"), std::string::npos);
  EXPECT_NE(order.status().message().find("node 'first'"), std::string::npos);
}

TEST(Graph, CycleErrorNamesANodeOnTheCycleNotOneDownstream) {
  Graph g("g");
  const ValueId x = add(g, "x", ValueKind::kGraphInput), s = add(g, "s"), d = add(g, "d");
  add_node(g, "downstream", {s}, {d});  // listed first, only reads the cycle's value
  add_node(g, "looping_add", {x, s}, {s});
  g.link();
  auto order = g.topological_order();
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("node 'looping_add'"), std::string::npos)
      << order.status().message();
}

TEST(Graph, VisitsNestedSubgraphsDepthFirst) {
  auto root = std::make_shared<Graph>("root");
  auto mid = std::make_shared<Graph>("mid", root.get());
  auto leaf = std::make_shared<Graph>("leaf", mid.get());
  Node in_mid;
  in_mid.name = "inner";
  in_mid.op_type = "If";
  in_mid.attributes.push_back(graph_attr("then_branch", leaf));
  mid->add_node(in_mid);
  Node in_root;
  in_root.name = "outer";
  in_root.op_type = "Loop";
  in_root.attributes.push_back(graph_attr("body", mid));
  root->add_node(in_root);
  std::vector<std::string> seen;
  visit_graphs(*root, [&](const Graph& g, const Node* owner) {
    seen.push_back(g.name() + "@" + (owner ? owner->name : "-"));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"root@-", "mid@outer", "leaf@inner"}));
  EXPECT_EQ(root->total_nodes(), 2u);
  EXPECT_EQ(root->total_subgraphs(), 2u);
  EXPECT_EQ(leaf->depth(), 2);
}

}  // namespace
}  // namespace sod2

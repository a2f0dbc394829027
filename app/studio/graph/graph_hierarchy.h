// What the graph view can fold so that a model reads like its source (issue: hierarchy, as
// Model Explorer and Netron do it): the name scopes exporters write into node names
// ("/encoder/layers.3/attention/MatMul"), the shape arithmetic that feeds Reshape and Expand
// (folded into one "shape computation" box per connected cluster), and Constant nodes (drawn
// inside their readers, as initializers are). Facts of the graph, computed once per document; no
// Qt, so it is built and tested headless and on the layout worker.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/opt/fusion.h"
#include "core/rdp/rdp.h"

namespace sod2::studio {

struct NameScope {
  std::string path;   // "/encoder/layers.3": the scope's components joined by '/'; "" for the root
  std::string label;  // the last component ("layers.3"); "" for the root
  int parent = -1;    // -1 for the root
  int depth = 0;      // the root is 0
  std::vector<int> children;  // in order of first appearance
  int64_t nodes = 0;  // main-graph nodes drawn inside it, at any depth (folded constants not)
};

struct GraphHierarchy {
  // scopes[0] is the root. A scope exists for every proper prefix of a node name's '/'-separated
  // components (the last component names the node itself).
  std::vector<NameScope> scopes;
  // Per main-graph node: the scope it is drawn in. A node of a multi-node fused group or of a
  // shape cluster is drawn in the deepest scope holding all of the unit, so neither is cut by a
  // scope's box.
  std::vector<int> scope_of_node;
  // Per main-graph node: its shape cluster (index into shape_clusters), or -1.
  std::vector<int> shape_cluster_of;
  // Nodes that compute only from tensor shapes and constants, into integer or bool values of
  // rank <= 1 (Shape, Gather on a shape, Concat of dims...), connected through the values they
  // pass each other; clusters of at least 2 nodes, each in node order.
  std::vector<std::vector<NodeId>> shape_clusters;
  // Per main-graph node: a Constant whose outputs are only read by nodes (none is a graph
  // output), drawn inside its readers like an initializer.
  std::vector<bool> folded_constant;
  // The scopes open when a model is first shown: every scope down to the deepest level at which
  // the drawing still has at most `kDefaultItems` boxes and nodes.
  std::set<int> default_expanded;

  static constexpr size_t kDefaultItems = 160;

  // The scope whose box holds `scope` when `expanded` scopes are open: the outermost closed
  // ancestor that holds 2 or more nodes (itself included); -1 when every one is open.
  int closed_ancestor(int scope, const std::set<int>& expanded) const;
  // Display units (nodes, collapsed fused groups and shape clusters, scope boxes) drawn when
  // `expanded` scopes are open and every fused group and shape cluster is collapsed.
  size_t items_when(const std::set<int>& expanded, const opt::FusionPlan* groups) const;
};

// The name scopes of nodes known by their names alone (a compiled package's nodes): each node in
// its own scope, no shape cluster, no folded constant, and the readable depth open.
GraphHierarchy build_name_hierarchy(const std::vector<std::string>& node_names);

// The same for a model's main graph, whose shape clusters and multi-node fused groups are each
// drawn whole in the deepest scope holding all of it, and whose folded Constants are not counted.
// `groups` may be null (no fusion); `rdp` without facts for the main graph falls back to the
// values' declared dtypes and shapes.
GraphHierarchy build_hierarchy(const Graph& graph, const RdpResult& rdp,
                               const opt::FusionPlan* groups);

// The scope components of a node name: "/encoder/layers.3/attention/MatMul" gives
// {"encoder", "layers.3", "attention"}; "MatMul_12" gives none. Empty components are skipped.
std::vector<std::string> name_scope_of(const std::string& node_name);

}  // namespace sod2::studio

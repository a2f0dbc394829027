// What the graph view draws (DESIGN §8): the main graph with each collapsed fused group as one
// box, graph inputs and outputs as small nodes of their own, and edges labelled with the
// symbolic shape RDP proved for the value they carry. No Qt: built and tested headless, and on
// the layout worker thread.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/studio/graph/graph_hierarchy.h"
#include "core/ir/model.h"
#include "core/ops/op_class.h"
#include "core/opt/fusion.h"
#include "core/rdp/rdp.h"

namespace sod2::studio {

enum class DisplayNodeKind {
  kOp,           // one main-graph node (possibly a member of an expanded group)
  kGroup,        // a collapsed fused group of >= 2 nodes
  kScope,        // a closed name scope ("/encoder/layers.3"): every node drawn inside it
  kShapes,       // a collapsed cluster of shape arithmetic (GraphHierarchy::shape_clusters)
  kGraphInput,   // a graph input (initializers are weights and are not drawn)
  kGraphOutput,  // a graph output
};

struct DisplayNode {
  int id = -1;  // index in DisplayGraph::nodes
  DisplayNodeKind kind = DisplayNodeKind::kOp;
  std::string label;  // node name; "Conv+Relu (2)" for a group box; value name for inputs/outputs
  std::string op;     // op type; the group's kind ("contraction") for a box; "input"/"output"
  // The node's class; for a group box the most dynamic class among its members.
  OpClass op_class = OpClass::kUnknown;
  int group = -1;               // fusion group id (FusionPlan::groups index), -1 for none
  std::vector<NodeId> members;  // core node ids of the main graph, in topological order
  bool is_group_box = false;    // kind == kGroup
  int scope = -1;               // kScope: its GraphHierarchy scope
  int shape_cluster = -1;       // kShapes, and a node of an expanded cluster: its cluster
  bool has_subgraphs = false;   // an If/Loop/Scan (or a box holding one)
  int subgraph_nodes = 0;       // nodes inside those bodies, at every depth
  // kOp: the node drawn and the graph holding it (the main graph, or an expanded body).
  const Graph* graph = nullptr;
  const Node* node = nullptr;
  NodeId node_id = kNoNode;  // in `graph`
  // In an expanded body: the If/Loop/Scan whose body it is, and the body's name.
  const Node* body_of = nullptr;
  std::string body;
  bool body_expanded = false;  // an If/Loop/Scan drawn with its bodies open
  // The innermost open name scope it is drawn in (index into DisplayGraph::open_scopes), -1 for
  // none.
  int in_scope = -1;
};

// An open name scope, drawn as a frame around what is drawn inside it.
struct DisplayScopeFrame {
  int scope = -1;     // GraphHierarchy scope id
  int parent = -1;    // the enclosing open scope (index into DisplayGraph::open_scopes), or -1
  std::string title;  // its path, "/encoder/layers.3"
};

struct DisplayEdge {
  int from = -1;
  int to = -1;
  std::string label;  // symbolic dims of the value, e.g. "[batch,seq,128]"; "rank ?" if unknown
  ValueId value = kNoValue;  // the main-graph value it carries (the first one); none in bodies
};

// The main graph's node names and op types by core NodeId, for a drawing whose nodes have no
// `graph` to read them from (a compiled package's).
struct CoreNodeNames {
  std::vector<std::string> names;
  std::vector<std::string> ops;
};

struct DisplayGraph {
  std::vector<DisplayNode> nodes;
  std::vector<DisplayEdge> edges;    // no duplicates (one per from/to pair), no self-edges
  std::vector<int> display_of_node;  // per core NodeId of the main graph: its display node id
  std::vector<DisplayScopeFrame> open_scopes;  // a parent before its children
  // A package's drawing: what its boxes' members are called (find searches them); null for a
  // model's, whose nodes' `graph` names them.
  std::shared_ptr<const CoreNodeNames> core_names;

  // The display node that shows core node `node` (a folded Constant: its first reader's); -1
  // when out of range.
  int display_node_of(NodeId node) const;
};

// What the user opened: the boxes drawn node by node.
struct DisplayState {
  std::set<int> expanded_groups;
  std::set<const Node*> expanded_bodies;
  std::set<int> expanded_scopes;  // with a hierarchy: the name scopes drawn open
  std::set<int> expanded_shapes;  // with a hierarchy: shape clusters drawn node by node
  bool operator==(const DisplayState&) const = default;
};

// Whether a display node stands for several nodes the user can open (a double border).
bool is_box(const DisplayNode& node);

// One display node per main-graph node, except that a fused group of >= 2 nodes not in
// `expanded_groups` becomes one box. Members of an expanded group keep their `group` so the
// view can frame them. `groups` may be null (no fusion: nothing is collapsed).
//
// An If/Loop/Scan in `expanded_bodies` (drawn as a node of its own, not inside a box) also gets
// its bodies' nodes, at any depth: edges come from the outer values they read and go from a
// body's outputs to the control-flow node, where its results leave (so the drawing stays
// acyclic; a body's formal inputs — iteration count, carried values — are not drawn as edges).
DisplayGraph build_display_graph(const Model& model, const RdpResult& rdp,
                                 const opt::FusionPlan* groups,
                                 const std::set<int>& expanded_groups,
                                 const std::set<const Node*>& expanded_bodies = {});

// The same with a hierarchy (null: as above): a node whose scope has a closed ancestor
// (GraphHierarchy::closed_ancestor) is drawn inside that scope's box, then a node of a shape
// cluster not in `expanded_shapes` inside the cluster's box; folded Constants are not drawn (their
// values, like initializers', have no edges). Boxes take the place of their first node.
DisplayGraph build_display_graph(const Model& model, const RdpResult& rdp,
                                 const opt::FusionPlan* groups, const GraphHierarchy* hierarchy,
                                 const DisplayState& state);

// The name-scope step of both drawings (a model's, above, and a compiled package's): every drawn
// node standing for main-graph nodes (`members`, indexing `hierarchy.scope_of_node`) whose scope
// has a closed ancestor (GraphHierarchy::closed_ancestor) goes into that scope's kScope box, which
// takes the place of the first of them; a box is labelled with the scope's label, its op is
// "scope, N nodes", its class its most dynamic member's, and its members are in the file's order.
// `display_of_node` and the edges follow (edges deduplicated, none inside a box); open scopes
// with 2 or more nodes get a frame (`open_scopes`, `in_scope`), a frame holding fewer than 2
// items being dropped. Nodes without members (inputs, outputs) are kept as they are. Does
// nothing when `hierarchy` was made for another graph (its node count is not
// `graph.display_of_node`'s).
void apply_name_scopes(DisplayGraph& graph, const GraphHierarchy& hierarchy,
                       const std::set<int>& expanded_scopes);

// "[batch,seq,128]"; "?" for an unknown dim, "rank ?" when the rank is unknown.
std::string dims_label(const TensorFact& fact);

// Which fill the legend and the view use for a node: its class, or input/output.
const char* display_class_name(const DisplayNode& node);

}  // namespace sod2::studio

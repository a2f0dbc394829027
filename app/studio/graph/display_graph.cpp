#include "app/studio/graph/display_graph.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/ops/op_registry.h"

namespace sod2::studio {
namespace {

// How dynamic a class is, for a box's colour: a group is as dynamic as its most dynamic member.
int dynamism(OpClass c) {
  switch (c) {
    case OpClass::kISDO: return 0;
    case OpClass::kISDOS: return 1;
    case OpClass::kISVDOS: return 2;
    case OpClass::kEDO: return 3;
    case OpClass::kUnknown: return 4;
  }
  return 4;
}

int nested_nodes(const Node& node) {
  int total = 0;
  for (const Graph* g : node.subgraphs()) total += static_cast<int>(g->total_nodes());
  return total;
}

// What a box takes from each member: it is as dynamic as its most dynamic member and holds its
// members' bodies.
void absorb(DisplayNode& box, const Node& member, bool first) {
  const OpClass c = op_class_of(member);
  if (first || dynamism(c) > dynamism(box.op_class)) box.op_class = c;
  box.subgraph_nodes += nested_nodes(member);
  box.has_subgraphs = box.has_subgraphs || !member.subgraphs().empty();
}

// "Conv+Relu (2)": the distinct op types in order, at most three, then the member count.
std::string group_label(const Graph& graph, const std::vector<NodeId>& members) {
  constexpr size_t kMaxOps = 3;
  std::vector<std::string> ops;
  bool more = false;
  for (NodeId m : members) {
    const std::string& op = graph.node(m).op_type;
    bool seen = false;
    for (const std::string& o : ops) seen = seen || o == op;
    if (seen) continue;
    if (ops.size() == kMaxOps) {
      more = true;
      break;
    }
    ops.push_back(op);
  }
  std::string label;
  for (const std::string& o : ops) label += (label.empty() ? "" : "+") + o;
  if (more) label += "+...";
  return label + " (" + std::to_string(members.size()) + ")";
}

// Collects edges, keeping the first value seen for each (from, to) pair.
class EdgeSet {
 public:
  explicit EdgeSet(std::vector<DisplayEdge>* out) : out_(out) {}
  // `label()` makes the label of an edge kept: most candidates (inside a box, or repeated) are
  // not, and a label is RDP's dims printed.
  template <typename Label>
  void add(int from, int to, ValueId value, Label&& label) {
    if (from < 0 || to < 0 || from == to) return;
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32) | static_cast<uint32_t>(to);
    if (!seen_.insert(key).second) return;
    out_->push_back({from, to, label(), value});
  }

 private:
  std::vector<DisplayEdge>* out_;
  std::unordered_set<uint64_t> seen_;
};

// Per scope, the outermost closed scope holding it (GraphHierarchy::closed_ancestor), worked out
// once per scope: 50,000 nodes share a few thousand scopes.
class ClosedScopes {
 public:
  ClosedScopes(const GraphHierarchy& hierarchy, const std::set<int>& expanded)
      : hierarchy_(hierarchy), expanded_(expanded), memo_(hierarchy.scopes.size(), -2) {}
  int of(int scope) {
    if (scope < 0 || static_cast<size_t>(scope) >= memo_.size())
      return hierarchy_.closed_ancestor(scope, expanded_);
    int& c = memo_[static_cast<size_t>(scope)];
    if (c == -2) c = hierarchy_.closed_ancestor(scope, expanded_);
    return c;
  }

 private:
  const GraphHierarchy& hierarchy_;
  const std::set<int>& expanded_;
  std::vector<int> memo_;  // -2: not worked out yet
};

// A frame around one thing says nothing: a frame holding fewer than 2 items (nodes or kept
// inner frames) is dropped and what it held belongs to its parent.
void drop_lone_frames(DisplayGraph& out) {
  const size_t frames = out.open_scopes.size();
  if (frames == 0) return;
  std::vector<int> items(frames, 0);
  for (const DisplayNode& n : out.nodes)
    if (n.in_scope >= 0) ++items[static_cast<size_t>(n.in_scope)];
  std::vector<bool> kept(frames, false);
  for (size_t f = frames; f-- > 0;) {  // children come after their parent
    kept[f] = items[f] >= 2;
    const int parent = out.open_scopes[f].parent;
    if (parent >= 0) items[static_cast<size_t>(parent)] += kept[f] ? 1 : items[f];
  }
  std::vector<int> index(frames, -1);
  std::vector<DisplayScopeFrame> compact;
  for (size_t f = 0; f < frames; ++f) {
    const int parent = out.open_scopes[f].parent;
    const int new_parent = parent >= 0 ? index[static_cast<size_t>(parent)] : -1;
    if (!kept[f]) {
      index[f] = new_parent;
      continue;
    }
    index[f] = static_cast<int>(compact.size());
    compact.push_back({out.open_scopes[f].scope, new_parent, out.open_scopes[f].title});
  }
  for (DisplayNode& n : out.nodes)
    if (n.in_scope >= 0) n.in_scope = index[static_cast<size_t>(n.in_scope)];
  out.open_scopes = std::move(compact);
}

}  // namespace

int DisplayGraph::display_node_of(NodeId node) const {
  if (node < 0 || static_cast<size_t>(node) >= display_of_node.size()) return -1;
  return display_of_node[static_cast<size_t>(node)];
}

std::string dims_label(const TensorFact& fact) {
  if (!fact.dims) return "rank ?";
  std::string out = "[";
  for (size_t i = 0; i < fact.dims->size(); ++i) {
    if (i) out += ",";
    const Dim& d = (*fact.dims)[i];
    out += d ? d->to_string() : std::string("?");
  }
  return out + "]";
}

const char* display_class_name(const DisplayNode& node) {
  switch (node.kind) {
    case DisplayNodeKind::kGraphInput: return "input";
    case DisplayNodeKind::kGraphOutput: return "output";
    case DisplayNodeKind::kOp:
    case DisplayNodeKind::kGroup:
    case DisplayNodeKind::kScope:
    case DisplayNodeKind::kShapes: break;
  }
  return op_class_name(node.op_class);
}

bool is_box(const DisplayNode& node) {
  return node.kind == DisplayNodeKind::kGroup || node.kind == DisplayNodeKind::kScope ||
         node.kind == DisplayNodeKind::kShapes;
}

void apply_name_scopes(DisplayGraph& graph, const GraphHierarchy& hierarchy,
                       const std::set<int>& expanded_scopes) {
  const size_t num_nodes = hierarchy.scope_of_node.size();
  // A hierarchy made for another graph is not used rather than read out of range.
  if (graph.display_of_node.size() != num_nodes) return;
  // The scope a drawn node is in: its first member's (a unit is never cut by a scope); -1 for
  // what stands for no main-graph node.
  auto scope_of = [&](const DisplayNode& n) -> int {
    if (n.members.empty() || n.members.front() < 0 ||
        static_cast<size_t>(n.members.front()) >= num_nodes)
      return -1;
    return hierarchy.scope_of_node[static_cast<size_t>(n.members.front())];
  };

  // Each node whose scope has a closed ancestor goes into that scope's box, made where its first
  // node was; the others keep their order.
  std::vector<DisplayNode> nodes;
  std::vector<int> moved(graph.nodes.size(), -1);  // old display id -> new
  std::unordered_map<int, int> box_of_scope;
  ClosedScopes closed(hierarchy, expanded_scopes);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    DisplayNode& n = graph.nodes[k];
    const int scope = closed.of(scope_of(n));
    if (scope < 0) {
      n.id = static_cast<int>(nodes.size());
      moved[k] = n.id;
      nodes.push_back(std::move(n));
      continue;
    }
    auto it = box_of_scope.find(scope);
    if (it == box_of_scope.end()) {
      const NameScope& s = hierarchy.scopes[static_cast<size_t>(scope)];
      DisplayNode box;
      box.id = static_cast<int>(nodes.size());
      box.kind = DisplayNodeKind::kScope;
      box.label = s.label;
      box.op = "scope, " + std::to_string(s.nodes) + " nodes";
      box.scope = scope;
      nodes.push_back(std::move(box));
      it = box_of_scope.emplace(scope, nodes.back().id).first;
    }
    DisplayNode& box = nodes[static_cast<size_t>(it->second)];
    // As dynamic as its most dynamic member, holding its members' bodies.
    if (box.members.empty() || dynamism(n.op_class) > dynamism(box.op_class))
      box.op_class = n.op_class;
    box.subgraph_nodes += n.subgraph_nodes;
    box.has_subgraphs = box.has_subgraphs || n.has_subgraphs;
    box.members.insert(box.members.end(), n.members.begin(), n.members.end());
    moved[k] = it->second;
  }
  for (const auto& [scope, box] : box_of_scope) {
    std::vector<NodeId>& members = nodes[static_cast<size_t>(box)].members;
    std::sort(members.begin(), members.end());  // the file's order
  }
  graph.nodes = std::move(nodes);
  for (int& d : graph.display_of_node)
    if (d >= 0 && static_cast<size_t>(d) < moved.size()) d = moved[static_cast<size_t>(d)];
  std::vector<DisplayEdge> edges;
  EdgeSet kept(&edges);
  for (DisplayEdge& e : graph.edges)
    if (e.from >= 0 && e.to >= 0 && static_cast<size_t>(e.from) < moved.size() &&
        static_cast<size_t>(e.to) < moved.size())
      kept.add(moved[static_cast<size_t>(e.from)], moved[static_cast<size_t>(e.to)], e.value,
               [&e] { return std::move(e.label); });
  graph.edges = std::move(edges);

  // Open scopes with 2 or more nodes get a frame; a node is framed by its innermost one.
  graph.open_scopes.clear();
  std::unordered_map<int, int> frame_of_scope;
  std::function<int(int)> frame_of = [&](int scope) -> int {
    if (scope <= 0) return -1;
    if (auto it = frame_of_scope.find(scope); it != frame_of_scope.end()) return it->second;
    const NameScope& s = hierarchy.scopes[static_cast<size_t>(scope)];
    const int parent = frame_of(s.parent);
    int frame = parent;
    if (s.nodes >= 2) {
      frame = static_cast<int>(graph.open_scopes.size());
      graph.open_scopes.push_back({scope, parent, s.path});
    }
    frame_of_scope[scope] = frame;
    return frame;
  };
  for (DisplayNode& n : graph.nodes) {
    if (n.kind == DisplayNodeKind::kScope)
      n.in_scope = frame_of(hierarchy.scopes[static_cast<size_t>(n.scope)].parent);
    else if (!n.members.empty())
      n.in_scope = frame_of(scope_of(n));
  }
  drop_lone_frames(graph);
}

DisplayGraph build_display_graph(const Model& model, const RdpResult& rdp,
                                 const opt::FusionPlan* groups,
                                 const std::set<int>& expanded_groups,
                                 const std::set<const Node*>& expanded_bodies) {
  DisplayState state;
  state.expanded_groups = expanded_groups;
  state.expanded_bodies = expanded_bodies;
  return build_display_graph(model, rdp, groups, nullptr, state);
}

DisplayGraph build_display_graph(const Model& model, const RdpResult& rdp,
                                 const opt::FusionPlan* groups, const GraphHierarchy* hierarchy,
                                 const DisplayState& state) {
  const std::set<int>& expanded_groups = state.expanded_groups;
  const std::set<const Node*>& expanded_bodies = state.expanded_bodies;
  DisplayGraph out;
  const Graph& graph = *model.graph;
  const size_t num_nodes = graph.num_nodes();
  out.display_of_node.assign(num_nodes, -1);
  out.nodes.reserve(num_nodes + graph.inputs().size() + graph.outputs().size());
  auto add_node = [&out](DisplayNode n) {
    n.id = static_cast<int>(out.nodes.size());
    n.is_group_box = n.kind == DisplayNodeKind::kGroup;
    out.nodes.push_back(std::move(n));
    return out.nodes.back().id;
  };
  auto label_of = [&](ValueId v) {
    return rdp.has_facts(graph) ? dims_label(rdp.fact(graph, v)) : std::string();
  };

  std::unordered_map<ValueId, int> input_node;
  for (ValueId v : graph.inputs()) {
    if (graph.value(v).kind != ValueKind::kGraphInput || input_node.count(v)) continue;
    DisplayNode n;
    n.kind = DisplayNodeKind::kGraphInput;
    n.label = graph.value(v).name;
    n.op = "input";
    input_node[v] = add_node(std::move(n));
  }

  // A group collapses when it has >= 2 members, a valid id and was not expanded.
  auto group_of = [&](NodeId id) -> int {
    if (!groups || static_cast<size_t>(id) >= groups->group_of.size()) return -1;
    const int g = groups->group_of[static_cast<size_t>(id)];
    return g >= 0 && static_cast<size_t>(g) < groups->groups.size() ? g : -1;
  };
  auto collapsed = [&](int g) {
    return g >= 0 && groups->groups[static_cast<size_t>(g)].nodes.size() >= 2 &&
           !expanded_groups.count(g);
  };

  // A hierarchy made for another graph is not used rather than read out of range.
  if (hierarchy && (hierarchy->scope_of_node.size() != num_nodes ||
                    hierarchy->shape_cluster_of.size() != num_nodes ||
                    hierarchy->folded_constant.size() != num_nodes))
    hierarchy = nullptr;
  auto folded = [&](size_t i) { return hierarchy && hierarchy->folded_constant[i]; };
  std::optional<ClosedScopes> closed;
  if (hierarchy) closed.emplace(*hierarchy, state.expanded_scopes);
  // Shape boxes, by cluster id: created at their first node.
  std::unordered_map<int, int> shape_box;

  // Node order: a box takes the place of its first member in the file's order.
  for (size_t i = 0; i < num_nodes; ++i) {
    const NodeId id = static_cast<NodeId>(i);
    if (out.display_of_node[i] >= 0 || folded(i)) continue;  // in a box already placed
    const Node& node = graph.node(id);
    if (const int cluster = hierarchy ? hierarchy->shape_cluster_of[i] : -1;
        cluster >= 0 && !state.expanded_shapes.count(cluster)) {
      auto it = shape_box.find(cluster);
      if (it == shape_box.end()) {
        DisplayNode box;
        box.kind = DisplayNodeKind::kShapes;
        box.label = "shape computation";
        box.op = group_label(graph, hierarchy->shape_clusters[static_cast<size_t>(cluster)]);
        box.shape_cluster = cluster;
        it = shape_box.emplace(cluster, add_node(std::move(box))).first;
      }
      DisplayNode& box = out.nodes[static_cast<size_t>(it->second)];
      absorb(box, node, box.members.empty());
      box.members.push_back(id);
      out.display_of_node[i] = it->second;
      continue;
    }
    const int g = group_of(id);
    if (collapsed(g)) {
      const opt::FusionGroup& fg = groups->groups[static_cast<size_t>(g)];
      DisplayNode box;
      box.kind = DisplayNodeKind::kGroup;
      box.label = group_label(graph, fg.nodes);
      box.op = fg.kind;
      box.group = g;
      box.members = fg.nodes;
      for (size_t k = 0; k < fg.nodes.size(); ++k) absorb(box, graph.node(fg.nodes[k]), k == 0);
      const int box_id = add_node(std::move(box));
      for (NodeId m : out.nodes[static_cast<size_t>(box_id)].members)
        if (m >= 0 && static_cast<size_t>(m) < num_nodes)
          out.display_of_node[static_cast<size_t>(m)] = box_id;
      continue;
    }
    DisplayNode n;
    n.kind = DisplayNodeKind::kOp;
    n.op_class = op_class_of(node);
    n.group = g;
    n.members = {id};
    n.has_subgraphs = !node.subgraphs().empty();
    n.subgraph_nodes = nested_nodes(node);
    if (hierarchy) n.shape_cluster = hierarchy->shape_cluster_of[i];
    // A node going into a closed scope's box gives it only its id, class and bodies
    // (apply_name_scopes): its name is not copied for nothing 50,000 times.
    if (!closed || closed->of(hierarchy->scope_of_node[i]) < 0) {
      n.label = node.name;
      n.op = node.op_type;
      n.graph = &graph;
      n.node = &node;
      n.node_id = id;
    }
    out.display_of_node[i] = add_node(std::move(n));
  }
  // Closed scopes become boxes (each holding the nodes and boxes drawn so far in it), open ones
  // frames.
  if (hierarchy) apply_name_scopes(out, *hierarchy, state.expanded_scopes);

  // A folded Constant is found on its first reader.
  for (size_t i = 0; i < num_nodes; ++i) {
    if (!folded(i)) continue;
    for (ValueId v : graph.node(static_cast<NodeId>(i)).outputs) {
      if (v == kNoValue || out.display_of_node[i] >= 0) continue;
      for (NodeId c : graph.value(v).consumers) {
        if (c < 0 || static_cast<size_t>(c) >= num_nodes) continue;
        out.display_of_node[i] = out.display_of_node[static_cast<size_t>(c)];
        break;
      }
    }
  }

  // Display ids of the nodes of every graph drawn node by node: the main graph and the bodies
  // expanded (recursively: a body's own If/Loop can be open too).
  std::unordered_map<const Graph*, std::vector<int>> shown;
  shown[&graph] = out.display_of_node;
  // A folded Constant's values come from nowhere drawn, as an initializer's do.
  for (size_t i = 0; i < num_nodes; ++i)
    if (folded(i)) shown[&graph][i] = -1;
  struct OpenBody {
    const Graph* body;
    int control;  // display id of the If/Loop/Scan
  };
  std::vector<OpenBody> open_bodies;
  std::vector<int> pending;  // display ids of control-flow nodes to open, depth first
  for (const DisplayNode& n : out.nodes)
    if (n.node && n.has_subgraphs && expanded_bodies.count(n.node)) pending.push_back(n.id);
  while (!pending.empty()) {
    const int control = pending.back();
    pending.pop_back();
    const Node* cf = out.nodes[static_cast<size_t>(control)].node;
    out.nodes[static_cast<size_t>(control)].body_expanded = true;
    for (const Graph* body : cf->subgraphs()) {
      if (shown.count(body)) continue;  // a body reached twice (never in a valid model)
      std::vector<int>& ids = shown[body];
      ids.assign(body->num_nodes(), -1);
      for (size_t j = 0; j < body->num_nodes(); ++j) {
        const Node& bn = body->node(static_cast<NodeId>(j));
        DisplayNode n;
        n.kind = DisplayNodeKind::kOp;
        n.label = bn.name;
        n.op = bn.op_type;
        n.op_class = op_class_of(bn);
        n.has_subgraphs = !bn.subgraphs().empty();
        n.subgraph_nodes = nested_nodes(bn);
        n.graph = body;
        n.node = &bn;
        n.node_id = static_cast<NodeId>(j);
        n.body_of = cf;
        n.body = body->name();
        n.in_scope = out.nodes[static_cast<size_t>(control)].in_scope;
        const int id = add_node(std::move(n));
        ids[j] = id;
        if (out.nodes[static_cast<size_t>(id)].has_subgraphs && expanded_bodies.count(&bn))
          pending.push_back(id);
      }
      open_bodies.push_back({body, control});
    }
  }

  EdgeSet edges(&out.edges);
  // Where a value read in graph `g` is drawn: its producer in a drawn graph, a main-graph input,
  // or (outer scope) wherever it is drawn outside. Weights and a body's formal inputs: nowhere.
  std::function<int(const Graph&, ValueId)> source_in = [&](const Graph& g, ValueId v) -> int {
    const Value& value = g.value(v);
    switch (value.kind) {
      case ValueKind::kNodeOutput: {
        auto it = shown.find(&g);
        if (it == shown.end() || value.producer < 0 ||
            static_cast<size_t>(value.producer) >= it->second.size())
          return -1;
        return it->second[static_cast<size_t>(value.producer)];
      }
      case ValueKind::kOuterScope:
        return value.outer_graph ? source_in(*value.outer_graph, value.outer_value) : -1;
      case ValueKind::kGraphInput: {
        if (&g != &graph) return -1;
        auto it = input_node.find(v);
        return it == input_node.end() ? -1 : it->second;
      }
      case ValueKind::kInitializer: return -1;
    }
    return -1;
  };
  auto label_in = [&](const Graph& g, ValueId v) {
    return rdp.has_facts(g) ? dims_label(rdp.fact(g, v)) : std::string();
  };
  auto source_of = [&](ValueId v) { return source_in(graph, v); };
  for (size_t i = 0; i < num_nodes; ++i) {
    const Node& node = graph.node(static_cast<NodeId>(i));
    const int to = out.display_of_node[i];
    // An open body draws the outer values it reads itself.
    const bool open = to >= 0 && out.nodes[static_cast<size_t>(to)].body_expanded;
    for (ValueId v : node.inputs)
      if (v != kNoValue) edges.add(source_of(v), to, v, [&] { return label_of(v); });
    if (!open)
      for (ValueId v : node.implicit_inputs)
        if (v != kNoValue) edges.add(source_of(v), to, v, [&] { return label_of(v); });
  }
  for (const OpenBody& ob : open_bodies) {
    const Graph& body = *ob.body;
    const std::vector<int>& ids = shown[&body];
    for (size_t j = 0; j < body.num_nodes(); ++j) {
      const Node& bn = body.node(static_cast<NodeId>(j));
      const bool open = out.nodes[static_cast<size_t>(ids[j])].body_expanded;
      for (ValueId v : bn.inputs)
        if (v != kNoValue)
          edges.add(source_in(body, v), ids[j], kNoValue, [&] { return label_in(body, v); });
      if (!open)
        for (ValueId v : bn.implicit_inputs)
          if (v != kNoValue)
            edges.add(source_in(body, v), ids[j], kNoValue, [&] { return label_in(body, v); });
    }
    for (ValueId v : body.outputs())
      edges.add(source_in(body, v), ob.control, kNoValue, [&] { return label_in(body, v); });
  }
  for (ValueId v : graph.outputs()) {
    DisplayNode n;
    n.kind = DisplayNodeKind::kGraphOutput;
    n.label = graph.value(v).name;
    n.op = "output";
    const int id = add_node(std::move(n));
    edges.add(source_of(v), id, v, [&] { return label_of(v); });
  }
  return out;
}

}  // namespace sod2::studio

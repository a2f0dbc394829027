#include "app/studio/graph/graph_hierarchy.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace sod2::studio {
namespace {

// What a value is computed from, for folding shape arithmetic.
enum class Origin : uint8_t {
  kData,    // depends on a tensor's contents (or unknown)
  kStatic,  // a constant: an initializer, or computed from constants only
  kShape,   // computed from tensor shapes (and constants), never from contents
};

bool is_standard(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

bool is_constant_node(const Node& n) {
  return is_standard(n) && n.op_type == "Constant" && n.inputs.empty();
}

// Ops whose output is not a function of their inputs: never folded as constants.
bool is_random(const Node& n) {
  return n.op_type.rfind("Random", 0) == 0 || n.op_type == "Multinomial" ||
         n.op_type == "Bernoulli";
}

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<size_t> parent_;
};

// The deepest scope holding both.
int common_scope(const std::vector<NameScope>& scopes, int a, int b) {
  while (scopes[static_cast<size_t>(a)].depth > scopes[static_cast<size_t>(b)].depth)
    a = scopes[static_cast<size_t>(a)].parent;
  while (scopes[static_cast<size_t>(b)].depth > scopes[static_cast<size_t>(a)].depth)
    b = scopes[static_cast<size_t>(b)].parent;
  while (a != b) {
    a = scopes[static_cast<size_t>(a)].parent;
    b = scopes[static_cast<size_t>(b)].parent;
  }
  return a;
}

// The fused group of 2 or more nodes that node `i` belongs to (drawn as one unit), or -1.
int multi_node_group(const opt::FusionPlan* groups, size_t i) {
  if (!groups || i >= groups->group_of.size()) return -1;
  const int g = groups->group_of[i];
  return g >= 0 && static_cast<size_t>(g) < groups->groups.size() &&
                 groups->groups[static_cast<size_t>(g)].nodes.size() >= 2
             ? g
             : -1;
}

std::vector<NodeId> node_order(const Graph& graph) {
  auto topo = graph.topological_order();
  if (topo.ok()) return std::move(*topo);
  // A cycle: the file's order, which only loses folds whose inputs come later.
  std::vector<NodeId> order(graph.num_nodes());
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace

std::vector<std::string> name_scope_of(const std::string& node_name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= node_name.size()) {
    const size_t slash = node_name.find('/', start);
    if (slash == std::string::npos) break;  // the rest names the node itself
    if (slash > start) parts.push_back(node_name.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

int GraphHierarchy::closed_ancestor(int scope, const std::set<int>& expanded) const {
  int outermost = -1;
  for (int s = scope; s > 0; s = scopes[static_cast<size_t>(s)].parent)
    if (!expanded.count(s) && scopes[static_cast<size_t>(s)].nodes >= 2) outermost = s;
  return outermost;
}

size_t GraphHierarchy::items_when(const std::set<int>& expanded,
                                  const opt::FusionPlan* groups) const {
  std::unordered_set<int> boxes, clusters, fused;
  size_t singles = 0;
  for (size_t i = 0; i < scope_of_node.size(); ++i) {
    if (folded_constant[i]) continue;
    if (const int box = closed_ancestor(scope_of_node[i], expanded); box >= 0) {
      boxes.insert(box);
    } else if (shape_cluster_of[i] >= 0) {
      clusters.insert(shape_cluster_of[i]);
    } else if (const int g = multi_node_group(groups, i); g >= 0) {
      fused.insert(g);
    } else {
      ++singles;
    }
  }
  return boxes.size() + clusters.size() + fused.size() + singles;
}

namespace {

// The scopes of `count` nodes named by `name_of` (scope_of_node: each node's own scope), no shape
// cluster and no folded constant yet; node counts and the default depth are settle()'s.
GraphHierarchy scopes_of_names(size_t count,
                               const std::function<const std::string&(size_t)>& name_of) {
  GraphHierarchy h;
  h.scopes.push_back(NameScope{});
  h.scope_of_node.assign(count, 0);
  h.shape_cluster_of.assign(count, -1);
  h.folded_constant.assign(count, false);
  std::unordered_map<std::string, int> by_path;
  for (size_t i = 0; i < count; ++i) {
    int scope = 0;
    std::string path;
    for (std::string& part : name_scope_of(name_of(i))) {
      path += "/" + part;
      auto [it, fresh] = by_path.try_emplace(path, static_cast<int>(h.scopes.size()));
      if (fresh) {
        NameScope s;
        s.path = path;
        s.label = std::move(part);
        s.parent = scope;
        s.depth = h.scopes[static_cast<size_t>(scope)].depth + 1;
        h.scopes[static_cast<size_t>(scope)].children.push_back(it->second);
        h.scopes.push_back(std::move(s));
      }
      scope = it->second;
    }
    h.scope_of_node[i] = scope;
  }
  return h;
}

// Once every node is in the scope it is drawn in: each scope's node count and the scopes open at
// first (`groups`: the fused groups drawn as one unit each, may be null).
void settle(GraphHierarchy& h, const opt::FusionPlan* groups) {
  for (size_t i = 0; i < h.scope_of_node.size(); ++i)
    if (!h.folded_constant[i]) ++h.scopes[static_cast<size_t>(h.scope_of_node[i])].nodes;
  // Children come after their parent, so one backward pass sums every subtree.
  for (size_t s = h.scopes.size(); s-- > 1;)
    h.scopes[static_cast<size_t>(h.scopes[s].parent)].nodes += h.scopes[s].nodes;

  // The readable depth: open whole levels while the drawing stays small.
  std::set<int> expanded{0};
  int max_depth = 0;
  for (const NameScope& s : h.scopes) max_depth = std::max(max_depth, s.depth);
  for (int depth = 1; depth <= max_depth; ++depth) {
    std::set<int> next = expanded;
    for (size_t s = 1; s < h.scopes.size(); ++s)
      if (h.scopes[s].depth == depth) next.insert(static_cast<int>(s));
    if (h.items_when(next, groups) > GraphHierarchy::kDefaultItems) break;
    expanded = std::move(next);
  }
  h.default_expanded = std::move(expanded);
}

}  // namespace

GraphHierarchy build_name_hierarchy(const std::vector<std::string>& node_names) {
  GraphHierarchy h = scopes_of_names(node_names.size(),
                                     [&](size_t i) -> const std::string& { return node_names[i]; });
  settle(h, nullptr);
  return h;
}

GraphHierarchy build_hierarchy(const Graph& graph, const RdpResult& rdp,
                               const opt::FusionPlan* groups) {
  const size_t n = graph.num_nodes();
  GraphHierarchy h = scopes_of_names(
      n, [&](size_t i) -> const std::string& { return graph.node(static_cast<NodeId>(i)).name; });

  std::unordered_set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.node(static_cast<NodeId>(i));
    if (!is_constant_node(node) || multi_node_group(groups, i) >= 0) continue;
    bool read_only = !node.outputs.empty();
    for (ValueId v : node.outputs)
      read_only = read_only && v != kNoValue && !graph_outputs.count(v) &&
                  !graph.value(v).consumers.empty();
    h.folded_constant[i] = read_only;
  }

  // Shape arithmetic: values computed from shapes and constants only, small integer ones.
  const bool facts = rdp.has_facts(graph);
  auto small_integer = [&](ValueId v) {
    if (v == kNoValue || !facts) return false;
    const TensorFact& f = rdp.fact(graph, v);
    return f.category == TypeCategory::kTensor &&
           (is_integer_type(f.dtype) || f.dtype == DataType::kBool) && f.dims &&
           f.dims->size() <= 1;
  };
  std::vector<Origin> origin(graph.num_values(), Origin::kData);
  for (size_t v = 0; v < graph.num_values(); ++v)
    if (graph.value(static_cast<ValueId>(v)).kind == ValueKind::kInitializer)
      origin[v] = Origin::kStatic;
  std::vector<bool> shape_node(n, false), constant_like(n, false);
  const std::vector<NodeId> order = node_order(graph);
  auto set_outputs = [&](const Node& node, Origin o) {
    for (ValueId v : node.outputs)
      if (v != kNoValue) origin[static_cast<size_t>(v)] = o;
  };
  for (NodeId id : order) {
    const Node& node = graph.node(id);
    const size_t i = static_cast<size_t>(id);
    if (multi_node_group(groups, i) >= 0 || !node.subgraphs().empty()) continue;
    if (is_constant_node(node)) {
      set_outputs(node, Origin::kStatic);
      continue;
    }
    bool small_outputs = !node.outputs.empty();
    for (ValueId v : node.outputs) small_outputs = small_outputs && small_integer(v);
    if (is_standard(node) && (node.op_type == "Shape" || node.op_type == "Size")) {
      if (!small_outputs) continue;
      shape_node[i] = true;
      set_outputs(node, Origin::kShape);
      continue;
    }
    bool known = !node.inputs.empty(), from_shape = false;
    for (ValueId v : node.inputs) {
      if (v == kNoValue) continue;
      const Origin o = origin[static_cast<size_t>(v)];
      known = known && o != Origin::kData;
      from_shape = from_shape || o == Origin::kShape;
    }
    if (!known || is_random(node)) continue;
    if (!from_shape) {
      constant_like[i] = true;
      set_outputs(node, Origin::kStatic);
    } else if (small_outputs) {
      shape_node[i] = true;
      set_outputs(node, Origin::kShape);
    }
  }
  // Constant arithmetic read only by shape arithmetic (an Unsqueeze of a constant dim) joins it.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const size_t i = static_cast<size_t>(*it);
    const Node& node = graph.node(*it);
    if (!constant_like[i]) continue;
    bool only_shapes = !node.outputs.empty();
    for (ValueId v : node.outputs) {
      only_shapes = only_shapes && small_integer(v) && !graph_outputs.count(v) &&
                    !graph.value(v).consumers.empty();
      if (!only_shapes) break;
      for (NodeId c : graph.value(v).consumers)
        only_shapes = only_shapes && shape_node[static_cast<size_t>(c)];
    }
    shape_node[i] = only_shapes;
  }

  UnionFind clusters(n);
  for (size_t i = 0; i < n; ++i) {
    if (!shape_node[i]) continue;
    for (ValueId v : graph.node(static_cast<NodeId>(i)).inputs) {
      if (v == kNoValue) continue;
      const NodeId p = graph.value(v).producer;
      if (graph.value(v).kind == ValueKind::kNodeOutput && p >= 0 &&
          shape_node[static_cast<size_t>(p)])
        clusters.join(i, static_cast<size_t>(p));
    }
  }
  std::unordered_map<size_t, std::vector<NodeId>> members;
  std::vector<size_t> roots;  // in order of each cluster's first node
  for (size_t i = 0; i < n; ++i) {
    if (!shape_node[i]) continue;
    auto& m = members[clusters.find(i)];
    if (m.empty()) roots.push_back(clusters.find(i));
    m.push_back(static_cast<NodeId>(i));
  }
  for (size_t root : roots) {
    std::vector<NodeId>& m = members[root];
    if (m.size() < 2) continue;
    const int id = static_cast<int>(h.shape_clusters.size());
    for (NodeId x : m) h.shape_cluster_of[static_cast<size_t>(x)] = id;
    h.shape_clusters.push_back(std::move(m));
  }

  // A fused group or a shape cluster is drawn whole in the deepest scope holding all of it.
  auto place_unit = [&](const std::vector<NodeId>& unit) {
    int scope = h.scope_of_node[static_cast<size_t>(unit.front())];
    for (NodeId x : unit)
      scope = common_scope(h.scopes, scope, h.scope_of_node[static_cast<size_t>(x)]);
    for (NodeId x : unit) h.scope_of_node[static_cast<size_t>(x)] = scope;
  };
  for (const auto& cluster : h.shape_clusters) place_unit(cluster);
  if (groups)
    for (const opt::FusionGroup& g : groups->groups) {
      bool valid = g.nodes.size() >= 2;
      for (NodeId x : g.nodes) valid = valid && x >= 0 && static_cast<size_t>(x) < n;
      if (valid) place_unit(g.nodes);
    }

  settle(h, groups);
  return h;
}

}  // namespace sod2::studio

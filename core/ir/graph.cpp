#include "core/ir/graph.h"

#include <algorithm>
#include <queue>

namespace sod2 {

Expected<ValueId> Graph::add_value(Value value) {
  if (value.name.empty()) return invalid_model("graph '" + name_ + "': a value has an empty name");
  const auto id = static_cast<ValueId>(values_.size());
  auto [it, inserted] = by_name_.emplace(value.name, id);
  if (!inserted) {
    return invalid_model("graph '" + name_ + "': the name '" + value.name +
                         "' is defined more than once (ONNX graphs are single-assignment)");
  }
  values_.push_back(std::move(value));
  return id;
}

ValueId Graph::add_initializer(Tensor tensor, ValueId value_id) {
  Value& v = value(value_id);
  v.kind = ValueKind::kInitializer;
  v.category = TypeCategory::kTensor;
  v.dtype = tensor.dtype();
  std::vector<DimDecl> dims;
  for (int64_t d : tensor.dims()) dims.push_back(DimDecl::constant(d));
  v.shape = std::move(dims);
  v.initializer = static_cast<int32_t>(initializers_.size());
  initializers_.push_back(std::move(tensor));
  return value_id;
}

NodeId Graph::add_node(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<NodeId>(nodes_.size() - 1);
}

void Graph::link() {
  for (Value& v : values_) v.consumers.clear();
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const auto nid = static_cast<NodeId>(n);
    const Node& node = nodes_[n];
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] == kNoValue) continue;
      Value& v = values_[static_cast<size_t>(node.outputs[o])];
      v.producer = nid;
      v.producer_output = static_cast<int32_t>(o);
    }
    auto add_consumer = [&](ValueId id) {
      if (id == kNoValue) return;
      auto& c = values_[static_cast<size_t>(id)].consumers;
      if (c.empty() || c.back() != nid) c.push_back(nid);
    };
    for (ValueId id : node.inputs) add_consumer(id);
    for (ValueId id : node.implicit_inputs) add_consumer(id);
  }
}

ValueId Graph::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? kNoValue : it->second;
}

ValueId Graph::find_in_scope(std::string_view name, const Graph** owner) const {
  for (const Graph* g = this; g; g = g->parent_) {
    const ValueId id = g->find(name);
    if (id != kNoValue) {
      if (owner) *owner = g;
      return id;
    }
  }
  return kNoValue;
}

Expected<std::vector<NodeId>> Graph::topological_order() const {
  const size_t n = nodes_.size();
  std::vector<int32_t> pending(n, 0);
  std::vector<std::vector<NodeId>> users(n);
  for (size_t i = 0; i < n; ++i) {
    auto count = [&](ValueId id) {
      if (id == kNoValue) return;
      const NodeId p = values_[static_cast<size_t>(id)].producer;
      if (p == kNoNode) return;
      ++pending[i];
      users[static_cast<size_t>(p)].push_back(static_cast<NodeId>(i));
    };
    for (ValueId id : nodes_[i].inputs) count(id);
    for (ValueId id : nodes_[i].implicit_inputs) count(id);
  }
  // A min-heap on node index keeps the file's order wherever the dependencies allow it.
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<NodeId>(i));
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    const NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (NodeId u : users[static_cast<size_t>(id)])
      if (--pending[static_cast<size_t>(u)] == 0) ready.push(u);
  }
  if (order.size() != n) {
    // Every node left over waits on a producer that is also left over; walking those producers
    // from any of them must revisit a node, and that node lies on a cycle (a node merely
    // downstream of a cycle would be a misleading name).
    NodeId at = kNoNode;
    for (size_t i = 0; i < n && at == kNoNode; ++i)
      if (pending[i] > 0) at = static_cast<NodeId>(i);
    std::vector<bool> seen(n, false);
    while (!seen[static_cast<size_t>(at)]) {
      seen[static_cast<size_t>(at)] = true;
      const Node& node = nodes_[static_cast<size_t>(at)];
      NodeId next = kNoNode;
      auto visit = [&](ValueId id) {
        if (next != kNoNode || id == kNoValue) return;
        const NodeId p = values_[static_cast<size_t>(id)].producer;
        if (p != kNoNode && pending[static_cast<size_t>(p)] > 0) next = p;
      };
      for (ValueId id : node.inputs) visit(id);
      for (ValueId id : node.implicit_inputs) visit(id);
      at = next;
    }
    const Node& on_cycle = nodes_[static_cast<size_t>(at)];
    return invalid_model("graph '" + name_ + "' has a cycle: node '" + on_cycle.name + "' (" +
                         on_cycle.op_type + ") depends on its own output");
  }
  return order;
}

namespace {
void visit_graphs_from(const Graph& graph, const Node* owner,
                       const std::function<void(const Graph&, const Node*)>& visit) {
  visit(graph, owner);
  for (const Node& node : graph.nodes())
    for (const Graph* sub : node.subgraphs()) visit_graphs_from(*sub, &node, visit);
}
}  // namespace

void visit_graphs(const Graph& root,
                  const std::function<void(const Graph& graph, const Node* owner)>& visit) {
  visit_graphs_from(root, nullptr, visit);
}

size_t Graph::total_nodes() const {
  size_t total = nodes_.size();
  for (const Node& node : nodes_)
    for (const Graph* g : node.subgraphs()) total += g->total_nodes();
  return total;
}

size_t Graph::total_subgraphs() const {
  size_t total = 0;
  for (const Node& node : nodes_)
    for (const Graph* g : node.subgraphs()) total += 1 + g->total_subgraphs();
  return total;
}

size_t Graph::total_initializers() const {
  size_t total = initializers_.size();
  for (const Node& node : nodes_)
    for (const Graph* g : node.subgraphs()) total += g->total_initializers();
  return total;
}

}  // namespace sod2

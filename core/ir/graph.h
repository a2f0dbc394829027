// A graph owns its values, nodes and initializers; subgraphs (If/Loop/Scan bodies) are Graphs owned
// by their node's attributes and point to their parent for outer-scope resolution.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/tensor.h"
#include "core/ir/value.h"
#include "core/status/status.h"

namespace sod2 {

class Graph {
 public:
  explicit Graph(std::string name, const Graph* parent = nullptr)
      : name_(std::move(name)), parent_(parent) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  const Graph* parent() const { return parent_; }
  int depth() const { return parent_ ? parent_->depth() + 1 : 0; }

  // --- building; names must be unique within the graph (SSA) ---
  // Sizes the tables up front: growing them node by node re-copies every Value and Node, which
  // dominates importing large graphs on machines where fresh pages fault slowly.
  void reserve(size_t values, size_t nodes) {
    values_.reserve(values);
    nodes_.reserve(nodes);
    by_name_.reserve(values);
  }
  Expected<ValueId> add_value(Value value);
  ValueId add_initializer(Tensor tensor, ValueId value);  // binds tensor to an existing value
  NodeId add_node(Node node);
  void set_inputs(std::vector<ValueId> ids) { inputs_ = std::move(ids); }
  void set_outputs(std::vector<ValueId> ids) { outputs_ = std::move(ids); }
  // Fills Value::producer/consumers from the nodes; call once the nodes are complete.
  void link();

  // --- reading ---
  size_t num_values() const { return values_.size(); }
  size_t num_nodes() const { return nodes_.size(); }
  const Value& value(ValueId id) const { return values_[static_cast<size_t>(id)]; }
  Value& value(ValueId id) { return values_[static_cast<size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  Node& node(NodeId id) { return nodes_[static_cast<size_t>(id)]; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<Tensor>& initializers() const { return initializers_; }
  const Tensor* initializer_of(ValueId id) const {
    const Value& v = value(id);
    return v.initializer >= 0 ? &initializers_[static_cast<size_t>(v.initializer)] : nullptr;
  }

  // Local lookup only; kNoValue when absent.
  ValueId find(std::string_view name) const;
  // Looks through this graph and its ancestors; the graph where it was found goes to *owner.
  ValueId find_in_scope(std::string_view name, const Graph** owner) const;

  // Kahn's algorithm with node order as tie-break, so a sorted file keeps its order. Implicit
  // (subgraph) inputs count as edges. A cycle is an error naming a node on it.
  Expected<std::vector<NodeId>> topological_order() const;

  // Nodes and subgraphs in this graph and every nested one.
  size_t total_nodes() const;
  size_t total_subgraphs() const;
  size_t total_initializers() const;

 private:
  std::string name_;
  const Graph* parent_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<Tensor> initializers_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> by_name_;
};

// Calls `visit` on `root` and then on every nested subgraph, depth-first in node and attribute
// order; `owner` is the node whose attribute holds the graph (nullptr for the root).
void visit_graphs(const Graph& root,
                  const std::function<void(const Graph& graph, const Node* owner)>& visit);

}  // namespace sod2

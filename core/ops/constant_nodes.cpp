#include "core/ops/constant_nodes.h"

namespace sod2 {
namespace {

bool is_default_domain_op(const Node& node, const char* op) {
  return node.domain.empty() && node.op_type == op;
}

}  // namespace

bool is_constant_value(const Graph& graph, ValueId v) {
  // Follows Identity producers back; a graph is acyclic once imported, and the step limit keeps
  // a malformed one from looping.
  for (size_t steps = 0; v != kNoValue && steps <= graph.num_nodes(); ++steps) {
    const Value& value = graph.value(v);
    if (value.kind == ValueKind::kInitializer) return true;
    if (value.kind != ValueKind::kNodeOutput || value.producer == kNoNode) return false;
    const Node& producer = graph.node(value.producer);
    if (is_default_domain_op(producer, "Constant")) return true;
    if (!is_default_domain_op(producer, "Identity") || producer.inputs.size() != 1) return false;
    v = producer.inputs[0];
  }
  return false;
}

bool is_constant_node(const Graph& graph, const Node& node) {
  if (is_default_domain_op(node, "Constant")) return true;
  return is_default_domain_op(node, "Identity") && node.inputs.size() == 1 &&
         node.outputs.size() == 1 && is_constant_value(graph, node.inputs[0]);
}

}  // namespace sod2

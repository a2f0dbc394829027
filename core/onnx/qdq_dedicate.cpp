#include "core/onnx/qdq_dedicate.h"

#include <string>
#include <unordered_set>

namespace sod2::onnx_import {
namespace {

bool is_contraction(const Node& n) {
  return n.domain.empty() && (n.op_type == "Conv" || n.op_type == "ConvTranspose" ||
                              n.op_type == "MatMul" || n.op_type == "Gemm");
}

// Whether `reader` reads v as one of its first three inputs (data, weight, bias).
bool reads_as_operand(const Node& reader, ValueId v) {
  for (size_t i = 0; i < reader.inputs.size() && i < 3; ++i)
    if (reader.inputs[i] == v) return true;
  return false;
}

std::string unique_name(const std::string& base, const std::unordered_set<std::string>& taken) {
  if (!taken.count(base)) return base;
  for (int i = 2;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (!taken.count(name)) return name;
  }
}

}  // namespace

Expected<int> dedicate_shared_dequantize(Graph& graph) {
  std::unordered_set<std::string> node_names;
  for (const Node& n : graph.nodes()) node_names.insert(n.name);
  int added = 0;
  const size_t original_nodes = graph.num_nodes();
  for (size_t d = 0; d < original_nodes; ++d) {
    const Node dq = graph.node(static_cast<NodeId>(d));  // a copy: add_node may reallocate
    if (!dq.domain.empty() || dq.op_type != "DequantizeLinear" || dq.outputs.size() != 1 ||
        dq.outputs[0] == kNoValue)
      continue;
    const ValueId out = dq.outputs[0];
    const std::vector<NodeId> readers = graph.value(out).consumers;
    if (readers.size() < 2) continue;
    // The first contraction keeps the original when every reader is a contraction.
    bool other_reader = false;
    for (NodeId r : readers)
      other_reader =
          other_reader || !is_contraction(graph.node(r)) || !reads_as_operand(graph.node(r), out);
    bool first = !other_reader;
    for (NodeId r : readers) {
      if (!is_contraction(graph.node(r)) || !reads_as_operand(graph.node(r), out)) continue;
      if (first) {
        first = false;
        continue;
      }
      Value copy_value = graph.value(out);
      copy_value.kind = ValueKind::kNodeOutput;
      copy_value.consumers.clear();
      copy_value.name = graph.value(out).name + "/for/" + graph.node(r).name;
      while (graph.find(copy_value.name) != kNoValue) copy_value.name += "_";
      SOD2_ASSIGN_OR_RETURN(ValueId copy_id, graph.add_value(std::move(copy_value)));
      Node copy = dq;
      copy.name = unique_name(dq.name + "/for/" + graph.node(r).name, node_names);
      node_names.insert(copy.name);
      copy.outputs = {copy_id};
      Node& reader = graph.node(r);
      for (size_t i = 0; i < reader.inputs.size() && i < 3; ++i)
        if (reader.inputs[i] == out) reader.inputs[i] = copy_id;
      graph.add_node(std::move(copy));
      ++added;
    }
  }
  if (added) graph.link();
  return added;
}

}  // namespace sod2::onnx_import

#include "core/opt/tensor_sizes.h"

#include <algorithm>

#include "core/ir/data_type.h"
#include "core/ops/constant_nodes.h"
#include "core/opt/plan_types.h"
#include "core/sym/prover.h"
#include "runtime/program/byte_views.h"

namespace sod2::opt {
namespace {

// The size in bytes of one node output, or the reason it has none.
struct Sizing {
  std::optional<sym::SymExpr> bytes;
  std::string reason;
};

Sizing size_of(const Value& value, const TensorFact& fact) {
  if (fact.category != TypeCategory::kTensor) {
    return {std::nullopt, std::string(type_category_name(fact.category)) +
                              " value: the runtime allocates its elements when it is built"};
  }
  const DataType dtype = fact.dtype != DataType::kUndefined ? fact.dtype : value.dtype;
  const size_t elem = data_type_size(dtype);
  if (elem == 0) {
    return {std::nullopt,
            "element type " + std::string(data_type_name(dtype)) + " has no fixed size"};
  }
  const std::optional<sym::SymExpr> numel = fact.numel();
  if (!numel) return {std::nullopt, "shape " + fact.to_string() + " is not fully known"};
  const sym::SymExpr bytes = *numel * sym::SymExpr(static_cast<int64_t>(elem));
  if (bytes.is_overflow()) return {std::nullopt, "size overflows int64"};
  return {bytes, ""};
}

// What input `i` of `node` is, for byte_views.h: the bytes of an initializer or of a Constant's
// tensor decide it (the package stores those bytes, and the runtime decides again from them).
rt::InputKind input_kind(const Graph& graph, const Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return rt::InputKind::kAbsent;
  const ValueId v = node.inputs[i];
  const Tensor* t = graph.initializer_of(v);
  const Value& value = graph.value(v);
  if (!t && value.producer != kNoNode) {
    const Node& producer = graph.node(value.producer);
    if (producer.op_type == "Constant" && producer.domain.empty() &&
        producer.attributes.size() == 1 && producer.attributes[0].name == "value")
      t = &producer.attributes[0].t;
  }
  if (!t || t->numel() != 1 || t->bytes().empty()) return rt::InputKind::kOther;
  return std::all_of(t->bytes().begin(), t->bytes().end(), [](uint8_t b) { return b == 0; })
             ? rt::InputKind::kZero
             : rt::InputKind::kOther;
}

// The arena tensor whose bytes node `n`'s output `v` can be, unchanged (byte_views.h); -1 when it
// needs bytes of its own. A fused node is out: its group's kernel, not the view op, writes `v`.
int32_t viewed_tensor(const Graph& graph, const FusionPlan* fusion, NodeId n, ValueId v,
                      const TensorSet& set) {
  const Node& node = graph.node(n);
  auto input = [&](size_t i) { return input_kind(graph, node, i); };
  if (!rt::keeps_input_bytes(node.domain, node.op_type, input)) return -1;
  if (node.outputs.empty() || node.outputs[0] != v || node.inputs.empty()) return -1;
  if (fusion) {
    const int32_t g = fusion->group_of[static_cast<size_t>(n)];
    if (g < 0 || fusion->groups[static_cast<size_t>(g)].nodes.size() != 1) return -1;
  }
  return set.index_of(node.inputs[0]);
}

}  // namespace

sym::SymExpr align_bytes(const sym::SymExpr& bytes) {
  const sym::SymExpr a(kTensorAlignment);
  return a * sym::floordiv(bytes + sym::SymExpr(kTensorAlignment - 1), a);
}

TensorSet arena_tensors(const Graph& graph, const RdpResult& rdp, const FusionPlan* fusion) {
  TensorSet set;
  set.index_of_value.assign(graph.num_values(), -1);
  std::vector<bool> is_output(graph.num_values(), false);
  for (ValueId v : graph.outputs()) is_output[static_cast<size_t>(v)] = true;
  std::vector<bool> group_output(graph.num_values(), fusion == nullptr);
  if (fusion) {
    for (const FusionGroup& g : fusion->groups)
      for (ValueId v : g.outputs) group_output[static_cast<size_t>(v)] = true;
  }

  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    for (ValueId v : node.outputs) {
      if (v == kNoValue) continue;  // an omitted optional output is never written
      const Value& value = graph.value(v);
      const bool output = is_output[static_cast<size_t>(v)];
      // A constant node's value lives in the package, graph output or not: the runtime hands it out
      // as a view of the package's bytes and never writes it to the arena.
      if (is_constant_node(graph, node)) {
        ++set.package_constants;
        continue;
      }
      if (!group_output[static_cast<size_t>(v)]) {
        ++set.fused_values;
        continue;
      }
      Sizing s = size_of(value, rdp.fact(graph, v));
      if (!s.bytes) {
        set.off_arena.push_back({v, value.name, std::move(s.reason)});
        continue;
      }
      const int32_t viewed = viewed_tensor(graph, fusion, static_cast<NodeId>(n), v, set);
      if (viewed >= 0) {
        ArenaTensor& tensor = set.tensors[static_cast<size_t>(viewed)];
        tensor.views.push_back(v);
        tensor.graph_output = tensor.graph_output || output;
        set.index_of_value[static_cast<size_t>(v)] = viewed;
        continue;
      }
      set.index_of_value[static_cast<size_t>(v)] = static_cast<int32_t>(set.tensors.size());
      set.tensors.push_back({v,
                             value.name,
                             static_cast<NodeId>(n),
                             sym::simplify(align_bytes(*s.bytes), rdp.ranges()),
                             output,
                             {}});
    }
  }
  return set;
}

}  // namespace sod2::opt

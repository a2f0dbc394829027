#include "core/onnx/four_bit.h"

#include <functional>

#include "core/onnx/import_limits.h"

namespace sod2::onnx_import {
namespace {

// The inputs whose values reach the outputs unchanged (rearranged, repeated or selected) for ops
// that only move values; empty for every other op. -1 stands for every input (Concat).
std::vector<int> value_inputs(const std::string& op) {
  static const std::unordered_set<std::string> kFirstInput = {
      "Identity",        "Reshape",   "Flatten",      "Squeeze",
      "Unsqueeze",       "Transpose", "Pad",          "Expand",
      "Slice",           "Gather",    "GatherND",     "Tile",
      "GatherElements",  "Split",     "DepthToSpace", "SpaceToDepth",
      "ReverseSequence", "Compress"};
  if (op == "Concat") return {-1};
  if (op == "Where") return {1, 2};
  if (kFirstInput.count(op)) return {0};
  return {};
}

bool reads_value_input(const std::string& op, size_t n_inputs,
                       const std::function<bool(size_t)>& marked_at) {
  for (int i : value_inputs(op)) {
    if (i >= 0 && marked_at(static_cast<size_t>(i))) return true;
    if (i < 0)
      for (size_t k = 0; k < n_inputs; ++k)
        if (marked_at(k)) return true;
  }
  return false;
}

// Whether v of g holds a 4-bit constant, following an outer-scope reference to its definition.
bool is_marked(const FourBitValues& marked, const Graph* g, ValueId v) {
  for (int hop = 0; g && v != kNoValue && hop <= kMaxGraphDepth; ++hop) {
    if (marked.count({g, v})) return true;
    const Value& value = g->value(v);
    if (value.kind != ValueKind::kOuterScope) return false;
    g = value.outer_graph;
    v = value.outer_value;
  }
  return false;
}

std::string node_label(const Graph& g, const Node& n, bool main) {
  return "node '" + n.name + "' (" + n.op_type + ")" +
         (main ? std::string() : " in subgraph '" + g.name() + "'");
}

Status check_graph(const Graph& g, bool main, FourBitValues* marked) {
  SOD2_ASSIGN_OR_RETURN(const std::vector<NodeId> order, g.topological_order());
  for (NodeId id : order) {
    const Node& n = g.node(id);
    for (const Graph* sub : n.subgraphs()) SOD2_RETURN_IF_ERROR(check_graph(*sub, false, marked));
    if (!n.domain.empty()) continue;
    const auto input_marked = [&](size_t i) {
      return i < n.inputs.size() && is_marked(*marked, &g, n.inputs[i]);
    };
    const auto refuse = [&](size_t i, const char* role, const char* what) {
      return unsupported(node_label(g, n, main) + ": " + role + " '" + g.value(n.inputs[i]).name +
                         "' holds int4/uint4 values, so " + what + "; " + four_bit_scope());
    };
    if (n.op_type == "QuantizeLinear" && input_marked(2))
      return refuse(2, "y_zero_point", "its output would be a computed 4-bit tensor");
    if (n.op_type == "CastLike" && input_marked(1))
      return refuse(1, "target_type", "it would cast to a 4-bit type");
    bool keeps = reads_value_input(n.op_type, n.inputs.size(), input_marked);
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      if (n.outputs[o] == kNoValue) continue;
      bool out = keeps;
      if (n.op_type == "If") {
        for (const char* branch : {"then_branch", "else_branch"}) {
          const Attribute* a = n.attribute(branch);
          if (a && a->g && o < a->g->outputs().size())
            out = out || is_marked(*marked, a->g.get(), a->g->outputs()[o]);
        }
      }
      if (out) marked->insert({&g, n.outputs[o]});
    }
  }
  if (main) {
    for (ValueId v : g.outputs())
      if (is_marked(*marked, &g, v))
        return unsupported("graph output '" + g.value(v).name +
                           "' holds int4/uint4 values, which the runtime would return widened; " +
                           four_bit_scope());
  }
  return {};
}

}  // namespace

std::optional<DataType> widened_four_bit_type(int64_t onnx_type) {
  if (onnx_type == kOnnxInt4) return DataType::kInt8;
  if (onnx_type == kOnnxUint4) return DataType::kUint8;
  return std::nullopt;
}

const char* four_bit_type_name(int64_t onnx_type) {
  return onnx_type == kOnnxInt4 ? "int4" : "uint4";
}

std::string four_bit_scope() {
  return "int4/uint4 are supported for constants only (weights and zero points, as "
         "DequantizeLinear "
         "reads them; widened to int8/uint8 at import): the runtime computes no 4-bit tensors";
}

uint64_t packed_four_bit_bytes(uint64_t numel) { return numel / 2 + numel % 2; }

std::vector<uint8_t> unpack_four_bit(std::span<const uint8_t> packed, uint64_t numel,
                                     bool is_signed) {
  std::vector<uint8_t> out(numel);
  for (uint64_t i = 0; i < numel && i / 2 < packed.size(); ++i) {
    const uint8_t nibble = (packed[i / 2] >> (4 * (i % 2))) & 0xF;
    // Sign extension of INT4: 8..15 are -8..-1.
    out[i] = is_signed ? static_cast<uint8_t>(static_cast<int8_t>((nibble ^ 8) - 8)) : nibble;
  }
  return out;
}

bool is_four_bit_constant(const onnx::NodeProto& node) {
  if (node.op_type() != "Constant" || !(node.domain().empty() || node.domain() == "ai.onnx"))
    return false;
  for (const auto& a : node.attribute()) {
    if (a.name() == "value" && widened_four_bit_type(a.t().data_type())) return true;
    if (a.name() == "sparse_value" && widened_four_bit_type(a.sparse_tensor().values().data_type()))
      return true;
  }
  return false;
}

Status check_four_bit_attributes(const onnx::NodeProto& node, const std::string& label) {
  if (!(node.domain().empty() || node.domain() == "ai.onnx")) return {};
  const std::string& op = node.op_type();
  for (const auto& a : node.attribute()) {
    if (op == "Cast" && a.name() == "to" && widened_four_bit_type(a.i()))
      return unsupported(label + ": casts to " + four_bit_type_name(a.i()) + "; " +
                         four_bit_scope());
    if (op == "QuantizeLinear" && a.name() == "output_dtype" && widened_four_bit_type(a.i()))
      return unsupported(label + ": quantizes to " + four_bit_type_name(a.i()) +
                         " (output_dtype); " + four_bit_scope());
    if (op == "ConstantOfShape" && a.name() == "value" && widened_four_bit_type(a.t().data_type()))
      return unsupported(label + ": fills a computed " + four_bit_type_name(a.t().data_type()) +
                         " tensor; " + four_bit_scope());
  }
  return {};
}

Status check_four_bit_uses(const Graph& root, FourBitValues* marked) {
  return check_graph(root, true, marked);
}

std::unordered_set<std::string> four_bit_value_names(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> names;
  for (const auto& t : graph.initializer())
    if (widened_four_bit_type(t.data_type())) names.insert(t.name());
  for (const auto& t : graph.sparse_initializer())
    if (widened_four_bit_type(t.values().data_type())) names.insert(t.values().name());
  for (const auto& node : graph.node()) {
    const auto input_marked = [&](size_t i) {
      return i < static_cast<size_t>(node.input_size()) &&
             names.count(node.input(static_cast<int>(i))) > 0;
    };
    if (is_four_bit_constant(node) ||
        ((node.domain().empty() || node.domain() == "ai.onnx") &&
         reads_value_input(node.op_type(), static_cast<size_t>(node.input_size()), input_marked)))
      for (const auto& out : node.output())
        if (!out.empty()) names.insert(out);
  }
  return names;
}

}  // namespace sod2::onnx_import

// The graphs of a manifest: subgraph references first (they must form a tree under the main
// graph, since the session recurses into bodies and resolves outer-scope values by walking up
// that tree), then every value, node and attribute with its indices checked.
#include <cstring>
#include <deque>

#include "runtime/package/manifest_reader.h"
#include "runtime/package/sod2_package.pb.h"

namespace sod2::rt::package_detail {
namespace {

constexpr size_t kMaxDimsText = 4096;   // a value's dims as text (Value.dims), a fused node's name
constexpr size_t kMaxFusedNodes = 256;  // per fused kernel (Node.fused_nodes)

std::string n(int64_t v) { return std::to_string(v); }

std::string graph_name(const pkg::Manifest& m, int g) {
  return "graph " + n(g) + " ('" + m.graphs(g).name() + "')";
}

struct GraphTree {
  std::vector<int> parent;  // -1 for the main graph
  std::vector<int> depth;   // 0 for the main graph
};

Status check_subgraph_indices(const pkg::Manifest& m) {
  const int count = m.graphs_size();
  for (int g = 0; g < count; ++g) {
    const pkg::Graph& graph = m.graphs(g);
    for (int k = 0; k < graph.nodes_size(); ++k) {
      for (int32_t s : graph.nodes(k).subgraphs()) {
        if (s < 0 || s >= count) {
          return parse_error(graph_name(m, g) + " node " + n(k) + " ('" + graph.nodes(k).name() +
                             "'): subgraph " + n(s) + " out of range (" + n(count) + " graphs)");
        }
      }
    }
  }
  return Status::ok_status();
}

// Iterative depth-first search (a hostile file may nest thousands of graphs): a reference to a
// graph still on the stack closes a cycle.
Status check_acyclic(const pkg::Manifest& m) {
  const int count = m.graphs_size();
  std::vector<std::vector<int>> edges(static_cast<size_t>(count));
  for (int g = 0; g < count; ++g)
    for (const pkg::Node& node : m.graphs(g).nodes())
      for (int32_t s : node.subgraphs()) edges[static_cast<size_t>(g)].push_back(s);
  enum : uint8_t { kNew, kOnStack, kDone };
  std::vector<uint8_t> state(static_cast<size_t>(count), kNew);
  for (int start = 0; start < count; ++start) {
    if (state[static_cast<size_t>(start)] != kNew) continue;
    std::vector<std::pair<int, size_t>> stack{{start, 0}};
    state[static_cast<size_t>(start)] = kOnStack;
    while (!stack.empty()) {
      auto& [g, next] = stack.back();
      const std::vector<int>& out = edges[static_cast<size_t>(g)];
      if (next == out.size()) {
        state[static_cast<size_t>(g)] = kDone;
        stack.pop_back();
        continue;
      }
      const int s = out[next++];
      if (state[static_cast<size_t>(s)] == kOnStack) {
        return parse_error("subgraph reference cycle: " + graph_name(m, g) + " uses " +
                           graph_name(m, s) + ", which (through its nodes) uses " +
                           graph_name(m, g) + " again");
      }
      if (state[static_cast<size_t>(s)] == kNew) {
        state[static_cast<size_t>(s)] = kOnStack;
        stack.emplace_back(s, 0);
      }
    }
  }
  return Status::ok_status();
}

Expected<GraphTree> read_tree(const pkg::Manifest& m) {
  SOD2_RETURN_IF_ERROR(check_subgraph_indices(m));
  SOD2_RETURN_IF_ERROR(check_acyclic(m));
  const int count = m.graphs_size();
  GraphTree t;
  t.parent.assign(static_cast<size_t>(count), -1);
  t.depth.assign(static_cast<size_t>(count), -1);
  std::vector<int> uses(static_cast<size_t>(count), 0);
  for (int g = 0; g < count; ++g) {
    for (const pkg::Node& node : m.graphs(g).nodes()) {
      for (int32_t s : node.subgraphs()) {
        ++uses[static_cast<size_t>(s)];
        t.parent[static_cast<size_t>(s)] = g;
      }
    }
  }
  if (uses[0] > 0) return parse_error("graph 0 (the main graph) is used as a subgraph");
  for (int g = 1; g < count; ++g) {
    if (uses[static_cast<size_t>(g)] == 0) {
      return parse_error(graph_name(m, g) + " is not the subgraph of any node");
    }
    if (uses[static_cast<size_t>(g)] != 1) {
      return parse_error(graph_name(m, g) + " is the subgraph of " +
                         n(uses[static_cast<size_t>(g)]) +
                         " node references; each subgraph must belong to exactly one");
    }
  }
  // Breadth-first from the main graph; with one parent each and no cycle, this reaches all.
  std::deque<int> queue{0};
  t.depth[0] = 0;
  while (!queue.empty()) {
    const int g = queue.front();
    queue.pop_front();
    for (const pkg::Node& node : m.graphs(g).nodes()) {
      for (int32_t s : node.subgraphs()) {
        const int d = t.depth[static_cast<size_t>(g)] + 1;
        if (d > kMaxGraphDepth) {
          return parse_error(graph_name(m, s) + " is nested " + n(d) + " levels deep; at most " +
                             n(kMaxGraphDepth) + " are supported");
        }
        t.depth[static_cast<size_t>(s)] = d;
        queue.push_back(s);
      }
    }
  }
  return t;
}

Status read_value(const pkg::Manifest& m, const GraphTree& tree, int g, int v, const ProgramDesc& p,
                  ValueDesc* out) {
  const pkg::Value& in = m.graphs(g).values(v);
  const std::string what = graph_name(m, g) + " value " + n(v) + " ('" + in.name() + "')";
  out->name = in.name();
  SOD2_ASSIGN_OR_RETURN(out->dtype, read_dtype(in.dtype(), true, what));
  const int storage = static_cast<int>(in.storage());
  if (storage < 0 || storage > static_cast<int>(ValueStorage::kOuterScope)) {
    return parse_error(what + ": unknown storage kind " + n(storage));
  }
  out->storage = static_cast<ValueStorage>(storage);
  if (in.type() > kMaxValueType) return parse_error(what + ": unknown value type " + n(in.type()));
  out->type = static_cast<ValueType>(in.type());
  if (out->type != ValueType::kTensor &&
      (out->storage == ValueStorage::kArena || out->storage == ValueStorage::kConstant)) {
    return parse_error(what + ": a " + std::string(value_type_name(out->type)) +
                       " cannot be a constant or live in the arena");
  }
  switch (out->storage) {
    case ValueStorage::kConstant:
      if (in.constant() < 0 || static_cast<size_t>(in.constant()) >= p.constants.size()) {
        return parse_error(what + ": constant " + n(in.constant()) + " out of range (" +
                           n(static_cast<int64_t>(p.constants.size())) + " constants)");
      }
      break;
    case ValueStorage::kArena:
      if (g != 0) return parse_error(what + ": only main-graph values can live in the arena");
      if (in.arena_tensor() < 0 || static_cast<size_t>(in.arena_tensor()) >= p.num_arena_tensors) {
        return parse_error(what + ": arena tensor " + n(in.arena_tensor()) + " out of range (" +
                           n(static_cast<int64_t>(p.num_arena_tensors)) + " planned tensors)");
      }
      break;
    case ValueStorage::kOuterScope: {
      const int depth = tree.depth[static_cast<size_t>(g)];
      if (in.outer_levels() < 1 || in.outer_levels() > depth) {
        return parse_error(what + ": refers " + n(in.outer_levels()) +
                           " graphs up, but the graph is nested " + n(depth) + " deep");
      }
      int outer = g;
      for (int up = 0; up < in.outer_levels(); ++up)
        outer = tree.parent[static_cast<size_t>(outer)];
      if (in.outer_value() < 0 || in.outer_value() >= m.graphs(outer).values_size()) {
        return parse_error(what + ": outer value " + n(in.outer_value()) + " out of range (" +
                           graph_name(m, outer) + " has " + n(m.graphs(outer).values_size()) +
                           " values)");
      }
      break;
    }
    case ValueStorage::kGraphInput:
    case ValueStorage::kHeap: break;
  }
  out->constant = out->storage == ValueStorage::kConstant ? in.constant() : -1;
  out->arena_tensor = out->storage == ValueStorage::kArena ? in.arena_tensor() : -1;
  out->outer_value = out->storage == ValueStorage::kOuterScope ? in.outer_value() : -1;
  out->outer_levels = out->storage == ValueStorage::kOuterScope ? in.outer_levels() : 1;
  for (const pkg::ExecDim& e : in.exec_dims()) {
    if (e.dim() < 0 || e.dim() >= kMaxRank || e.symbol() < 0 ||
        static_cast<size_t>(e.symbol()) >= p.symbols.size()) {
      return parse_error(what + ": execution dim " + n(e.dim()) + " / symbol " + n(e.symbol()) +
                         " out of range (rank <= " + n(kMaxRank) + ", " +
                         n(static_cast<int64_t>(p.symbols.size())) + " symbols)");
    }
    out->exec_dims.push_back({e.dim(), e.symbol()});
  }
  // Display text only; bounded so a hostile package cannot make tools hold megabytes per value.
  if (in.dims().size() > kMaxDimsText)
    return parse_error(what + ": dims text of " + n(static_cast<int64_t>(in.dims().size())) +
                       " bytes (at most " + n(static_cast<int64_t>(kMaxDimsText)) + ")");
  out->dims = in.dims();
  return Status::ok_status();
}

Status read_attribute(const pkg::Attribute& a, const pkg::Node& node, std::span<const uint8_t> blob,
                      const std::string& where, Attrs* attrs) {
  const std::string what = where + " attribute '" + a.name() + "'";
  if (a.name().empty()) return parse_error(where + ": an attribute has no name");
  if (attrs->has(a.name())) return parse_error(what + " appears twice");
  const int kind = static_cast<int>(a.kind());
  if (kind < 0 || kind > static_cast<int>(AttrValue::Kind::kGraph)) {
    return parse_error(what + ": unknown attribute kind " + n(kind));
  }
  AttrValue v;
  v.kind = static_cast<AttrValue::Kind>(kind);
  using K = AttrValue::Kind;
  switch (v.kind) {
    case K::kInt: v.i = a.i(); break;
    case K::kFloat: v.f = a.f(); break;
    case K::kString: v.s = a.s(); break;
    case K::kInts: v.ints.assign(a.ints().begin(), a.ints().end()); break;
    case K::kFloats: v.floats.assign(a.floats().begin(), a.floats().end()); break;
    case K::kStrings: v.strings.assign(a.strings().begin(), a.strings().end()); break;
    case K::kTensor: {
      if (!a.has_tensor()) return parse_error(what + ": a tensor attribute without a tensor");
      SOD2_ASSIGN_OR_RETURN(const Tensor t, read_tensor(a.tensor(), blob, true, what));
      // Copied: attribute tensors are small and kernels may keep the HostTensor.
      v.tensor = HostTensor(t.dtype, t.shape);
      if (t.bytes() > 0) std::memcpy(v.tensor.bytes().data(), t.data, t.bytes());
      break;
    }
    case K::kGraph: {
      bool listed = false;
      for (int32_t s : node.subgraphs()) listed = listed || s == a.graph();
      if (!listed) {
        return parse_error(what + ": graph " + n(a.graph()) +
                           " is not one of the node's subgraphs");
      }
      v.graph = a.graph();
      break;
    }
  }
  attrs->set(a.name(), std::move(v));
  return Status::ok_status();
}

// The arity the session's own If/Loop/Scan/SequenceMap code relies on without checking.
Status check_control_flow(const pkg::Node& node, const std::string& where) {
  if (!node.domain().empty()) return Status::ok_status();
  const std::string& op = node.op_type();
  if (op == "If" && (node.subgraphs_size() != 2 || node.inputs_size() < 1 || node.inputs(0) < 0)) {
    return parse_error(where + ": If needs a condition input and two subgraphs");
  }
  if (op == "Loop" && (node.subgraphs_size() != 1 || node.inputs_size() < 2)) {
    return parse_error(where + ": Loop needs two inputs (M, cond) and one subgraph");
  }
  if (op == "SequenceMap" &&
      (node.subgraphs_size() != 1 || node.inputs_size() < 1 || node.inputs(0) < 0)) {
    return parse_error(where + ": SequenceMap needs an input sequence and one subgraph");
  }
  if (op == "Scan") {
    if (node.subgraphs_size() != 1) return parse_error(where + ": Scan needs one subgraph");
    for (int32_t v : node.inputs())
      if (v < 0) return parse_error(where + ": Scan inputs cannot be omitted");
  }
  return Status::ok_status();
}

Status read_node(const pkg::Manifest& m, int g, int k, std::span<const uint8_t> blob,
                 NodeDesc* out) {
  const pkg::Node& in = m.graphs(g).nodes(k);
  const std::string where = graph_name(m, g) + " node " + n(k) + " ('" + in.name() + "')";
  const int values = m.graphs(g).values_size();
  auto check_ids = [&](const auto& ids, const char* kind) -> Status {
    for (int i = 0; i < ids.size(); ++i) {
      if (ids.Get(i) < -1 || ids.Get(i) >= values) {
        return parse_error(where + ": " + kind + " " + n(i) + " is value " + n(ids.Get(i)) +
                           ", but the graph has " + n(values) + " values");
      }
    }
    return Status::ok_status();
  };
  SOD2_RETURN_IF_ERROR(check_ids(in.inputs(), "input"));
  SOD2_RETURN_IF_ERROR(check_ids(in.outputs(), "output"));
  if (in.input_dtypes_size() != in.inputs_size() || in.input_present_size() != in.inputs_size() ||
      in.output_dtypes_size() != in.outputs_size() ||
      in.num_outputs() != static_cast<uint64_t>(in.outputs_size())) {
    return parse_error(where + ": " + n(in.inputs_size()) + " inputs with " +
                       n(in.input_dtypes_size()) + " dtypes and " + n(in.input_present_size()) +
                       " presence flags, " + n(in.outputs_size()) + " outputs with " +
                       n(in.output_dtypes_size()) + " dtypes (num_outputs " +
                       std::to_string(in.num_outputs()) + "): the counts must agree");
  }
  SOD2_RETURN_IF_ERROR(check_control_flow(in, where));
  NodeInfo& info = out->info;
  info.name = in.name();
  info.op_type = in.op_type();
  info.domain = in.domain();
  if (in.opset() < 0) return parse_error(where + ": negative opset " + n(in.opset()));
  info.opset = in.opset();
  for (int i = 0; i < in.inputs_size(); ++i) {
    SOD2_ASSIGN_OR_RETURN(const DType t,
                          read_dtype(in.input_dtypes(i), true, where + " input " + n(i)));
    if (in.input_present(i) != (in.inputs(i) >= 0)) {
      return parse_error(where + ": input " + n(i) + " is marked " +
                         (in.input_present(i) ? "present" : "omitted") + " but is value " +
                         n(in.inputs(i)));
    }
    info.input_dtypes.push_back(t);
    info.input_present.push_back(in.input_present(i));
    out->inputs.push_back(in.inputs(i));
  }
  for (int i = 0; i < in.outputs_size(); ++i) {
    SOD2_ASSIGN_OR_RETURN(const DType t,
                          read_dtype(in.output_dtypes(i), true, where + " output " + n(i)));
    info.output_dtypes.push_back(t);
    out->outputs.push_back(in.outputs(i));
  }
  info.num_outputs = static_cast<size_t>(in.outputs_size());
  out->subgraphs.assign(in.subgraphs().begin(), in.subgraphs().end());
  if (in.fused_nodes_size() != in.fused_op_types_size() ||
      static_cast<size_t>(in.fused_nodes_size()) > kMaxFusedNodes) {
    return parse_error(where + ": " + n(in.fused_nodes_size()) + " fused node names and " +
                       n(in.fused_op_types_size()) + " op types (equal counts, at most " +
                       n(static_cast<int64_t>(kMaxFusedNodes)) + ")");
  }
  for (int i = 0; i < in.fused_nodes_size(); ++i) {
    if (in.fused_nodes(i).size() > kMaxDimsText || in.fused_op_types(i).size() > kMaxDimsText)
      return parse_error(where + ": fused node name " + n(i) + " is longer than " +
                         n(static_cast<int64_t>(kMaxDimsText)) + " bytes");
    out->fused_nodes.push_back(in.fused_nodes(i));
    out->fused_op_types.push_back(in.fused_op_types(i));
  }
  for (const pkg::Attribute& a : in.attributes())
    SOD2_RETURN_IF_ERROR(read_attribute(a, in, blob, where, &info.attrs));
  return Status::ok_status();
}

Status read_graph(const pkg::Manifest& m, const GraphTree& tree, int g,
                  std::span<const uint8_t> blob, const ProgramDesc& p, GraphDesc* out) {
  const pkg::Graph& in = m.graphs(g);
  out->name = in.name();
  out->values.resize(static_cast<size_t>(in.values_size()));
  for (int v = 0; v < in.values_size(); ++v)
    SOD2_RETURN_IF_ERROR(read_value(m, tree, g, v, p, &out->values[static_cast<size_t>(v)]));
  for (const auto* ids : {&in.inputs(), &in.outputs()}) {
    const bool inputs = ids == &in.inputs();
    for (int i = 0; i < ids->size(); ++i) {
      const int32_t v = ids->Get(i);
      if (v < 0 || v >= in.values_size()) {
        return parse_error(graph_name(m, g) + ": " + (inputs ? "input " : "output ") + n(i) +
                           " is value " + n(v) + ", but the graph has " + n(in.values_size()) +
                           " values");
      }
      (inputs ? out->inputs : out->outputs).push_back(v);
    }
  }
  out->nodes.resize(static_cast<size_t>(in.nodes_size()));
  for (int k = 0; k < in.nodes_size(); ++k)
    SOD2_RETURN_IF_ERROR(read_node(m, g, k, blob, &out->nodes[static_cast<size_t>(k)]));
  return Status::ok_status();
}

}  // namespace

Status read_graphs(const pkg::Manifest& m, std::span<const uint8_t> blob, ProgramDesc* p) {
  if (m.graphs_size() == 0) return parse_error("the package has no graph");
  SOD2_ASSIGN_OR_RETURN(const GraphTree tree, read_tree(m));
  p->graphs.resize(static_cast<size_t>(m.graphs_size()));
  for (int g = 0; g < m.graphs_size(); ++g)
    SOD2_RETURN_IF_ERROR(read_graph(m, tree, g, blob, *p, &p->graphs[static_cast<size_t>(g)]));
  if (p->graphs[0].inputs.size() != p->inputs.size()) {
    return parse_error("the main graph has " + n(static_cast<int64_t>(p->graphs[0].inputs.size())) +
                       " inputs but the package declares " +
                       n(static_cast<int64_t>(p->inputs.size())) + " input signatures");
  }
  return Status::ok_status();
}

}  // namespace sod2::rt::package_detail

#include "runtime/program/program_dataflow.h"

#include <algorithm>

#include "runtime/program/byte_views.h"

namespace sod2::rt {
namespace {

const char* storage_name(ValueStorage s) {
  switch (s) {
    case ValueStorage::kGraphInput: return "a graph input";
    case ValueStorage::kConstant: return "a constant";
    case ValueStorage::kArena: return "an arena tensor";
    case ValueStorage::kHeap: return "a heap value";
    case ValueStorage::kOuterScope: return "an outer-scope value";
  }
  return "unknown";
}

bool written_by_nodes(ValueStorage s) {
  return s == ValueStorage::kArena || s == ValueStorage::kHeap;
}

// Extends, for every value of the graph `levels` above `inner` that `inner` (or a body nested in
// it) reads, its last read to step `n`.
void mark_nested_reads(const ProgramDesc& p, const GraphDesc& inner, int32_t levels, int32_t n,
                       std::vector<int32_t>& last_read, int depth) {
  if (depth > 64) return;  // the loader bounds nesting; this keeps a hand-made program finite
  for (const ValueDesc& d : inner.values) {
    if (d.storage == ValueStorage::kOuterScope && d.outer_levels == levels && d.outer_value >= 0 &&
        static_cast<size_t>(d.outer_value) < last_read.size()) {
      int32_t& l = last_read[static_cast<size_t>(d.outer_value)];
      l = std::max(l, n);
    }
  }
  for (const NodeDesc& node : inner.nodes)
    for (int32_t g : node.subgraphs)
      if (g > 0 && static_cast<size_t>(g) < p.graphs.size())
        mark_nested_reads(p, p.graphs[static_cast<size_t>(g)], levels + 1, n, last_read, depth + 1);
}

// What input `i` of `node` is, for byte_views.h: a constant's bytes decide it.
InputKind input_kind(const ProgramDesc& p, const GraphDesc& graph, const NodeDesc& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] < 0) return InputKind::kAbsent;
  const auto v = static_cast<size_t>(node.inputs[i]);
  if (v >= graph.values.size()) return InputKind::kOther;
  const ValueDesc& d = graph.values[v];
  if (d.storage != ValueStorage::kConstant || d.constant < 0 ||
      static_cast<size_t>(d.constant) >= p.constants.size())
    return InputKind::kOther;
  const Tensor t = p.constants[static_cast<size_t>(d.constant)].view();
  if (!t.is_tensor() || t.numel() != 1 || dtype_size(t.dtype) == 0) return InputKind::kOther;
  const auto* bytes = static_cast<const uint8_t*>(t.data);
  return std::all_of(bytes, bytes + t.bytes(), [](uint8_t b) { return b == 0; })
             ? InputKind::kZero
             : InputKind::kOther;
}

}  // namespace

Expected<ArenaLifetimes> check_program_dataflow(const ProgramDesc& p) {
  ArenaLifetimes out;
  const size_t na = p.num_arena_tensors;
  out.life.assign(na, {});
  out.used.assign(na, 0);
  out.value.assign(na, -1);
  out.views.assign(na, {});
  for (size_t g = 0; g < p.graphs.size(); ++g) {
    const GraphDesc& graph = p.graphs[g];
    const size_t nv = graph.values.size();
    auto vname = [&](int32_t v) { return "'" + graph.values[static_cast<size_t>(v)].name + "'"; };
    auto gname = [&] {
      return g == 0 ? std::string("the main graph") : "body '" + graph.name + "'";
    };
    auto valid = [&](int32_t v) { return v >= 0 && static_cast<size_t>(v) < nv; };
    std::vector<int32_t> producer(nv, -1);
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const NodeDesc& node = graph.nodes[n];
      for (int32_t v : node.outputs) {
        if (v < 0) continue;
        if (!valid(v))
          return invalid_model(gname() + ": node '" + node.info.name + "' writes value " +
                               std::to_string(v) + ", which does not exist");
        const ValueDesc& d = graph.values[static_cast<size_t>(v)];
        if (!written_by_nodes(d.storage)) {
          return invalid_model(gname() + ": node '" + node.info.name + "' writes " + vname(v) +
                               ", which is " + storage_name(d.storage) +
                               ": nodes write only arena and heap values");
        }
        const int32_t& prev = producer[static_cast<size_t>(v)];
        if (prev >= 0) {
          return invalid_model(gname() + ": value " + vname(v) + " is written by node '" +
                               graph.nodes[static_cast<size_t>(prev)].info.name + "' and node '" +
                               node.info.name + "'");
        }
        producer[static_cast<size_t>(v)] = static_cast<int32_t>(n);
      }
    }
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const NodeDesc& node = graph.nodes[n];
      for (int32_t v : node.inputs) {
        if (v < 0) continue;
        if (!valid(v))
          return invalid_model(gname() + ": node '" + node.info.name + "' reads value " +
                               std::to_string(v) + ", which does not exist");
        if (!written_by_nodes(graph.values[static_cast<size_t>(v)].storage)) continue;
        const int32_t prod = producer[static_cast<size_t>(v)];
        if (prod < 0) {
          return invalid_model(gname() + ": node '" + node.info.name + "' reads " + vname(v) +
                               ", which no node writes");
        }
        // A node reading its own output would read what it overwrites.
        if (prod >= static_cast<int32_t>(n)) {
          return invalid_model(gname() + ": node '" + node.info.name + "' reads " + vname(v) +
                               " before node '" + graph.nodes[static_cast<size_t>(prod)].info.name +
                               "' writes it");
        }
      }
    }
    for (int32_t v : graph.outputs) {
      if (!valid(v)) return invalid_model(gname() + ": an output is not a value");
      const ValueDesc& d = graph.values[static_cast<size_t>(v)];
      if (written_by_nodes(d.storage) && producer[static_cast<size_t>(v)] < 0)
        return invalid_model(gname() + ": output " + vname(v) + " is written by no node");
    }
    // Arena tensors: one value each, besides the views a byte-keeping op makes of it
    // (byte_views.h); two values a node writes into one tensor would overwrite each other.
    std::vector<int32_t> owner(nv, -1);  // per arena value: the value that writes its tensor
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const NodeDesc& node = graph.nodes[n];
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        const int32_t v = node.outputs[o];
        if (v < 0) continue;
        const ValueDesc& d = graph.values[static_cast<size_t>(v)];
        if (d.storage != ValueStorage::kArena) continue;
        if (g != 0 || d.arena_tensor < 0 || static_cast<size_t>(d.arena_tensor) >= na)
          return invalid_model(gname() + ": value " + vname(v) + " names arena tensor " +
                               std::to_string(d.arena_tensor) + " outside the plan's " +
                               std::to_string(na));
        const size_t k = static_cast<size_t>(d.arena_tensor);
        if (out.value[k] < 0) {
          out.value[k] = v;
          owner[static_cast<size_t>(v)] = v;
          continue;
        }
        // Inputs are written before their readers (checked above), so the viewed value has
        // its owner by now.
        const int32_t viewed = node.inputs.empty() ? -1 : node.inputs[0];
        const bool view =
            o == 0 && node.fused_nodes.empty() &&
            keeps_input_bytes(node.info.domain, node.info.op_type,
                              [&](size_t i) { return input_kind(p, graph, node, i); }) &&
            viewed >= 0 &&
            graph.values[static_cast<size_t>(viewed)].storage == ValueStorage::kArena &&
            graph.values[static_cast<size_t>(viewed)].arena_tensor == d.arena_tensor;
        if (!view) {
          return invalid_model("values " + vname(out.value[k]) + " and " + vname(v) +
                               " share arena tensor " + std::to_string(k) + ", and node '" +
                               node.info.name + "' is not a view of " + vname(out.value[k]) +
                               " (only Reshape, Flatten, Squeeze, Unsqueeze, Identity and "
                               "Dropout that drops nothing keep their input's bytes)");
        }
        owner[static_cast<size_t>(v)] = owner[static_cast<size_t>(viewed)];
        out.views[k].push_back(v);
      }
    }
    // A value no node writes still names a tensor of its own (the plan may reserve it).
    for (size_t v = 0; v < nv; ++v) {
      const ValueDesc& d = graph.values[v];
      if (d.storage != ValueStorage::kArena || owner[v] >= 0) continue;
      if (g != 0 || d.arena_tensor < 0 || static_cast<size_t>(d.arena_tensor) >= na)
        return invalid_model(gname() + ": value " + vname(static_cast<int32_t>(v)) +
                             " names arena tensor " + std::to_string(d.arena_tensor) +
                             " outside the plan's " + std::to_string(na));
      const size_t k = static_cast<size_t>(d.arena_tensor);
      if (out.value[k] >= 0) {
        return invalid_model("values " + vname(out.value[k]) + " and " +
                             vname(static_cast<int32_t>(v)) + " share arena tensor " +
                             std::to_string(k));
      }
      out.value[k] = static_cast<int32_t>(v);
    }
    if (g != 0) continue;
    // Lifetimes, by the compiler's rule (core/opt/lifetimes.h).
    const int32_t last_step = std::max<int32_t>(static_cast<int32_t>(graph.nodes.size()) - 1, 0);
    std::vector<int32_t> last_read(nv, -1);
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const NodeDesc& node = graph.nodes[n];
      for (int32_t v : node.inputs)
        if (v >= 0) last_read[static_cast<size_t>(v)] = static_cast<int32_t>(n);
      for (int32_t sg : node.subgraphs)
        if (sg > 0 && static_cast<size_t>(sg) < p.graphs.size())
          mark_nested_reads(p, p.graphs[static_cast<size_t>(sg)], 1, static_cast<int32_t>(n),
                            last_read, 0);
    }
    for (int32_t v : graph.outputs) last_read[static_cast<size_t>(v)] = last_step;
    for (size_t k = 0; k < na; ++k) {
      const int32_t v = out.value[k];
      if (v < 0 || producer[static_cast<size_t>(v)] < 0) continue;
      const int32_t first = producer[static_cast<size_t>(v)];
      out.life[k] = {first, std::max(first, last_read[static_cast<size_t>(v)])};
      out.used[k] = 1;
    }
    // A view's reads are reads of its tensor.
    for (size_t v = 0; v < nv; ++v) {
      if (owner[v] < 0 || owner[v] == static_cast<int32_t>(v)) continue;
      plan::Lifetime& l = out.life[static_cast<size_t>(graph.values[v].arena_tensor)];
      l.last_step = std::max(l.last_step, last_read[v]);
    }
  }
  return out;
}

}  // namespace sod2::rt

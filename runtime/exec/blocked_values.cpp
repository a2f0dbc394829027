#include "runtime/exec/blocked_values.h"

namespace sod2::rt {
namespace {

bool slot_bit(uint64_t mask, size_t slot) { return slot < 64 && ((mask >> slot) & 1) != 0; }

bool valid_value(const GraphDesc& g, int32_t v) {
  return v >= 0 && static_cast<size_t>(v) < g.values.size();
}

}  // namespace

std::vector<char> choose_blocked_values(const GraphDesc& graph, std::span<const BlockedIo> io,
                                        std::span<const char> read_by_bodies, int block) {
  if (block <= 0) return std::vector<char>(graph.values.size(), 0);
  const size_t nv = graph.values.size();
  std::vector<char> blocked(nv, 0);
  std::vector<int> producers(nv, 0);
  // Candidates: output 0 of a node that can write it blocked, held in the arena or the value
  // buffer (a graph input or a constant is the caller's or the package's bytes).
  for (size_t n = 0; n < graph.nodes.size() && n < io.size(); ++n) {
    const NodeDesc& node = graph.nodes[n];
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const int32_t v = node.outputs[o];
      if (!valid_value(graph, v)) continue;
      ++producers[static_cast<size_t>(v)];
      const ValueDesc& d = graph.values[static_cast<size_t>(v)];
      if (o == 0 && io[n].output && d.type == ValueType::kTensor &&
          (d.storage == ValueStorage::kArena || d.storage == ValueStorage::kHeap))
        blocked[static_cast<size_t>(v)] = 1;
    }
  }
  for (size_t v = 0; v < nv; ++v)
    if (producers[v] != 1 || (v < read_by_bodies.size() && read_by_bodies[v])) blocked[v] = 0;
  for (int32_t v : graph.outputs)
    if (valid_value(graph, v)) blocked[static_cast<size_t>(v)] = 0;
  // Values whose channels fill whole blocks: a producer's known count; a tied output's where all
  // its tied inputs' do (a pool's, a concat's sum); a following output's where one followed
  // input's does (broadcasting leaves that count). Nodes run in order: inputs come first.
  std::vector<char> whole(nv, 0);
  const auto is_whole = [&](int32_t v) {
    return valid_value(graph, v) && whole[static_cast<size_t>(v)] != 0;
  };
  for (size_t n = 0; n < graph.nodes.size() && n < io.size(); ++n) {
    const NodeDesc& node = graph.nodes[n];
    if (node.outputs.empty() || !valid_value(graph, node.outputs[0])) continue;
    bool fills = io[n].channels > 0 && io[n].channels % block == 0;
    if (io[n].channels < 0 && io[n].tied != 0) {
      fills = true;
      for (size_t i = 0; i < node.inputs.size(); ++i)
        if (slot_bit(io[n].tied, i)) fills = fills && is_whole(node.inputs[i]);
    } else if (io[n].channels < 0) {
      for (size_t i = 0; i < node.inputs.size(); ++i)
        if (slot_bit(io[n].follows, i)) fills = fills || is_whole(node.inputs[i]);
    }
    whole[static_cast<size_t>(node.outputs[0])] = fills ? 1 : 0;
  }
  for (size_t n = 0; n < graph.nodes.size() && n < io.size(); ++n) {
    const NodeDesc& node = graph.nodes[n];
    if (!node.outputs.empty() && valid_value(graph, node.outputs[0]) && !io[n].narrow_output &&
        !whole[static_cast<size_t>(node.outputs[0])])
      blocked[static_cast<size_t>(node.outputs[0])] = 0;
  }
  // Every reader must take it blocked in the slot it reads it through (narrow, unless whole).
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const NodeDesc& node = graph.nodes[n];
    const uint64_t takes = n < io.size() ? io[n].inputs : 0;
    const uint64_t narrow = n < io.size() ? io[n].narrow_inputs : 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int32_t v = node.inputs[i];
      if (!valid_value(graph, v)) continue;
      if (!slot_bit(takes, i) || (!whole[static_cast<size_t>(v)] && !slot_bit(narrow, i)))
        blocked[static_cast<size_t>(v)] = 0;
    }
  }
  // Tied slots agree with output 0: wherever one side is plain, both are. An output that follows
  // its inputs is plain where all of them are.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < graph.nodes.size() && n < io.size(); ++n) {
      const NodeDesc& node = graph.nodes[n];
      if (io[n].tied == 0 && io[n].follows == 0) continue;
      const int32_t out = node.outputs.empty() ? -1 : node.outputs[0];
      const bool out_blocked = valid_value(graph, out) && blocked[static_cast<size_t>(out)];
      if (out_blocked && io[n].follows != 0) {
        bool any_blocked = false;
        for (size_t i = 0; i < node.inputs.size(); ++i)
          any_blocked =
              any_blocked || (slot_bit(io[n].follows, i) && valid_value(graph, node.inputs[i]) &&
                              blocked[static_cast<size_t>(node.inputs[i])]);
        if (!any_blocked) {
          blocked[static_cast<size_t>(out)] = 0;
          changed = true;
          continue;
        }
      }
      if (io[n].tied == 0) continue;
      bool all_blocked = out_blocked;
      for (size_t i = 0; i < node.inputs.size(); ++i)
        if (slot_bit(io[n].tied, i))
          all_blocked = all_blocked && valid_value(graph, node.inputs[i]) &&
                        blocked[static_cast<size_t>(node.inputs[i])];
      if (all_blocked) continue;
      auto make_plain = [&](int32_t v) {
        if (valid_value(graph, v) && blocked[static_cast<size_t>(v)]) {
          blocked[static_cast<size_t>(v)] = 0;
          changed = true;
        }
      };
      make_plain(out);
      for (size_t i = 0; i < node.inputs.size(); ++i)
        if (slot_bit(io[n].tied, i)) make_plain(node.inputs[i]);
    }
  }
  return blocked;
}

NodeBlocked node_blocked(const NodeDesc& node, std::span<const char> blocked) {
  NodeBlocked nb;
  auto is_blocked = [&](int32_t v) {
    return v >= 0 && static_cast<size_t>(v) < blocked.size() && blocked[static_cast<size_t>(v)];
  };
  for (size_t i = 0; i < node.inputs.size() && i < 64; ++i)
    if (is_blocked(node.inputs[i])) nb.inputs |= uint64_t{1} << i;
  nb.output = !node.outputs.empty() && is_blocked(node.outputs[0]);
  return nb;
}

}  // namespace sod2::rt

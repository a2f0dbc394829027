#include "core/opt/plan_verifier.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace sod2::opt {
namespace {

std::string name_of(std::span<const std::string> names, size_t i) {
  return i < names.size() ? "'" + names[i] + "'" : "tensor #" + std::to_string(i);
}

std::string describe(const PlacedTensor& t) {
  return "[" + std::to_string(t.offset) + ", " + std::to_string(t.end()) + ") at steps " +
         std::to_string(t.life.first_step) + ".." + std::to_string(t.life.last_step);
}

}  // namespace

Status verify_layout(std::span<const PlacedTensor> tensors, int64_t arena_bytes,
                     std::span<const std::string> names) {
  if (arena_bytes < 0) return internal_error("negative arena size " + std::to_string(arena_bytes));
  for (size_t i = 0; i < tensors.size(); ++i) {
    const PlacedTensor& t = tensors[i];
    if (t.size < 0 || t.offset < 0 || t.offset % kTensorAlignment != 0) {
      return internal_error(name_of(names, i) + " has size " + std::to_string(t.size) +
                            " at offset " + std::to_string(t.offset) +
                            " (offsets must be non-negative multiples of " +
                            std::to_string(kTensorAlignment) + ")");
    }
    if (t.offset > arena_bytes - t.size) {
      return internal_error(name_of(names, i) + " " + describe(t) + " ends past the arena of " +
                            std::to_string(arena_bytes) + " bytes");
    }
    if (t.life.first_step > t.life.last_step) {
      return internal_error(name_of(names, i) + " has an empty lifetime");
    }
  }
  // Sweep by offset: a tensor can only collide with tensors that start before it ends, so each
  // is compared with the still-open ones (those whose bytes reach past its start).
  std::vector<size_t> by_offset(tensors.size());
  std::iota(by_offset.begin(), by_offset.end(), size_t{0});
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) {
    return tensors[a].offset != tensors[b].offset ? tensors[a].offset < tensors[b].offset : a < b;
  });
  std::vector<size_t> open;
  for (size_t i : by_offset) {
    const PlacedTensor& t = tensors[i];
    if (t.size == 0) continue;
    std::erase_if(open, [&](size_t o) { return tensors[o].end() <= t.offset; });
    for (size_t o : open) {
      if (tensors[o].life.overlaps(t.life)) {
        return internal_error(name_of(names, o) + " " + describe(tensors[o]) + " and " +
                              name_of(names, i) + " " + describe(t) +
                              " share bytes while both are live");
      }
    }
    open.push_back(i);
  }
  return Status::ok_status();
}

Status verify_lifetimes(const Graph& graph, std::span<const NodeId> order, const TensorSet& set,
                        std::span<const Lifetime> lives) {
  std::vector<int32_t> step(graph.num_nodes(), -1);
  for (size_t i = 0; i < order.size(); ++i)
    step[static_cast<size_t>(order[i])] = static_cast<int32_t>(i);
  return verify_lifetimes(graph, step, static_cast<int32_t>(order.size()), set, lives);
}

Status verify_lifetimes(const Graph& graph, std::span<const int32_t> step, int32_t num_steps,
                        const TensorSet& set, std::span<const Lifetime> lives) {
  if (lives.size() != set.tensors.size()) {
    return internal_error(std::to_string(lives.size()) + " lifetimes for " +
                          std::to_string(set.tensors.size()) + " tensors");
  }
  if (step.size() != graph.num_nodes()) {
    return internal_error(std::to_string(step.size()) + " steps for " +
                          std::to_string(graph.num_nodes()) + " nodes");
  }
  const int32_t last = num_steps - 1;
  for (size_t t = 0; t < set.tensors.size(); ++t) {
    const Value& v = graph.value(set.tensors[t].value);
    const Lifetime& l = lives[t];
    const std::string who = "'" + v.name + "' (steps " + std::to_string(l.first_step) + ".." +
                            std::to_string(l.last_step) + ")";
    if (v.producer == kNoNode || step[static_cast<size_t>(v.producer)] != l.first_step) {
      return internal_error(who + " does not start at its producer's step");
    }
    for (NodeId c : v.consumers) {
      if (!l.contains(step[static_cast<size_t>(c)])) {
        return internal_error(who + " is not live when '" + graph.node(c).name + "' (step " +
                              std::to_string(step[static_cast<size_t>(c)]) + ") reads it");
      }
    }
    if (set.tensors[t].graph_output && l.last_step != last) {
      return internal_error(who + " is a graph output but does not live to the last step");
    }
  }
  return Status::ok_status();
}

}  // namespace sod2::opt

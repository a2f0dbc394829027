// The values of one graph while it runs: views for every value, where the values the plan does
// not hold sit in the session's value buffer (or, until that buffer has grown to fit, on the
// heap), and the enclosing frame for outer-scope reads.
#pragma once

#include <vector>

#include "runtime/program/program.h"

namespace sod2::rt {

class Frame {
 public:
  Frame(const GraphDesc& graph, Frame* parent)
      : graph(&graph),
        parent(parent),
        tensors(graph.values.size()),
        heap(graph.values.size()),
        held(graph.values.size()),
        ready(graph.values.size(), 0) {}

  // The view of value v, following outer-scope references; nullptr if not produced yet.
  const Tensor* get(int32_t v) const {
    const ValueDesc& d = graph->values[static_cast<size_t>(v)];
    if (d.storage == ValueStorage::kOuterScope) {
      const Frame* f = this;
      for (int32_t up = 0; up < d.outer_levels && f; ++up) f = f->parent;
      return f ? f->get(d.outer_value) : nullptr;
    }
    return ready[static_cast<size_t>(v)] ? &tensors[static_cast<size_t>(v)] : nullptr;
  }

  const GraphDesc* graph;
  Frame* parent;
  std::vector<Tensor> tensors;
  std::vector<HostTensor> heap;  // values that did not fit the value buffer this run
  // The value-buffer range of each value the OffsetAllocator holds now (offset -1: none).
  struct Held {
    int64_t offset = -1;
    size_t bytes = 0;
  };
  std::vector<Held> held;
  std::vector<char> ready;
};

}  // namespace sod2::rt

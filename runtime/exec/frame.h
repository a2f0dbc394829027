// The values of one graph while it runs: views for every value, heap storage for values the
// arena does not hold, and the enclosing frame for outer-scope reads.
#pragma once

#include <vector>

#include "runtime/exec/program.h"

namespace sod2::rt {

class Frame {
 public:
  Frame(const GraphDesc& graph, Frame* parent)
      : graph(&graph),
        parent(parent),
        tensors(graph.values.size()),
        heap(graph.values.size()),
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
  std::vector<HostTensor> heap;
  std::vector<char> ready;
};

}  // namespace sod2::rt

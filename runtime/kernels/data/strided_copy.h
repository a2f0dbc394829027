// The copy engine behind Transpose, Slice, Expand, Tile, Split and DepthToSpace: gathers a strided
// view of a source buffer into a contiguous destination. Each op only describes its view (output
// dims and, per dim, the source stride in elements, possibly 0 or negative); the engine merges
// dims that are contiguous in the source, memcpys whole inner rows where the innermost source
// stride is 1, and splits rows across the thread pool.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/tensor/shape.h"
#include "runtime/threads/thread_pool.h"

namespace sod2::rt {

// Tile views each dim as (repeat, dim), so a view may have twice the tensor rank.
inline constexpr int kMaxViewRank = 2 * kMaxRank;

struct StridedView {
  int rank = 0;
  int64_t dims[kMaxViewRank] = {};
  int64_t src_strides[kMaxViewRank] = {};  // elements; 0 repeats, negative walks backwards

  void push(int64_t dim, int64_t stride) {
    dims[rank] = dim;
    src_strides[rank] = stride;
    ++rank;
  }
};

// Writes the view's elements in row-major order to `dst`. `src` points at the element all of
// whose view indices are 0.
void strided_copy(ThreadPool& pool, void* dst, const void* src, size_t elem_size,
                  const StridedView& view);

}  // namespace sod2::rt

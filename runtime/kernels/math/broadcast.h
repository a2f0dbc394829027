// Numpy multidirectional broadcasting: the output shape of several inputs, and a loop plan that
// walks the output in row-major order with each input's offset, after collapsing dims that need
// no index arithmetic (so same-shape inputs become one flat row, and a row or scalar operand
// becomes a row with stride 1 or 0 that the per-op inner loops specialise on).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/status/status.h"
#include "runtime/tensor/shape.h"

namespace sod2::rt::math {

inline constexpr int kMaxBroadcastInputs = 3;

// The broadcast of `n` shapes; an invalid_argument error naming the two shapes that conflict.
Status broadcast_shapes(const char* op, const Shape* const* shapes, int n, Shape* out);
inline Status broadcast_shapes(const char* op, const Shape& a, const Shape& b, Shape* out) {
  const Shape* s[2] = {&a, &b};
  return broadcast_shapes(op, s, 2, out);
}

struct BroadcastPlan {
  int rank = 1;  // after collapsing; at least 1
  int num_inputs = 0;
  int64_t numel = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxBroadcastInputs][kMaxRank] = {};  // in elements; 0 where broadcast
  // The innermost stride of each input (0: broadcast scalar along the row, 1: contiguous).
  int64_t inner_stride(int input) const { return strides[input][rank - 1]; }
};

// `out` must be the broadcast of `inputs` (each input's dims either match or are 1).
BroadcastPlan plan_broadcast(const Shape& out, const Shape* const* inputs, int n);

// Which part of a channel-blocked walk: images [image, image + images) and channels [first,
// first + channels), either whole blocks or one narrow last block (channels < block).
struct BlockedPart {
  int64_t image = 0, images = 1;
  int64_t first = 0, channels = 0;
};

// The same walk where channel-blocked tensors take part (kernel.h, BlockedIo), over one part of
// `out` [N, C, H, W]: held blocked ([N, C / block, H, W, block], the last block narrower where C
// is not a multiple of `block`) where out_blocked, and walked in its bytes' order either way, so
// the part's output is contiguous when it is whole images or one image's channels. Inputs whose
// bit is set in `blocked_inputs` are held blocked (rank 4, C channels); the others are NCHW (or
// of lower rank, right-aligned) and are read through strides, so a per-channel scale [N, C, 1, 1]
// or a scalar costs nothing extra, and a blocked input with an NCHW output converts on the way.
// offsets[k] gets where input k's part starts (floats); the output's is the part's first
// image and channel in either layout. The caller checks the shapes.
BroadcastPlan plan_broadcast_blocked(const Shape& out, const Shape* const* inputs, int n,
                                     uint32_t blocked_inputs, bool out_blocked, int block,
                                     const BlockedPart& part, int64_t* offsets);

// Calls row(out_offset, const int64_t* input_offsets, count) for each maximal piece of an
// innermost row inside the output range [begin, end). Pieces are visited in order.
template <class RowFn>
void for_each_row(const BroadcastPlan& p, int64_t begin, int64_t end, RowFn&& row) {
  const int last = p.rank - 1;
  int64_t idx[kMaxRank];
  int64_t rem = begin;
  for (int d = last; d >= 0; --d) {
    idx[d] = rem % p.dims[d];
    rem /= p.dims[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t off[kMaxBroadcastInputs] = {};
    for (int k = 0; k < p.num_inputs; ++k)
      for (int d = 0; d <= last; ++d) off[k] += idx[d] * p.strides[k][d];
    const int64_t count = std::min(p.dims[last] - idx[last], end - pos);
    row(pos, static_cast<const int64_t*>(off), count);
    pos += count;
    idx[last] += count;
    for (int d = last; d > 0 && idx[d] >= p.dims[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

}  // namespace sod2::rt::math

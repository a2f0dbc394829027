#include "runtime/kernels/math/broadcast.h"

#include <string>

namespace sod2::rt::math {

Status broadcast_shapes(const char* op, const Shape* const* shapes, int n, Shape* out) {
  int rank = 0;
  for (int k = 0; k < n; ++k) rank = std::max(rank, shapes[k]->rank());
  Shape result;
  result.set_rank(rank);
  // Which input decided each dim, to name both shapes when another one conflicts.
  int owner[kMaxRank] = {};
  for (int k = 0; k < n; ++k) {
    const Shape& s = *shapes[k];
    const int shift = rank - s.rank();
    for (int i = 0; i < s.rank(); ++i) {
      const int64_t d = s[i];
      int64_t& r = result[i + shift];
      if (d == r || d == 1) continue;
      if (r == 1) {
        r = d;
        owner[i + shift] = k;
        continue;
      }
      return invalid_argument(std::string(op) + ": shapes " +
                              shapes[owner[i + shift]]->to_string() + " and " + s.to_string() +
                              " cannot be broadcast together");
    }
  }
  *out = result;
  return Status::ok_status();
}

namespace {

// Drops size-1 output dims and merges a dim into the previous one where every input's stride
// continues it (stride[d-1] == stride[d] * dims[d]).
BroadcastPlan collapse(const int64_t* out, int rank, const int64_t (*full)[kMaxRank], int n) {
  BroadcastPlan p;
  p.num_inputs = n;
  p.numel = 1;
  for (int d = 0; d < rank; ++d) p.numel *= out[d];
  int r = 0;
  for (int d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    bool merge = r > 0;
    for (int k = 0; k < n && merge; ++k) merge = p.strides[k][r - 1] == full[k][d] * out[d];
    if (merge) {
      p.dims[r - 1] *= out[d];
      for (int k = 0; k < n; ++k) p.strides[k][r - 1] = full[k][d];
    } else {
      p.dims[r] = out[d];
      for (int k = 0; k < n; ++k) p.strides[k][r] = full[k][d];
      ++r;
    }
  }
  if (r == 0) {
    p.dims[0] = 1;
    for (int k = 0; k < n; ++k) p.strides[k][0] = 0;
    r = 1;
  }
  p.rank = r;
  return p;
}

}  // namespace

BroadcastPlan plan_broadcast(const Shape& out, const Shape* const* inputs, int n) {
  const int rank = out.rank();
  // Right-aligned strides of every input against the output; 0 along broadcast dims.
  int64_t full[kMaxBroadcastInputs][kMaxRank] = {};
  for (int k = 0; k < n; ++k) {
    const Shape& s = *inputs[k];
    const int shift = rank - s.rank();
    int64_t st = 1;
    for (int i = s.rank() - 1; i >= 0; --i) {
      full[k][i + shift] = s[i] == 1 ? 0 : st;
      st *= s[i];
    }
  }
  int64_t dims[kMaxRank] = {};
  for (int d = 0; d < rank; ++d) dims[d] = out[d];
  return collapse(dims, rank, full, n);
}

BroadcastPlan plan_broadcast_blocked(const Shape& out, const Shape* const* inputs, int n,
                                     uint32_t blocked_inputs, bool out_blocked, int block,
                                     const BlockedPart& part, int64_t* offsets) {
  const int64_t B = block;
  // This part's blocks are `width` lanes wide: `block`, or the narrow last block's channels.
  const int64_t width = part.channels < B ? part.channels : B;
  // Each tensor's strides along (image, channel block, lane, row, column); the walk takes them in
  // the output's own bytes' order: [N, C / B, H, W, B] held blocked, [N, C / B, B, H, W] NCHW.
  const int order_blocked[5] = {0, 1, 3, 4, 2}, order_plain[5] = {0, 1, 2, 3, 4};
  const int* order = out_blocked ? order_blocked : order_plain;
  const int64_t logical[5] = {part.images, part.channels / width, width, out[2], out[3]};
  int64_t dims[5];
  for (int i = 0; i < 5; ++i) dims[i] = logical[order[i]];
  int64_t full[kMaxBroadcastInputs][kMaxRank] = {};
  for (int k = 0; k < n; ++k) {
    const Shape& s = *inputs[k];
    int64_t d[4] = {1, 1, 1, 1};  // right-aligned to [n, c, h, w]
    for (int i = 0; i < s.rank(); ++i) d[4 - s.rank() + i] = s[i];
    const auto step = [](int64_t dim, int64_t stride) { return dim == 1 ? 0 : stride; };
    const int64_t plane = d[2] * d[3];
    int64_t st[5];
    // Every block before the part is whole, so either layout's part starts `first` planes in.
    offsets[k] = step(d[0], part.image * d[1] * plane) + step(d[1], part.first * plane);
    if ((blocked_inputs >> k) & 1) {  // [n, c / B, h, w, B] in memory, the last block narrower
      st[0] = step(d[0], d[1] * plane);
      st[1] = step(d[1], plane * B);
      st[2] = step(d[1], 1);
      st[3] = step(d[2], d[3] * width);
      st[4] = step(d[3], width);
    } else {  // [n, c, h, w] in memory: channel cb * B + j is plane (cb * B + j)
      st[0] = step(d[0], d[1] * plane);
      st[1] = step(d[1], B * plane);
      st[2] = step(d[1], plane);
      st[3] = step(d[2], d[3]);
      st[4] = step(d[3], 1);
    }
    for (int i = 0; i < 5; ++i) full[k][i] = st[order[i]];
  }
  return collapse(dims, 5, full, n);
}

}  // namespace sod2::rt::math

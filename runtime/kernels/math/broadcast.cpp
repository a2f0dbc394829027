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

BroadcastPlan plan_broadcast(const Shape& out, const Shape* const* inputs, int n) {
  BroadcastPlan p;
  p.num_inputs = n;
  p.numel = out.numel();
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
  // Drop size-1 output dims and merge a dim into the previous one where every input's stride
  // continues it (stride[d-1] == stride[d] * dims[d]).
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

}  // namespace sod2::rt::math

// A work item is VL consecutive planes: their positions are interleaved (channel_blocks.h) into
// a buffer padded with -inf on every side the windows reach, so each tap of VL outputs is one
// vector load and one max, with no bounds checks; the results are interleaved back into the
// output planes.
#include "runtime/kernels/linalg/pool_lanes.h"

#include <algorithm>
#include <limits>

#include "runtime/kernels/linalg/channel_blocks.h"
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;

// Largest per-thread scratch (floats): the padded input and the output of VL planes.
constexpr int64_t kMaxSlotFloats = int64_t{64} << 10;

struct LaneJob : Window2D {  // the window's spatial axes (geometry.h)
  const float* x;
  float* y;
  int64_t planes;
  Window3 g;       // the whole window, for the taps each output's window keeps (axis_window)
  int64_t ph, pw;  // the padded buffer's rows and columns
  // Slot layout (floats from the slot's start), each part 64-byte aligned.
  int64_t padded_off, out_off, slot_floats;
};

// Whether any tap of output o's window on axis a reads the input.
inline bool window_reaches_input(const Window3& g, int a, int64_t o) {
  const AxisWindow w = axis_window(g, a, o);
  return w.t1 > w.t0;
}

LaneJob lane_job(const Window3& g, int vl) {
  LaneJob j{};
  j.g = g;
  static_cast<Window2D&>(j) = window_2d(g);
  // Rows and columns the taps read, or the input reaches, whichever is further.
  j.ph = std::max((j.oh - 1) * j.sh + (j.kh - 1) * j.dh + 1, j.pt + j.ih);
  j.pw = std::max((j.ow - 1) * j.sw + (j.kw - 1) * j.dw + 1, j.pl + j.iw);
  j.padded_off = 0;
  j.out_off = j.padded_off + round_up(j.ph * j.pw * vl, 16);
  j.slot_floats = j.out_off + round_up(j.oh * j.ow * vl, 16);
  return j;
}

// One output: the max of its window's taps (K > 0: a KxK window, unrolled).
template <int VL, int K>
SOD2_SIMD_INLINE Vec<VL> window_max(const LaneJob& j, const float* w) {
  const int64_t kh = K > 0 ? K : j.kh, kw = K > 0 ? K : j.kw;
  Vec<VL> acc = simd::load<VL>(w);
#pragma GCC unroll 4
  for (int64_t ky = 0; ky < kh; ++ky)
#pragma GCC unroll 4
    for (int64_t kx = 0; kx < kw; ++kx)
      acc = simd::vmax<VL>(acc, simd::load<VL>(w + (ky * j.dh * j.pw + kx * j.dw) * VL));
  return acc;
}

template <int VL, int K>
SOD2_SIMD_INLINE void pool_item(const LaneJob& j, const float* padded, const bool* column_reaches,
                                float* out) {
  for (int64_t oy = 0; oy < j.oh; ++oy) {
    const bool row_reaches = window_reaches_input(j.g, 1, oy);
    for (int64_t ox = 0; ox < j.ow; ++ox) {
      float* o = out + (oy * j.ow + ox) * VL;
      if (row_reaches && column_reaches[ox])
        simd::store<VL>(o, window_max<VL, K>(j, padded + (oy * j.sh * j.pw + ox * j.sw) * VL));
      else
        simd::store<VL>(o, Vec<VL>{});
    }
  }
}

template <int VL>
SOD2_SIMD_INLINE void run_items(const LaneJob& j, int64_t i0, int64_t i1, float* slot) {
  float* padded = slot + j.padded_off;
  float* out = slot + j.out_off;
  constexpr float kLow = -std::numeric_limits<float>::infinity();
  // The padding is written once: every item rewrites the same interior.
  std::fill(padded, padded + j.ph * j.pw * VL, kLow);
  bool column_reaches[VL];  // ow <= VL
  for (int64_t ox = 0; ox < j.ow; ++ox) column_reaches[ox] = window_reaches_input(j.g, 2, ox);
  const bool k3 = j.kh == 3 && j.kw == 3;
  const int64_t in_plane = j.ih * j.iw, out_plane = j.oh * j.ow, row = j.pw * VL;
  for (int64_t it = i0; it < i1; ++it) {
    const int64_t p0 = it * VL;
    const int nc = static_cast<int>(std::min<int64_t>(VL, j.planes - p0));
    // Straight into the padded buffer's interior rows.
    block_positions_rows(VL, nc, j.x + p0 * in_plane, in_plane, in_plane, j.iw, row,
                         padded + j.pt * row + j.pl * VL);
    if (k3)
      pool_item<VL, 3>(j, padded, column_reaches, out);
    else
      pool_item<VL, 0>(j, padded, column_reaches, out);
    unblock_positions(VL, nc, out, out_plane, out_plane, j.y + p0 * out_plane);
  }
}

// run_items at each ISA level (simd::items_for).
struct LaneItems {
  template <int VL>
  SOD2_SIMD_INLINE static void run(const LaneJob& j, int64_t i0, int64_t i1, float* slot) {
    run_items<VL>(j, i0, i1, slot);
  }
};

}  // namespace

bool max_pool_lanes_applies(const Window3& g) {
  const int vl = simd::lanes(simd::simd_level());
  if (g.spatial > 2 || g.out_size() == 0 || g.out[2] > vl) return false;
  // Each extent within the slot first, so that the layout's products cannot overflow.
  for (int a = 1; a < 3; ++a)
    for (const int64_t v : {g.in[a], g.out[a], g.k[a], g.stride[a], g.dil[a], g.pad_begin[a]})
      if (v > kMaxSlotFloats) return false;
  const int64_t reach_h = (g.out[1] - 1) * g.stride[1] + (g.k[1] - 1) * g.dil[1] + 1;
  const int64_t reach_w = (g.out[2] - 1) * g.stride[2] + (g.k[2] - 1) * g.dil[2] + 1;
  if (reach_h > kMaxSlotFloats || reach_w > kMaxSlotFloats) return false;
  return lane_job(g, vl).slot_floats <= kMaxSlotFloats;
}

Status max_pool_lanes(KernelContext& ctx, const Window3& g, int64_t planes, const float* X,
                      float* Y) {
  const simd::Level level = simd::simd_level();
  const int vl = simd::lanes(level);
  if (!max_pool_lanes_applies(g))
    return internal_error("MaxPool: the plane-lane path does not serve this window");
  LaneJob j = lane_job(g, vl);
  j.x = X;
  j.y = Y;
  j.planes = planes;
  const int64_t items = (planes + vl - 1) / vl;
  const double item_taps = static_cast<double>(g.out_size()) * g.k_size() * vl;
  const int64_t grain =
      std::max<int64_t>(1, static_cast<int64_t>(1.0e5 / std::max(item_taps, 1.0)));
  return run_in_slots(ctx, items, grain, j.slot_floats, j,
                      simd::items_for<LaneItems, LaneJob>(level));
}

}  // namespace sod2::rt

// Each output row is computed in two passes over a thread's row buffer, both on whole vectors:
//  1. the maxima of the window's input rows, column by column, into the buffer, which holds
//     -inf where the left and right pads are (written once per work item);
//  2. at stride 2, that row split into its even and odd columns; then tap tx of every output
//     is one shifted run of phase (tx * dilation) % stride, so an output vector is one load and
//     one max per tap.
// A row of iw inputs costs about kh + kw / stride vector operations per VL outputs instead of
// kh * kw loads (each a two-load deinterleave at stride 2).
#include "runtime/kernels/linalg/pool_rows.h"

#include <algorithm>
#include <limits>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;

// Largest per-thread scratch (floats): the row buffer and its two phases.
constexpr int64_t kMaxSlotFloats = int64_t{64} << 10;
constexpr int kMaxLanes = 16;

struct RowJob : Window2D {  // the window's spatial axes (geometry.h)
  const float* x = nullptr;
  float* y = nullptr;
  Window3 g{};             // for axis_window
  int64_t bands = 0;       // output-row bands per plane (work items are plane x band)
  int64_t band_rows = 0;   // output rows per band
  int64_t row_floats = 0;  // the row buffer: pl + iw columns, -inf up to the last tap read
  int64_t phase_floats = 0;
  int64_t slot_floats = 0;
  // Output columns whose window lies entirely in padding (0 by definition), only with pads of
  // at least the window's reach: [0, zero_left) and [zero_right, ow).
  int64_t zero_left = 0, zero_right = 0;
};

// The columns the taps read: up to the last window's last tap, past the row when the end pad
// or ceil_mode reaches beyond it.
inline int64_t row_extent(const Window3& g) {
  return std::max(g.pad_begin[2] + g.in[2],
                  (g.out[2] - 1) * g.stride[2] + (g.k[2] - 1) * g.dil[2] + 1);
}

RowJob row_job(const Window3& g, int vl, int64_t planes, int threads) {
  RowJob j{window_2d(g)};
  j.g = g;
  const int64_t ext = row_extent(g);
  // Phase runs are read VL at a time from any output column: slack of a vector and a tap.
  const int64_t plen = round_up(ext / j.sw + j.kw * j.dw + 2 * vl, vl);
  j.phase_floats = j.sw == 2 ? round_up(plen, 16) : 0;
  // Stride 2 splits 2 * phase_floats columns; stride 1 reads plen from any output column.
  j.row_floats = round_up(std::max(ext, std::max(plen, 2 * j.phase_floats)) + 2 * vl, 16);
  j.slot_floats = j.row_floats + 2 * j.phase_floats;
  // Enough items for every thread to get a few at batch 1 (32 planes on 2 threads is fine; a
  // 3-plane map is not).
  const int64_t want = int64_t{4} * threads;
  j.bands = std::clamp<int64_t>((want + planes - 1) / std::max<int64_t>(planes, 1), 1, j.oh);
  j.band_rows = (j.oh + j.bands - 1) / j.bands;
  j.bands = (j.oh + j.band_rows - 1) / j.band_rows;
  j.zero_left = 0;
  while (j.zero_left < j.ow) {
    const AxisWindow w = axis_window(g, 2, j.zero_left);
    if (w.t1 > w.t0) break;
    ++j.zero_left;
  }
  j.zero_right = j.ow;
  while (j.zero_right > j.zero_left) {
    const AxisWindow w = axis_window(g, 2, j.zero_right - 1);
    if (w.t1 > w.t0) break;
    --j.zero_right;
  }
  return j;
}

// buf[pl + i] = max over the window's input rows of row[i], i in [0, iw).
template <int VL>
SOD2_SIMD_INLINE void vertical_max(const RowJob& j, const float* plane, const AxisWindow& wy,
                                   float* buf) {
  const float* first = plane + (wy.start + wy.t0 * j.dh) * j.iw;
  const int64_t rows = wy.t1 - wy.t0, step = j.dh * j.iw;
  float* out = buf + j.pl;
  auto block = [&](int64_t c) {
    Vec<VL> acc = simd::load<VL>(first + c);
    for (int64_t r = 1; r < rows; ++r)
      acc = simd::vmax<VL>(acc, simd::load<VL>(first + r * step + c));
    simd::store<VL>(out + c, acc);
  };
  if (j.iw >= VL) {
    int64_t c = 0;
    for (; c + VL <= j.iw; c += VL) block(c);
    if (c < j.iw) block(j.iw - VL);  // the tail as an overlapping last vector
    return;
  }
  for (int64_t c = 0; c < j.iw; ++c) {
    float acc = first[c];
    for (int64_t r = 1; r < rows; ++r) acc = std::max(acc, first[r * step + c]);
    out[c] = acc;
  }
}

// out[ox] = max over taps of src(tap)[ox + offset(tap)], ox in [0, ow): phases of a stride-2
// row, or the row itself at stride 1.
template <int VL, int S>
SOD2_SIMD_INLINE void horizontal_max(const RowJob& j, const float* phase0, const float* phase1,
                                     float* out) {
  for (int64_t ox = 0; ox < j.ow; ox += VL) {
    Vec<VL> acc = simd::splat<VL>(-std::numeric_limits<float>::infinity());
    for (int64_t tx = 0; tx < j.kw; ++tx) {
      const int64_t col = tx * j.dw;
      const float* src = S == 1 ? phase0 + col : (col % 2 ? phase1 : phase0) + col / 2;
      acc = simd::vmax<VL>(acc, simd::load<VL>(src + ox));
    }
    simd::store_n<VL>(out + ox, acc, std::min<int64_t>(VL, j.ow - ox));
  }
}

template <int VL, int S>
SOD2_SIMD_INLINE void run_items(const RowJob& j, int64_t i0, int64_t i1, float* slot) {
  constexpr float kLow = -std::numeric_limits<float>::infinity();
  float* buf = slot;
  float* even = slot + j.row_floats;
  float* odd = even + j.phase_floats;
  // The pads stay -inf: every row rewrites only columns [pl, pl + iw).
  std::fill(buf, buf + j.row_floats, kLow);
  const int64_t in_plane = j.ih * j.iw, out_plane = j.oh * j.ow;
  const int64_t pairs = j.phase_floats / VL;
  for (int64_t it = i0; it < i1; ++it) {
    const int64_t p = it / j.bands, band = it % j.bands;
    const float* plane = j.x + p * in_plane;
    float* yp = j.y + p * out_plane;
    const int64_t oy1 = std::min(j.oh, (band + 1) * j.band_rows);
    for (int64_t oy = band * j.band_rows; oy < oy1; ++oy) {
      float* out = yp + oy * j.ow;
      const AxisWindow wy = axis_window(j.g, 1, oy);
      if (wy.t1 <= wy.t0) {
        std::fill(out, out + j.ow, 0.f);  // the window's rows are all padding
        continue;
      }
      vertical_max<VL>(j, plane, wy, buf);
      if constexpr (S == 2) {
        for (int64_t i = 0; i < pairs; ++i) {
          const Vec<VL> a = simd::load<VL>(buf + 2 * i * VL),
                        b = simd::load<VL>(buf + (2 * i + 1) * VL);
          simd::store<VL>(even + i * VL, simd::even_lanes<VL>(a, b));
          simd::store<VL>(odd + i * VL, simd::odd_lanes<VL>(a, b));
        }
        horizontal_max<VL, 2>(j, even, odd, out);
      } else {
        horizontal_max<VL, 1>(j, buf, buf, out);
      }
      std::fill(out, out + j.zero_left, 0.f);
      std::fill(out + j.zero_right, out + j.ow, 0.f);
    }
  }
}

template <int VL>
SOD2_SIMD_INLINE void run_items_vl(const RowJob& j, int64_t i0, int64_t i1, float* slot) {
  if (j.sw == 2)
    run_items<VL, 2>(j, i0, i1, slot);
  else
    run_items<VL, 1>(j, i0, i1, slot);
}

// run_items at each ISA level (simd::items_for).
struct RowItems {
  template <int VL>
  SOD2_SIMD_INLINE static void run(const RowJob& j, int64_t i0, int64_t i1, float* slot) {
    run_items_vl<VL>(j, i0, i1, slot);
  }
};

}  // namespace

bool max_pool_rows_applies(const Window3& g) {
  if (g.spatial > 2 || g.out_size() == 0 || g.k[0] != 1 || g.in[0] != 1 || g.out[0] != 1)
    return false;
  if (g.stride[2] != 1 && g.stride[2] != 2) return false;
  // Each extent within the slot first, so that the buffer sizes cannot overflow.
  for (const int64_t v : {g.in[2], g.out[2], g.k[2], g.dil[2], g.pad_begin[2], g.pad_end[2]})
    if (v > kMaxSlotFloats) return false;
  if ((g.k[2] - 1) * g.dil[2] > kMaxSlotFloats) return false;
  return row_job(g, kMaxLanes, 1, 1).slot_floats <= kMaxSlotFloats;
}

Status max_pool_rows(KernelContext& ctx, const Window3& g, int64_t planes, const float* X,
                     float* Y) {
  const simd::Level level = simd::simd_level();
  if (!max_pool_rows_applies(g))
    return internal_error("MaxPool: the row-buffer path does not serve this window");
  RowJob j = row_job(g, simd::lanes(level), planes, ctx.pool().num_threads());
  j.x = X;
  j.y = Y;
  const int64_t items = planes * j.bands;
  const double item_taps = static_cast<double>(j.band_rows) * j.ow * j.kh * j.kw;
  const int64_t grain =
      std::max<int64_t>(1, static_cast<int64_t>(2.0e4 / std::max(item_taps, 1.0)));
  return run_in_slots(ctx, items, grain, j.slot_floats, j,
                      simd::items_for<RowItems, RowJob>(level));
}

}  // namespace sod2::rt

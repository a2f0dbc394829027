// Depthwise convolution (one input channel per group, any channel multiplier; 1-D and 2-D):
// direct loops vectorised over output columns.
//
// Each input plane is first copied into a scratch layout where every case is a stride-1,
// branch-free loop:
//  - each input row is padded left/right with zeros (so borders need no bounds checks) and split
//    into `stride_w` phases (phase p holds padded columns p, p + sw, p + 2sw...), so a strided
//    tap reads consecutive floats of one phase;
//  - rows above/below the input (vertical padding) point to one shared zero row.
// The copy is one pass over the input; the taps then run on vectors of VL floats, in blocks of
// R output rows x NV vectors held in registers across all taps (R*NV independent accumulators
// hide the FMA latency, and for stride 1 every loaded input vector feeds up to R output rows).
// Square 3x3/5x5/7x7 kernels with equal strides 1 or 2 and no dilation are fully unrolled, every
// tap's phase and offset a constant; everything else (1-D, other sizes, dilations, unequal or
// larger strides) takes a generic vectorised loop over the same layout. Bias and plain
// activations are applied to the accumulators before the store (epilogue_simd.h); residuals
// and Tanh run per block of rows right after it is stored, while it is in L1.
#include <algorithm>
#include <cstring>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/conv_rows.h"
#include "runtime/kernels/linalg/epilogue_simd.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using conv_rows::prepare_rows;
using simd::Vec;

constexpr int kMaxNV = 4;

// Everything a chunk of planes needs, computed once per run.
struct DwJob : Window2D {  // the window's spatial axes (geometry.h)
  const float* x;          // nullptr: the input is x8's 8-bit values
  DepthwiseInt8Input x8;   // centred into a float plane per item (slot + plane_off)
  const float* w;
  float* y;
  const EpilogueRun* e;
  InlineEpilogue ie;   // the part of *e applied to the accumulators before the store
  int64_t c, m, mult;  // input channels, output channels, outputs per input channel
  int64_t mchunk;      // outputs per work item (a slice of the multiplier)
  int vl, nv;          // vector lanes; vectors per block
  int64_t bw;          // block width in floats: nv * vl
  int64_t pw;          // floats per phase of a prepared row
  int64_t rf;          // floats per prepared row: sw * pw
  int64_t th;          // padded rows the kernels may read
  bool fixed;          // the unrolled K x K path applies
  bool half;           // rows fit half a vector: run on VL/2 lanes
  // Slot layout (floats from the slot's start).
  int64_t buf_off, zero_off, tab_off, koff_off, plane_off, slot_floats;
};

int rows_per_block(int nv) { return nv == 1 ? 8 : nv == 2 ? 4 : 2; }

// Stores rows [0, nrows) of a block whose first `cols` columns are valid.
template <int VL, int R, int NV>
SOD2_SIMD_INLINE void store_block(const Vec<VL> (&acc)[R][NV], float* y, int64_t ldy, int64_t nrows,
                                  int64_t cols) {
  for (int r = 0; r < R; ++r) {
    if (r >= nrows) break;
    float* yr = y + r * ldy;
    if (cols >= NV * VL) {
      for (int v = 0; v < NV; ++v) simd::store<VL>(yr + v * VL, acc[r][v]);
    } else {
      for (int v = 0; v < NV; ++v) {
        const int64_t n = std::clamp<int64_t>(cols - v * VL, 0, VL);
        if (n == VL)
          simd::store<VL>(yr + v * VL, acc[r][v]);
        else if (n > 0)
          simd::store_n<VL>(yr + v * VL, acc[r][v], n);
      }
    }
  }
}

// One output plane with a K x K kernel, stride S on both axes, no dilation: every tap's
// phase and offset are constants.
template <int VL, int K, int S, int NV>
SOD2_SIMD_INLINE void plane_fixed(const DwJob& j, const float* const* tab, const float* w, float* y,
                                  const float* res, int64_t oc) {
  constexpr int R = NV == 1 ? 8 : NV == 2 ? 4 : 2;
  constexpr int U = (R - 1) * S + K;  // input rows one block reads
  const int64_t pw = j.pw;
  for (int64_t oy0 = 0; oy0 < j.oh; oy0 += R) {
    const int64_t nrows = std::min<int64_t>(R, j.oh - oy0);
    for (int64_t ox0 = 0; ox0 < j.ow; ox0 += NV * VL) {
      const float* const* rows = simd::launder(tab + oy0 * S);
      const float* wk = simd::launder(w);
      Vec<VL> acc[R][NV];
      for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = Vec<VL>{};
#pragma GCC unroll 32
      for (int u = 0; u < U; ++u) {
        const float* rp = rows[u] + ox0;
#pragma GCC unroll 8
        for (int kx = 0; kx < K; ++kx) {
          const float* src = rp + (kx % S) * pw + kx / S;
          Vec<VL> xv[NV];
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) xv[v] = simd::load<VL>(src + v * VL);
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            const int ky = u - r * S;
            if (ky < 0 || ky >= K) continue;
            const float wv = wk[ky * K + kx];
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[r][v] += wv * xv[v];
          }
        }
      }
      if (j.ie.on)
        for (int r = 0; r < R; ++r)
          for (int v = 0; v < NV; ++v) acc[r][v] = inline_epilogue<VL>(acc[r][v], j.ie, oc);
      store_block<VL, R, NV>(acc, y + oy0 * j.ow + ox0, j.ow, nrows, j.ow - ox0);
    }
    if (!j.e->empty() && !j.ie.on)
      j.e->apply(y + oy0 * j.ow, res ? res + oy0 * j.ow : nullptr, 1, nrows * j.ow, nrows * j.ow,
                 oc, true);
  }
}

// Any kernel, strides and dilations: one output row at a time, NV vectors per block.
template <int VL, int NV>
SOD2_SIMD_INLINE void plane_generic(const DwJob& j, const float* const* tab, const int64_t* koff,
                                    const float* w, float* y, const float* res, int64_t oc) {
  for (int64_t oy = 0; oy < j.oh; ++oy) {
    const float* const* rows = tab + oy * j.sh;
    for (int64_t ox0 = 0; ox0 < j.ow; ox0 += NV * VL) {
      Vec<VL> acc[1][NV];
      for (int v = 0; v < NV; ++v) acc[0][v] = Vec<VL>{};
      for (int64_t ky = 0; ky < j.kh; ++ky) {
        const float* rp = rows[ky * j.dh] + ox0;
        const float* wr = w + ky * j.kw;
        for (int64_t kx = 0; kx < j.kw; ++kx) {
          const float wv = wr[kx];
          const float* src = rp + koff[kx];
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) acc[0][v] += wv * simd::load<VL>(src + v * VL);
        }
      }
      if (j.ie.on)
        for (int v = 0; v < NV; ++v) acc[0][v] = inline_epilogue<VL>(acc[0][v], j.ie, oc);
      store_block<VL, 1, NV>(acc, y + oy * j.ow + ox0, j.ow, 1, j.ow - ox0);
    }
    if (!j.e->empty() && !j.ie.on)
      j.e->apply(y + oy * j.ow, res ? res + oy * j.ow : nullptr, 1, j.ow, j.ow, oc, true);
  }
}

template <int VL, int NV>
SOD2_SIMD_INLINE void plane_nv(const DwJob& j, const float* const* tab, const int64_t* koff,
                               const float* w, float* y, const float* res, int64_t oc) {
  if (j.fixed) {
    const int key = static_cast<int>(j.kh * 10 + j.sh);
    switch (key) {
      case 31: return plane_fixed<VL, 3, 1, NV>(j, tab, w, y, res, oc);
      case 32: return plane_fixed<VL, 3, 2, NV>(j, tab, w, y, res, oc);
      case 51: return plane_fixed<VL, 5, 1, NV>(j, tab, w, y, res, oc);
      case 52: return plane_fixed<VL, 5, 2, NV>(j, tab, w, y, res, oc);
      case 71: return plane_fixed<VL, 7, 1, NV>(j, tab, w, y, res, oc);
      case 72: return plane_fixed<VL, 7, 2, NV>(j, tab, w, y, res, oc);
      default: break;
    }
  }
  plane_generic<VL, NV>(j, tab, koff, w, y, res, oc);
}

// Work items [i0, i1): item = (input plane, slice of its output channels).
// An 8-bit input plane minus its zero point, as floats (exact), into `out`.
SOD2_SIMD_INLINE const float* centre_plane(const DwJob& j, int64_t plane, float* out) {
  const int64_t n = j.ih * j.iw;
  centre_8bit(j.x8, plane * n, n, out);
  return out;
}

template <int VL>
SOD2_SIMD_INLINE void run_items(const DwJob& j, int64_t i0, int64_t i1, float* slot) {
  float* buf = slot + j.buf_off;
  float* zero = slot + j.zero_off;
  auto** tab = reinterpret_cast<const float**>(slot + j.tab_off);
  auto* koff = reinterpret_cast<int64_t*>(slot + j.koff_off);
  std::fill(zero, zero + j.rf, 0.f);
  for (int64_t t = 0; t < j.th; ++t) {
    const int64_t iy = t - j.pt;
    tab[t] = iy >= 0 && iy < j.ih ? buf + iy * j.rf : zero;
  }
  for (int64_t kx = 0; kx < j.kw; ++kx) koff[kx] = conv_rows::tap_offset(kx, j.dw, j.sw, j.pw);
  const int64_t slices = (j.mult + j.mchunk - 1) / j.mchunk;
  const int64_t P = j.oh * j.ow;
  for (int64_t it = i0; it < i1; ++it) {
    const int64_t plane = it / slices, sl = it % slices;  // plane = img * c + ic
    const int64_t img = plane / j.c, ic = plane % j.c;
    const float* src = j.x ? j.x + plane * j.ih * j.iw : centre_plane(j, plane, slot + j.plane_off);
    prepare_rows<VL>(src, buf, j.ih, j.iw, j.sw, j.pl, j.pw, j.rf);
    const int64_t q1 = std::min(j.mult, (sl + 1) * j.mchunk);
    for (int64_t q = sl * j.mchunk; q < q1; ++q) {
      const int64_t oc = ic * j.mult + q;
      const int64_t off = (img * j.m + oc) * P;
      const float* res = j.e->residual ? j.e->residual + off : nullptr;
      const float* w = j.w + oc * j.kh * j.kw;
      if (VL >= 8 && j.half) {
        // Rows of at most VL/2 outputs: half-width vectors waste fewer lanes.
        plane_nv<(VL >= 8 ? VL / 2 : VL), 1>(j, tab, koff, w, j.y + off, res, oc);
        continue;
      }
      switch (j.nv) {
        case 1: plane_nv<VL, 1>(j, tab, koff, w, j.y + off, res, oc); break;
        case 2: plane_nv<VL, 2>(j, tab, koff, w, j.y + off, res, oc); break;
        case 3: plane_nv<VL, 3>(j, tab, koff, w, j.y + off, res, oc); break;
        default: plane_nv<VL, 4>(j, tab, koff, w, j.y + off, res, oc); break;
      }
    }
    if (j.x8.finish)  // this item's output planes
      j.x8.finish(j.x8.finish_context, img * j.m + ic * j.mult + sl * j.mchunk, q1 - sl * j.mchunk,
                  0, P);
  }
}

// run_items at each ISA level (simd::items_for).
struct DwItems {
  template <int VL>
  SOD2_SIMD_INLINE static void run(const DwJob& j, int64_t i0, int64_t i1, float* slot) {
    run_items<VL>(j, i0, i1, slot);
  }
};

}  // namespace

Status depthwise_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                         float* Y, const EpilogueRun& e, const DepthwiseInt8Input* x8) {
  const Window3& g = s.win;
  DwJob j;
  j.x = X;
  if (x8) j.x8 = *x8;
  if (!X && !(x8 && x8->data)) return invalid_argument("depthwise convolution: no input");
  j.w = W;
  j.y = Y;
  j.e = &e;
  j.ie = InlineEpilogue::from(e);
  j.c = s.c;
  j.m = s.m;
  j.mult = s.m / s.c;
  static_cast<Window2D&>(j) = window_2d(g);
  const simd::Level level = simd::simd_level();
  j.vl = simd::lanes(level);
  j.nv = static_cast<int>(std::clamp<int64_t>((j.ow + j.vl - 1) / j.vl, 1, kMaxNV));
  j.half = j.vl >= 8 && j.ow <= j.vl / 2;
  j.bw = j.half ? j.vl / 2 : static_cast<int64_t>(j.nv) * j.vl;
  j.fixed = j.kh == j.kw && (j.kh == 3 || j.kh == 5 || j.kh == 7) && j.dh == 1 && j.dw == 1 &&
            j.sh == j.sw && (j.sh == 1 || j.sh == 2);
  j.pw = conv_rows::phase_width(j.ow, j.bw, j.kw, j.dw, j.sw);
  j.rf = j.sw * j.pw;
  const int64_t rpb = j.fixed ? rows_per_block(j.half ? 1 : j.nv) : 1;
  j.th = (round_up(j.oh, rpb) - 1) * j.sh + (j.kh - 1) * j.dh + 1;
  // Slot layout, each part 64-byte aligned.
  j.buf_off = 0;
  j.zero_off = round_up(j.ih * j.rf + 16, 16);  // slack for zero_over
  j.tab_off = j.zero_off + round_up(j.rf + 16, 16);
  j.koff_off = j.tab_off + round_up(j.th * 2, 16);  // pointers are two floats wide
  j.plane_off = j.koff_off + round_up(j.kw * 2, 16);
  j.slot_floats = j.plane_off + (X ? 0 : round_up(j.ih * j.iw, 16));

  ThreadPool& pool = ctx.pool();
  const int64_t threads = pool.num_threads();
  const int64_t planes = s.n * s.c;
  // Split each plane's outputs over items only when planes alone cannot feed the threads.
  int64_t slices = 1;
  if (planes < 2 * threads && j.mult > 1)
    slices = std::min(j.mult, (2 * threads + planes - 1) / planes);
  j.mchunk = (j.mult + slices - 1) / slices;
  slices = (j.mult + j.mchunk - 1) / j.mchunk;
  const int64_t items = planes * slices;
  const double item_macs = static_cast<double>(j.mchunk) * j.oh * j.ow * j.kh * j.kw;
  const int64_t grain =
      std::max<int64_t>(1, static_cast<int64_t>(2.0e5 / std::max(item_macs, 1.0)));
  return run_in_slots(ctx, items, grain, j.slot_floats, j, simd::items_for<DwItems, DwJob>(level));
}

}  // namespace sod2::rt

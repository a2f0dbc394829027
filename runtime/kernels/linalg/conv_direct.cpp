// Dense direct convolution (several input channels per group, 1-D/2-D, kernels larger than 1x1)
// without im2col: im2col writes kh*kw copies of the input for a GEMM whose M (output channels)
// is small in these models, and that copy dominated.
//
// Work items are bands of output rows of one image and group; each copies the input rows it
// reads, of every channel, into the padded, phase-split rows of conv_rows.h (sized to stay in
// L2; rows shared by neighbouring bands are copied twice). Output rows are then computed in
// blocks of MB = 8 output channels x NV vectors of output columns, all held in registers: for
// each input channel and tap, NV input vectors are loaded once and feed MB multiply-adds each,
// the weights being broadcast from a copy repacked as [channel block][input channel][ky][kx][MB]
// (one run-time repack, a few KiB). Bias and plain activations are applied to the accumulators
// (epilogue_simd.h); residuals and Tanh run on each block of MB output rows right after
// they are written. Rows too narrow to fill vectors (19 outputs in 2 x 16 lanes) vectorise over
// output channels instead when those come in whole vectors (rows_by_channel).
#include <algorithm>
#include <cstring>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/conv_rows.h"
#include "runtime/kernels/linalg/epilogue_simd.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;

constexpr int MB = 8;  // output channels per register block

struct DcJob : Window2D {  // the window's spatial axes (geometry.h)
  const float* x;
  float* y;
  const EpilogueRun* e;
  InlineEpilogue ie;  // the part of *e applied to the accumulators before the store
  int64_t c, m, cg, mg, mblocks;
  int vl, nv;
  bool by_channel;  // narrow rows: vectors over output channels (rows_by_channel)
  int64_t cb;       // by_channel: output channels per block (MV vectors of VL)
  int64_t pw, rf;
  int64_t band_rows;     // output rows per work item
  int64_t plane_stride;  // floats per prepared input channel of a band (rows * rf + slack)
  const float* wpack;    // packed weights of all groups
  const int64_t* koff;   // per kx, offset inside a prepared row
};

// One work item: output rows [oy0, oy1) of (img, grp), whose input rows [in0, in1) are
// prepared in `planes` (one block of plane_stride floats per input channel).
struct Band {
  int64_t img, grp, oy0, oy1, in0;
  const float* planes;
};

// Output rows [oy0, oy1) of the current (image, group); KW > 0 fixes kw.
template <int VL, int NV, int KW>
SOD2_SIMD_INLINE void rows_block(const DcJob& j, const Band& b) {
  const int64_t kw = KW > 0 ? KW : j.kw;
  const int64_t kvol = j.kh * kw;
  const int64_t P = j.oh * j.ow;
  const int64_t plane_floats = j.plane_stride;
  const int64_t oy0 = b.oy0, oy1 = b.oy1;
  int64_t koff[KW > 0 ? KW : 1];
  if constexpr (KW > 0)
    for (int kx = 0; kx < KW; ++kx) koff[kx] = j.koff[kx];
  float* ybase = j.y + (b.img * j.m + b.grp * j.mg) * P;
  const float* rbase = j.e->residual ? j.e->residual + (b.img * j.m + b.grp * j.mg) * P : nullptr;
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    // Taps ky whose input row exists (the others read zeros).
    int64_t ky0 = 0, ky1 = j.kh;
    const int64_t top = oy * j.sh - j.pt;
    while (ky0 < ky1 && top + ky0 * j.dh < 0) ++ky0;
    while (ky1 > ky0 && top + (ky1 - 1) * j.dh >= j.ih) --ky1;
    for (int64_t mb = 0; mb < j.mblocks; ++mb) {
      const float* wb = j.wpack + ((b.grp * j.mblocks + mb) * j.cg) * kvol * MB;
      const int64_t mrows = std::min<int64_t>(MB, j.mg - mb * MB);
      for (int64_t ox0 = 0; ox0 < j.ow; ox0 += NV * VL) {
        Vec<VL> acc[MB][NV];
        for (int r = 0; r < MB; ++r)
          for (int v = 0; v < NV; ++v) acc[r][v] = Vec<VL>{};
        for (int64_t ci = 0; ci < j.cg; ++ci) {
          const float* plane = b.planes + ci * plane_floats + ox0;
          const float* wc = wb + ci * kvol * MB;
          for (int64_t ky = ky0; ky < ky1; ++ky) {
            const float* row = plane + (top + ky * j.dh - b.in0) * j.rf;
            const float* wk = simd::launder(wc + ky * kw * MB);
#pragma GCC unroll 8
            for (int64_t kx = 0; kx < kw; ++kx) {
              const float* src = row + (KW > 0 ? koff[kx] : j.koff[kx]);
              Vec<VL> xv[NV];
#pragma GCC unroll 4
              for (int v = 0; v < NV; ++v) xv[v] = simd::load<VL>(src + v * VL);
#pragma GCC unroll 8
              for (int r = 0; r < MB; ++r) {
                const float wv = wk[kx * MB + r];
#pragma GCC unroll 4
                for (int v = 0; v < NV; ++v) acc[r][v] += wv * xv[v];
              }
            }
          }
        }
        if (j.ie.on)
          for (int r = 0; r < MB; ++r)
            for (int v = 0; v < NV; ++v)
              acc[r][v] = inline_epilogue<VL>(
                  acc[r][v], j.ie, b.grp * j.mg + std::min<int64_t>(mb * MB + r, j.mg - 1));
        const int64_t cols = std::min<int64_t>(NV * VL, j.ow - ox0);
        for (int r = 0; r < MB; ++r) {
          if (r >= mrows) break;
          float* yr = ybase + (mb * MB + r) * P + oy * j.ow + ox0;
          for (int v = 0; v < NV; ++v) {
            const int64_t n = std::clamp<int64_t>(cols - v * VL, 0, VL);
            if (n == VL)
              simd::store<VL>(yr + v * VL, acc[r][v]);
            else if (n > 0)
              simd::store_n<VL>(yr + v * VL, acc[r][v], n);
          }
        }
      }
      if (!j.e->empty() && !j.ie.on) {
        const int64_t off = mb * MB * P + oy * j.ow;
        j.e->apply(ybase + off, rbase ? rbase + off : nullptr, mrows, j.ow, P,
                   b.grp * j.mg + mb * MB, true);
      }
    }
  }
}

// Narrow output rows (19 outputs would fill 19 of 32 lanes): vectors over output channels
// instead. A block is PB output positions x MV vectors of channels; per input channel and tap,
// MV weight vectors are loaded and each position's input is broadcast into MV multiply-adds.
// The block is then transposed into the NCHW rows through a small buffer.
template <int VL, int MV>
SOD2_SIMD_INLINE void rows_by_channel(const DcJob& j, const Band& b) {
  constexpr int PB = MV == 1 ? 12 : 6;
  constexpr int CB = MV * VL;
  const int64_t kw = j.kw, kvol = j.kh * kw;
  const int64_t P = j.oh * j.ow;
  const int64_t blocks = j.mg / CB;
  float* ybase = j.y + (b.img * j.m + b.grp * j.mg) * P;
  const float* rbase = j.e->residual ? j.e->residual + (b.img * j.m + b.grp * j.mg) * P : nullptr;
  alignas(64) float tile[PB][CB];
  for (int64_t oy = b.oy0; oy < b.oy1; ++oy) {
    int64_t ky0 = 0, ky1 = j.kh;
    const int64_t top = oy * j.sh - j.pt;
    while (ky0 < ky1 && top + ky0 * j.dh < 0) ++ky0;
    while (ky1 > ky0 && top + (ky1 - 1) * j.dh >= j.ih) --ky1;
    for (int64_t mb = 0; mb < blocks; ++mb) {
      const float* wb = j.wpack + ((b.grp * blocks + mb) * j.cg) * kvol * CB;
      for (int64_t ox0 = 0; ox0 < j.ow; ox0 += PB) {
        Vec<VL> acc[PB][MV];
        for (int p = 0; p < PB; ++p)
          for (int v = 0; v < MV; ++v) acc[p][v] = Vec<VL>{};
        for (int64_t ci = 0; ci < j.cg; ++ci) {
          const float* plane = b.planes + ci * j.plane_stride + ox0;
          const float* wc = wb + ci * kvol * CB;
          for (int64_t ky = ky0; ky < ky1; ++ky) {
            const float* row = plane + (top + ky * j.dh - b.in0) * j.rf;
            const float* wk = wc + ky * kw * CB;
            for (int64_t kx = 0; kx < kw; ++kx) {
              const float* src = simd::launder(row + j.koff[kx]);
              Vec<VL> wv[MV];
#pragma GCC unroll 4
              for (int v = 0; v < MV; ++v) wv[v] = simd::load<VL>(wk + kx * CB + v * VL);
#pragma GCC unroll 16
              for (int p = 0; p < PB; ++p) {
                const float xb = src[p];
#pragma GCC unroll 4
                for (int v = 0; v < MV; ++v) acc[p][v] += xb * wv[v];
              }
            }
          }
        }
        for (int p = 0; p < PB; ++p)
          for (int v = 0; v < MV; ++v) simd::store<VL>(&tile[p][v * VL], acc[p][v]);
        const int64_t np = std::min<int64_t>(PB, j.ow - ox0);
        float* y0 = ybase + mb * CB * P + oy * j.ow + ox0;
        for (int c = 0; c < CB; ++c)
          for (int64_t p = 0; p < np; ++p) y0[c * P + p] = tile[p][c];
      }
      if (!j.e->empty()) {
        const int64_t off = mb * CB * P + oy * j.ow;
        j.e->apply(ybase + off, rbase ? rbase + off : nullptr, CB, j.ow, P, b.grp * j.mg + mb * CB,
                   true);
      }
    }
  }
}

template <int VL>
SOD2_SIMD_INLINE void rows_dispatch(const DcJob& j, const Band& b) {
  if (j.by_channel) {
    if (j.cb == 2 * VL) return rows_by_channel<VL, 2>(j, b);
    return rows_by_channel<VL, 1>(j, b);
  }
  if (j.kw == 3) {
    if (j.nv == 1) return rows_block<VL, 1, 3>(j, b);
    return rows_block<VL, 2, 3>(j, b);
  }
  if (j.nv == 1) return rows_block<VL, 1, 0>(j, b);
  rows_block<VL, 2, 0>(j, b);
}

// Work items [i0, i1) (image, group, band of output rows): prepares the band's input rows of
// every channel of the group into `slot`, then computes the band.
template <int VL>
SOD2_SIMD_INLINE void run_bands(const DcJob& j, int64_t i0, int64_t i1, float* slot) {
  const int64_t bands = (j.oh + j.band_rows - 1) / j.band_rows;
  for (int64_t it = i0; it < i1; ++it) {
    Band b;
    const int64_t unit = it / bands, band = it % bands;
    b.img = unit / (j.m / j.mg);
    b.grp = unit % (j.m / j.mg);
    b.oy0 = band * j.band_rows;
    b.oy1 = std::min(j.oh, b.oy0 + j.band_rows);
    b.in0 = std::max<int64_t>(0, b.oy0 * j.sh - j.pt);
    const int64_t in1 = std::min(j.ih, (b.oy1 - 1) * j.sh - j.pt + (j.kh - 1) * j.dh + 1);
    b.planes = slot;
    const float* xg = j.x + (b.img * j.c + b.grp * j.cg) * j.ih * j.iw;
    if (in1 > b.in0)
      for (int64_t ci = 0; ci < j.cg; ++ci)
        conv_rows::prepare_rows<VL>(xg + (ci * j.ih + b.in0) * j.iw, slot + ci * j.plane_stride,
                                    in1 - b.in0, j.iw, j.sw, j.pl, j.pw, j.rf);
    rows_dispatch<VL>(j, b);
  }
}

// run_bands at each ISA level (simd::items_for).
struct DcBands {
  template <int VL>
  SOD2_SIMD_INLINE static void run(const DcJob& j, int64_t i0, int64_t i1, float* slot) {
    run_bands<VL>(j, i0, i1, slot);
  }
};

}  // namespace

bool direct_conv_applies(const ConvShape& s) {
  const Window3& g = s.win;
  const int64_t cg = s.c / s.group, kvol = g.k_size();
  // Kernels up to 128 channels x 3x3 keep a block's weights (MB x cg x kvol floats) in L1;
  // bigger reductions are better served by a GEMM, and so are rows that fill less than two
  // thirds of their vectors (19 outputs in 2 x 16 lanes measured slower than im2col) unless
  // the output channels fill vectors.
  const int64_t vl = simd::lanes(simd::simd_level());
  const int64_t ow = g.out[2];
  const bool lanes_used = 3 * ow >= 2 * ((ow + vl - 1) / vl * vl);
  // Narrow rows vectorise over output channels instead, when they come in whole vectors.
  const bool by_channel = (s.m / s.group) % vl == 0;
  // Small images (under ~23x23 outputs) go to im2col + GEMM too: their few row bands each
  // prepare every input channel again, which costs more than the panel copy (128->128 3x3 on
  // 8x8: 0.24 ms direct, 0.15 ms GEMM; 16x16 at 2 threads 0.22 vs 0.19 ms; 32x32 direct wins).
  const int64_t positions = g.out[1] * ow;
  return g.spatial <= 2 && cg > 1 && kvol > 1 && cg * kvol <= 1280 && positions >= 512 &&
         ((ow >= 4 && lanes_used) || by_channel);
}

Status direct_conv_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                           float* Y, const EpilogueRun& e) {
  const Window3& g = s.win;
  DcJob j{};
  j.x = X;
  j.y = Y;
  j.e = &e;
  j.ie = InlineEpilogue::from(e);
  j.c = s.c;
  j.m = s.m;
  j.cg = s.c / s.group;
  j.mg = s.m / s.group;
  j.mblocks = (j.mg + MB - 1) / MB;
  static_cast<Window2D&>(j) = window_2d(g);
  const simd::Level level = simd::simd_level();
  j.vl = simd::lanes(level);
  j.nv = j.ow > j.vl ? 2 : 1;
  {
    const int64_t ow = j.ow, vl = j.vl;
    j.by_channel = !(ow >= 4 && 3 * ow >= 2 * ((ow + vl - 1) / vl * vl));
  }
  j.cb = j.mg % (2 * j.vl) == 0 ? 2 * j.vl : j.vl;
  // Positions per block of rows_by_channel: 12 with one channel vector, 6 with two.
  const int64_t block_w = j.by_channel ? (j.cb == j.vl ? 12 : 6) : int64_t{j.nv} * j.vl;
  j.pw = conv_rows::phase_width(j.ow, block_w, j.kw, j.dw, j.sw);
  j.rf = j.sw * j.pw;
  const int64_t kvol = j.kh * j.kw;
  // Bands of output rows whose prepared input (cg channels) stays within ~192 KiB of L2, at
  // least two per thread when the image allows.
  ThreadPool& pool = ctx.pool();
  const int64_t threads = pool.num_threads();
  auto in_rows = [&](int64_t rows) { return (rows - 1) * j.sh + (j.kh - 1) * j.dh + 1; };
  j.band_rows = j.oh;
  while (j.band_rows > 1 && j.cg * in_rows(j.band_rows) * j.rf > 48 * 1024)
    j.band_rows = (j.band_rows + 1) / 2;
  const int64_t units = s.n * s.group;
  if (units < 2 * threads)
    j.band_rows = std::min(j.band_rows, std::max<int64_t>(1, j.oh * units / (2 * threads)));
  j.plane_stride = round_up(std::min(j.ih, in_rows(j.band_rows)) * j.rf + 16, 16);
  const int64_t slot_floats = j.cg * j.plane_stride;
  const int slots = ScratchSlots::count(pool);
  const int64_t pack_floats = round_up(s.group * std::max(j.mblocks * MB, j.mg) * j.cg * kvol, 16);
  SOD2_ASSIGN_OR_RETURN(float* scratch, scratch_floats(ctx, slots * slot_floats + pack_floats +
                                                                2 * round_up(j.kw, 8)));
  const int64_t plane_floats = slots * slot_floats;
  ScratchSlots slot_set(scratch, slot_floats, slots);
  float* wpack = scratch + plane_floats;
  auto* koff = reinterpret_cast<int64_t*>(scratch + plane_floats + pack_floats);
  for (int64_t kx = 0; kx < j.kw; ++kx) koff[kx] = conv_rows::tap_offset(kx, j.dw, j.sw, j.pw);
  j.koff = koff;
  // W [m, cg, kh, kw] -> [group][channel block][ci][ky][kx][MB], zeros past mg (by_channel:
  // blocks of cb channels, which divide mg).
  const int64_t pack_b = j.by_channel ? j.cb : MB;
  const int64_t pack_blocks = j.by_channel ? j.mg / j.cb : j.mblocks;
  for (int64_t grp = 0; grp < s.group && j.by_channel; ++grp)
    for (int64_t mb = 0; mb < pack_blocks; ++mb) {
      float* dst = wpack + ((grp * pack_blocks + mb) * j.cg) * kvol * pack_b;
      for (int64_t r = 0; r < pack_b; ++r) {
        const float* src = W + (grp * j.mg + mb * pack_b + r) * j.cg * kvol;
        for (int64_t t = 0; t < j.cg * kvol; ++t) dst[t * pack_b + r] = src[t];
      }
    }
  for (int64_t grp = 0; grp < s.group && !j.by_channel; ++grp)
    for (int64_t mb = 0; mb < j.mblocks; ++mb) {
      float* dst = wpack + ((grp * j.mblocks + mb) * j.cg) * kvol * MB;
      for (int64_t r = 0; r < MB; ++r) {
        const int64_t mo = mb * MB + r;
        const float* src = mo < j.mg ? W + (grp * j.mg + mo) * j.cg * kvol : nullptr;
        for (int64_t t = 0; t < j.cg * kvol; ++t) dst[t * MB + r] = src ? src[t] : 0.f;
      }
    }
  j.wpack = wpack;

  const auto run = simd::items_for<DcBands, DcJob>(level);
  const int64_t bands = (j.oh + j.band_rows - 1) / j.band_rows;
  const double band_macs = static_cast<double>(j.mg) * j.band_rows * j.ow * j.cg * kvol;
  const int64_t grain =
      std::max<int64_t>(1, static_cast<int64_t>(2.0e5 / std::max(band_macs, 1.0)));
  slot_set.parallel_for(pool, units * bands, grain,
                        [&](int64_t i0, int64_t i1, float* slot) { run(j, i0, i1, slot); });
  return Status::ok_status();
}

}  // namespace sod2::rt

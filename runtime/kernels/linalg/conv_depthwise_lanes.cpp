// Depthwise convolution with channels in vector lanes, where the row path (conv_depthwise.cpp)
// wastes work: rows too narrow to fill its vectors (MobileNet's and EfficientNet's 14x14 and 7x7
// stages), strided kernels, and 5x5/7x7 kernels.
//
// A work item is VL channels of one image, over a band of output rows. The band's input rows
// are interleaved into a zero-padded position-major buffer (buf[(row * pw + col) * VL + lane],
// sized to stay in L2 with the band's output), so every tap is one vector load and
// one FMA for VL channels at once, with no bounds checks, whatever the stride, dilation or kernel
// size. Blocks of B outputs, running across row ends, are accumulated together (B independent
// FMA chains hide the latency; each tap's weight vector is loaded once for all of them). The result
// is interleaved back into the output planes while it is cached; bias and plain activations are
// applied to the accumulators (the bias as a per-lane vector), residuals and Tanh per plane
// afterwards.
#include <algorithm>
#include <cstring>

#include "runtime/kernels/linalg/channel_blocks.h"
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/epilogue_simd.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;

// Outputs accumulated together.
constexpr int kOutputsPerBlock = 8;
// Padded input floats a band aims at: it and its output stay in L2 (dw_bench: 24K-float bands
// ran up to 20% slower, 96K ones no faster).
constexpr int64_t kBandFloats = 48 * 1024;
// Largest per-thread scratch (floats) the path takes: rows so wide that one output row's input
// exceeds it (long 1-D sequences) stay on the row path.
constexpr int64_t kMaxSlotFloats = int64_t{1} << 18;

struct LaneJob : Window2D {  // the window's spatial axes (geometry.h)
  const float* x;            // nullptr: the input is x8's 8-bit values
  DepthwiseInt8Input x8;     // centred into floats as they are interleaved
  const float* w;
  float* y;
  const EpilogueRun* e;
  InlineEpilogue act;  // the activation, when applied to the accumulators (bias handled apart)
  bool inline_epilogue;
  bool x_blocked, y_blocked;  // X, Y (with the residual) held channel-blocked, VL per block
  int64_t c, groups;          // channels; channel groups per image (ceil(c / VL))
  int64_t pw;                 // columns of the padded buffer
  // Work items are bands of band_rows output rows, which read band_in_rows padded input rows.
  int64_t band_rows, bands, band_in_rows;
  // Slot layout (floats from the slot's start), each part 64-byte aligned.
  int64_t padded_off, out_off, weights_off, bias_off, slot_floats;
};

// B outputs: in[b] is the padded buffer at output b's window, out the first one's result. A is
// the activation applied to the sums (kNone also where the epilogue runs after the store): a
// compile-time constant, so the sums stay in registers through it.
template <int VL, int B, Activation A>
SOD2_SIMD_INLINE void outputs(const LaneJob& j, const float* const* in, const float* wt,
                              Vec<VL> bias, float* out) {
  Vec<VL> acc[B];
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) acc[b] = bias;
  const int64_t row_step = j.dh * j.pw * VL, tap_step = j.dw * VL;
  for (int64_t ky = 0; ky < j.kh; ++ky) {
    const int64_t r = ky * row_step;
    const float* wr = wt + ky * j.kw * VL;
    for (int64_t kx = 0; kx < j.kw; ++kx) {
      const Vec<VL> wv = simd::load<VL>(wr + kx * VL);
      const int64_t t = r + kx * tap_step;
#pragma GCC unroll 8
      for (int b = 0; b < B; ++b) acc[b] += wv * simd::load<VL>(in[b] + t);
    }
  }
  InlineEpilogue act = j.act;
  act.act = A;
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
    if constexpr (A != Activation::kNone) acc[b] = inline_epilogue<VL>(acc[b], act, 0);
    simd::store<VL>(out + b * VL, acc[b]);
  }
}

// The band's `count` outputs (row-major from its first row) into out, in blocks of
// kOutputsPerBlock that run across row ends, so a 7-wide row still gets independent
// accumulators.
template <int VL, Activation A>
SOD2_SIMD_INLINE void band_outputs(const LaneJob& j, const float* padded, int64_t count,
                                   const float* wt, Vec<VL> bias, float* out) {
  const float* in[kOutputsPerBlock];
  int64_t oy = 0, ox = 0;
  for (int64_t q0 = 0; q0 < count; q0 += kOutputsPerBlock) {
    const int n = static_cast<int>(std::min<int64_t>(kOutputsPerBlock, count - q0));
    for (int b = 0; b < n; ++b) {
      in[b] = padded + (oy * j.sh * j.pw + ox * j.sw) * VL;
      if (++ox == j.ow) {
        ox = 0;
        ++oy;
      }
    }
    float* o = out + q0 * VL;
    switch (n) {
      case 8: outputs<VL, 8, A>(j, in, wt, bias, o); break;
      case 7: outputs<VL, 7, A>(j, in, wt, bias, o); break;
      case 6: outputs<VL, 6, A>(j, in, wt, bias, o); break;
      case 5: outputs<VL, 5, A>(j, in, wt, bias, o); break;
      case 4: outputs<VL, 4, A>(j, in, wt, bias, o); break;
      case 3: outputs<VL, 3, A>(j, in, wt, bias, o); break;
      case 2: outputs<VL, 2, A>(j, in, wt, bias, o); break;
      default: outputs<VL, 1, A>(j, in, wt, bias, o); break;
    }
  }
}

template <int VL>
SOD2_SIMD_INLINE void run_items(const LaneJob& j, int64_t i0, int64_t i1, float* slot) {
  float* padded = slot + j.padded_off;
  float* out = slot + j.out_off;
  float* wt = slot + j.weights_off;
  float* bias = slot + j.bias_off;
  // The left and right borders are zeroed once: every item rewrites the same columns between.
  const int64_t row_floats = j.pw * VL;
  for (int64_t r = 0; r < j.band_in_rows; ++r) {
    float* row = padded + r * row_floats;
    std::fill(row, row + j.pl * VL, 0.f);
    std::fill(row + (j.pl + j.iw) * VL, row + row_floats, 0.f);
  }
  const int64_t in_plane = j.ih * j.iw, out_plane = j.oh * j.ow, taps = j.kh * j.kw;
  for (int64_t it = i0; it < i1; ++it) {
    const int64_t band = it % j.bands, unit = it / j.bands;
    const int64_t img = unit / j.groups, c0 = unit % j.groups * VL;
    const int nc = static_cast<int>(std::min<int64_t>(VL, j.c - c0));
    const int64_t oy0 = band * j.band_rows, oy1 = std::min(j.oh, oy0 + j.band_rows);
    // Padded rows [r0, r1) feed the band; the input rows among them are [iy0, iy1).
    const int64_t r0 = oy0 * j.sh, r1 = (oy1 - 1) * j.sh + (j.kh - 1) * j.dh + 1;
    const int64_t iy0 = std::clamp<int64_t>(r0 - j.pt, 0, j.ih);
    const int64_t iy1 = std::clamp<int64_t>(r1 - j.pt, iy0, j.ih);
    const int64_t first = (img * j.c + c0) * in_plane + iy0 * j.iw, count = (iy1 - iy0) * j.iw;
    // The band's rows are contiguous in each plane: one interleave of whole tiles for all,
    // each position stored straight into its padded row. A blocked X holds them interleaved
    // already, in one run (its block starts where the NCHW block of planes would), copied in.
    float* band_in = padded + (iy0 + j.pt - r0) * row_floats + j.pl * VL;
    if (j.x_blocked) {
      // A narrow last block (kernel.h) holds nc lanes per position: its lanes past them are
      // zeroed here, as the interleave zeroes them, so no earlier group's values linger there.
      const float* rows = j.x + (img * j.c + c0) * in_plane + iy0 * j.iw * nc;
      for (int64_t iy = iy0; iy < iy1; ++iy) {
        float* dst = band_in + (iy - iy0) * row_floats;
        const float* src = rows + (iy - iy0) * j.iw * nc;
        if (nc == VL) {
          std::memcpy(dst, src, sizeof(float) * j.iw * VL);
          continue;
        }
        for (int64_t ix = 0; ix < j.iw; ++ix) {
          std::memcpy(dst + ix * VL, src + ix * nc, sizeof(float) * static_cast<size_t>(nc));
          std::fill(dst + ix * VL + nc, dst + (ix + 1) * VL, 0.f);
        }
      }
    } else if (j.x) {
      block_positions_rows(VL, nc, j.x + first, in_plane, count, j.iw, row_floats, band_in);
    } else {
      block_positions_8bit_rows(VL, nc, static_cast<const uint8_t*>(j.x8.data) + first,
                                j.x8.type == DType::kInt8, j.x8.zero_point, in_plane, count, j.iw,
                                row_floats, band_in);
    }
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t iy = r - j.pt;
      if (iy < iy0 || iy >= iy1) {
        float* row = padded + (r - r0) * row_floats;
        std::fill(row, row + row_floats, 0.f);
      }
    }
    block_positions(VL, nc, j.w + c0 * taps, taps, taps, wt);
    for (int l = 0; l < VL; ++l) {
      float b = 0.f;
      if (j.inline_epilogue && l < nc)
        for (const float* src : j.e->bias)
          if (src) b += src[c0 + l];
      bias[l] = b;
    }
    const Vec<VL> bv = simd::load<VL>(bias);
    const int64_t outputs_here = (oy1 - oy0) * j.ow;
    // A blocked Y takes the band's outputs in place, interleaved as they are computed; a narrow
    // last block gets them from `out`, nc lanes per position.
    float* held_y = j.y_blocked ? j.y + (img * j.c + c0) * out_plane + oy0 * j.ow * nc : nullptr;
    float* results = held_y && nc == VL ? held_y : out;
    switch (j.inline_epilogue ? j.act.act : Activation::kNone) {
#define SOD2_DW_CASE(A) \
  case A: band_outputs<VL, A>(j, padded, outputs_here, wt, bv, results); break;
      SOD2_DW_CASE(Activation::kRelu)
      SOD2_DW_CASE(Activation::kLeakyRelu)
      SOD2_DW_CASE(Activation::kClip)
      SOD2_DW_CASE(Activation::kHardSigmoid)
      SOD2_DW_CASE(Activation::kHardSwish)
      SOD2_DW_CASE(Activation::kSigmoid)
      SOD2_DW_CASE(Activation::kSilu)
#undef SOD2_DW_CASE
      default: band_outputs<VL, Activation::kNone>(j, padded, outputs_here, wt, bv, results);
    }
    if (held_y) {
      if (results != held_y)
        for (int64_t q = 0; q < outputs_here; ++q)
          std::memcpy(held_y + q * nc, results + q * VL, sizeof(float) * static_cast<size_t>(nc));
      if (!j.inline_epilogue && !j.e->empty())
        j.e->apply(held_y, j.e->residual ? j.e->residual + (held_y - j.y) : nullptr, outputs_here,
                   nc, nc, c0, false);
      continue;
    }
    if (VL == 16 && j.x8.finish_lanes) {
      j.x8.finish_lanes(j.x8.finish_context, img * j.c + c0, nc, oy0 * j.ow, outputs_here, out);
      continue;
    }
    const int64_t y_first = (img * j.c + c0) * out_plane + oy0 * j.ow;
    float* y = j.y + y_first;
    unblock_positions(VL, nc, out, outputs_here, out_plane, y);
    if (j.x8.finish) j.x8.finish(j.x8.finish_context, img * j.c + c0, nc, oy0 * j.ow, oy1 * j.ow);
    if (!j.inline_epilogue && !j.e->empty()) {
      const float* res = j.e->residual ? j.e->residual + y_first : nullptr;
      for (int l = 0; l < nc; ++l)
        j.e->apply(y + l * out_plane, res ? res + l * out_plane : nullptr, 1, outputs_here,
                   outputs_here, c0 + l, true);
    }
  }
}

// run_items at each ISA level (simd::items_for).
struct LaneItems {
  template <int VL>
  SOD2_SIMD_INLINE static void run(const LaneJob& j, int64_t i0, int64_t i1, float* slot) {
    run_items<VL>(j, i0, i1, slot);
  }
};

// The job's geometry and slot layout for VL lanes.
LaneJob lane_job(const ConvShape& s, int vl) {
  const Window3& g = s.win;
  LaneJob j{};
  j.c = s.c;
  j.groups = (s.c + vl - 1) / vl;
  static_cast<Window2D&>(j) = window_2d(g);
  // Columns the taps read, or the input reaches, whichever is further.
  j.pw = std::max((j.ow - 1) * j.sw + (j.kw - 1) * j.dw + 1, j.pl + j.iw);
  // Output rows per band: as many as keep the band's padded input within kBandFloats.
  const int64_t reach = (j.kh - 1) * j.dh + 1;
  const int64_t fit_rows = kBandFloats / (j.pw * vl);
  j.band_rows = std::clamp<int64_t>(fit_rows >= reach ? (fit_rows - reach) / j.sh + 1 : 1, 1,
                                    std::max<int64_t>(j.oh, 1));
  j.bands = (j.oh + j.band_rows - 1) / j.band_rows;
  j.band_in_rows = (j.band_rows - 1) * j.sh + reach;
  j.padded_off = 0;
  j.out_off = j.padded_off + round_up(j.band_in_rows * j.pw * vl, 16);
  j.weights_off = j.out_off + round_up(j.band_rows * j.ow * vl, 16);
  j.bias_off = j.weights_off + round_up(j.kh * j.kw * vl, 16);
  j.slot_floats = j.bias_off + 16;
  return j;
}

}  // namespace

namespace {

// Whether the path can run the shape at all, whatever is faster.
bool lanes_serve(const ConvShape& s, int vl) {
  const Window3& g = s.win;
  if (s.m != s.c || s.group != s.c || g.spatial > 2 || g.out_size() == 0) return false;
  // Each extent, a row's padded width and a band's reach within the slot's limit first, so the
  // layout's products cannot overflow.
  for (int a = 1; a < 3; ++a)
    for (const int64_t v : {g.in[a], g.out[a], g.k[a], g.stride[a], g.dil[a], g.pad_begin[a]})
      if (v > kMaxSlotFloats) return false;
  const int64_t width = std::max((g.out[2] - 1) * g.stride[2] + (g.k[2] - 1) * g.dil[2] + 1,
                                 g.pad_begin[2] + g.in[2]);
  if (width > kMaxSlotFloats || (g.k[1] - 1) * g.dil[1] + 1 > kMaxSlotFloats) return false;
  return lane_job(s, vl).slot_floats <= kMaxSlotFloats;
}

}  // namespace

bool depthwise_lanes_serves_blocked(const ConvShape& s, int block) {
  return block == simd::lanes(simd::simd_level()) && s.win.spatial == 2 && lanes_serve(s, block);
}

bool depthwise_lanes_applies(const ConvShape& s) {
  const int vl = simd::lanes(simd::simd_level());
  // The row path wins only on rows wider than a vector with a stride-1 kernel of at most 3 taps
  // per row: each input vector it loads feeds several rows' taps, and this path pays two
  // transposes. dw_bench, 2 threads: k3 s1 at 28-112 wide 10-45% faster on rows; 14- and 7-wide
  // rows, stride 2, and 5x5/7x7 kernels 1.0-3.6x faster here.
  const Window3& g = s.win;
  const bool rows_win = g.out[2] > vl && g.stride[2] == 1 && g.k[2] <= 3;
  return !rows_win && lanes_serve(s, vl);
}

Status depthwise_lanes_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                               const float* W, float* Y, const EpilogueRun& e,
                               const DepthwiseInt8Input* x8, BlockedTensors held) {
  const simd::Level level = simd::simd_level();
  if (!X && !(x8 && x8->data)) return invalid_argument("depthwise convolution: no input");
  // Sums handed over in lanes are 16 wide; any other width goes through Y.
  const bool lanes_out = x8 && x8->finish_lanes && simd::lanes(level) == 16;
  if (!Y && !lanes_out) return invalid_argument("depthwise convolution: no output");
  if (!lanes_serve(s, simd::lanes(level)) ||
      (held.any() && (x8 || !depthwise_lanes_serves_blocked(s, held.block))))
    return internal_error("depthwise convolution: the channel-lane path does not serve this shape");
  LaneJob j = lane_job(s, simd::lanes(level));
  j.x_blocked = held.input;
  j.y_blocked = held.output;
  j.x = X;
  if (x8) j.x8 = *x8;
  j.w = W;
  j.y = Y;
  j.e = &e;
  j.act = InlineEpilogue::from(e);
  j.inline_epilogue = j.act.on;
  j.act.bias[0] = j.act.bias[1] = nullptr;

  const int64_t items = s.n * j.groups * j.bands;
  const double item_macs =
      static_cast<double>(j.band_rows) * j.ow * j.kh * j.kw * simd::lanes(level);
  const int64_t grain =
      std::max<int64_t>(1, static_cast<int64_t>(2.0e5 / std::max(item_macs, 1.0)));
  return run_in_slots(ctx, items, grain, j.slot_floats, j,
                      simd::items_for<LaneItems, LaneJob>(level));
}

}  // namespace sod2::rt

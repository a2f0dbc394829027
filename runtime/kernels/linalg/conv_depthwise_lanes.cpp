// Depthwise convolution with channels in vector lanes, for planes too narrow to fill the row
// path's vectors (conv_depthwise.cpp): MobileNet's and EfficientNet's 14x14 and 7x7 stages,
// where a row of 7 or 14 outputs wastes lanes and every plane pays the row path's setup.
//
// A work item is VL channels of one image. Its planes are interleaved into a zero-padded
// position-major buffer (buf[(row * pw + col) * VL + lane]), so every tap is one vector load and
// one FMA for VL channels at once, with no bounds checks, whatever the stride, dilation or kernel
// size. Blocks of B outputs, running across row ends, are accumulated together (B independent
// FMA chains hide the latency; each tap's weight vector is loaded once for all of them). The result
// is interleaved back into the output planes while it is cached; bias and plain activations are
// applied to the accumulators (the bias as a per-lane vector), residuals and Sigmoid/Tanh per plane
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
// Largest per-thread scratch (floats) the path takes; above it the planes are wide enough for
// the row path anyway.
constexpr int64_t kMaxSlotFloats = int64_t{1} << 18;

struct LaneJob {
  const float* x;
  const float* w;
  float* y;
  const EpilogueRun* e;
  InlineEpilogue act;  // the activation, when applied to the accumulators (bias handled apart)
  bool inline_epilogue;
  int64_t c, groups;  // channels; items per image (ceil(c / VL))
  int64_t ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
  int64_t ph, pw;  // rows and columns of the padded buffer
  // Slot layout (floats from the slot's start), each part 64-byte aligned.
  int64_t packed_off, padded_off, out_off, weights_off, bias_off, slot_floats;
};

inline int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

// B outputs: in[b] is the padded buffer at output b's window, out the first one's result.
template <int VL, int B>
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
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
    if (j.inline_epilogue) acc[b] = inline_epilogue<VL>(acc[b], j.act, 0);
    simd::store<VL>(out + b * VL, acc[b]);
  }
}

// Outputs [q0, q0 + count) of the plane (row-major), count <= kOutputsPerBlock: blocks run
// across row ends, so a 7-wide row still gets independent accumulators.
template <int VL>
SOD2_SIMD_INLINE void output_block(const LaneJob& j, const float* padded, int64_t q0, int count,
                                   const float* wt, Vec<VL> bias, float* out) {
  const float* in[kOutputsPerBlock];
  int64_t oy = q0 / j.ow, ox = q0 % j.ow;
  for (int b = 0; b < count; ++b) {
    in[b] = padded + (oy * j.sh * j.pw + ox * j.sw) * VL;
    if (++ox == j.ow) {
      ox = 0;
      ++oy;
    }
  }
  float* o = out + q0 * VL;
  switch (count) {
    case 8: return outputs<VL, 8>(j, in, wt, bias, o);
    case 7: return outputs<VL, 7>(j, in, wt, bias, o);
    case 6: return outputs<VL, 6>(j, in, wt, bias, o);
    case 5: return outputs<VL, 5>(j, in, wt, bias, o);
    case 4: return outputs<VL, 4>(j, in, wt, bias, o);
    case 3: return outputs<VL, 3>(j, in, wt, bias, o);
    case 2: return outputs<VL, 2>(j, in, wt, bias, o);
    default: return outputs<VL, 1>(j, in, wt, bias, o);
  }
}

template <int VL>
SOD2_SIMD_INLINE void run_items(const LaneJob& j, int64_t i0, int64_t i1, float* slot) {
  float* packed = slot + j.packed_off;
  float* padded = slot + j.padded_off;
  float* out = slot + j.out_off;
  float* wt = slot + j.weights_off;
  float* bias = slot + j.bias_off;
  // Only the borders are zeroed, once: every item rewrites the same interior.
  const int64_t row_floats = j.pw * VL;
  std::fill(padded, padded + j.pt * row_floats, 0.f);
  std::fill(padded + (j.pt + j.ih) * row_floats, padded + j.ph * row_floats, 0.f);
  for (int64_t r = j.pt; r < j.pt + j.ih; ++r) {
    float* row = padded + r * row_floats;
    std::fill(row, row + j.pl * VL, 0.f);
    std::fill(row + (j.pl + j.iw) * VL, row + row_floats, 0.f);
  }
  const int64_t in_plane = j.ih * j.iw, out_plane = j.oh * j.ow, taps = j.kh * j.kw;
  for (int64_t it = i0; it < i1; ++it) {
    const int64_t img = it / j.groups, c0 = it % j.groups * VL;
    const int nc = static_cast<int>(std::min<int64_t>(VL, j.c - c0));
    block_positions(VL, nc, j.x + (img * j.c + c0) * in_plane, in_plane, in_plane, packed);
    for (int64_t iy = 0; iy < j.ih; ++iy)
      std::memcpy(padded + ((iy + j.pt) * j.pw + j.pl) * VL, packed + iy * j.iw * VL,
                  sizeof(float) * j.iw * VL);
    block_positions(VL, nc, j.w + c0 * taps, taps, taps, wt);
    for (int l = 0; l < VL; ++l) {
      float b = 0.f;
      if (j.inline_epilogue && l < nc)
        for (const float* src : j.e->bias)
          if (src) b += src[c0 + l];
      bias[l] = b;
    }
    const Vec<VL> bv = simd::load<VL>(bias);
    for (int64_t q = 0; q < out_plane; q += kOutputsPerBlock) {
      const int count = static_cast<int>(std::min<int64_t>(kOutputsPerBlock, out_plane - q));
      output_block<VL>(j, padded, q, count, wt, bv, out);
    }
    float* y = j.y + (img * j.c + c0) * out_plane;
    unblock_positions(VL, nc, out, out_plane, out_plane, y);
    if (!j.inline_epilogue && !j.e->empty()) {
      const float* res = j.e->residual ? j.e->residual + (img * j.c + c0) * out_plane : nullptr;
      for (int l = 0; l < nc; ++l)
        j.e->apply(y + l * out_plane, res ? res + l * out_plane : nullptr, 1, out_plane, out_plane,
                   c0 + l, true);
    }
  }
}

#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void run_items_avx512(const LaneJob& j, int64_t i0, int64_t i1, float* slot) {
  run_items<16>(j, i0, i1, slot);
}
SOD2_TARGET_AVX2 void run_items_avx2(const LaneJob& j, int64_t i0, int64_t i1, float* slot) {
  run_items<8>(j, i0, i1, slot);
}
#endif
void run_items_base(const LaneJob& j, int64_t i0, int64_t i1, float* slot) {
  run_items<4>(j, i0, i1, slot);
}

// The job's geometry and slot layout for VL lanes.
LaneJob lane_job(const ConvShape& s, int vl) {
  const Window3& g = s.win;
  LaneJob j{};
  j.c = s.c;
  j.groups = (s.c + vl - 1) / vl;
  j.ih = g.in[1];
  j.iw = g.in[2];
  j.oh = g.out[1];
  j.ow = g.out[2];
  j.kh = g.k[1];
  j.kw = g.k[2];
  j.sh = g.stride[1];
  j.sw = g.stride[2];
  j.dh = g.dil[1];
  j.dw = g.dil[2];
  j.pt = g.pad_begin[1];
  j.pl = g.pad_begin[2];
  // Rows and columns the taps read, or the input reaches, whichever is further.
  j.ph = std::max((j.oh - 1) * j.sh + (j.kh - 1) * j.dh + 1, j.pt + j.ih);
  j.pw = std::max((j.ow - 1) * j.sw + (j.kw - 1) * j.dw + 1, j.pl + j.iw);
  j.packed_off = 0;
  j.padded_off = round_up(j.ih * j.iw * vl, 16);
  j.out_off = j.padded_off + round_up(j.ph * j.pw * vl, 16);
  j.weights_off = j.out_off + round_up(j.oh * j.ow * vl, 16);
  j.bias_off = j.weights_off + round_up(j.kh * j.kw * vl, 16);
  j.slot_floats = j.bias_off + 16;
  return j;
}

}  // namespace

bool depthwise_lanes_applies(const ConvShape& s) {
  const Window3& g = s.win;
  if (s.m != s.c || s.group != s.c || g.spatial > 2 || g.out_size() == 0) return false;
  const int vl = simd::lanes(simd::simd_level());
  // Output rows wider than one vector fill the row path's vectors well enough that it wins
  // (dw_bench: 28-wide rows ran 10-25% faster there, 14- and 7-wide ones 1.3-2.7x slower).
  if (g.out[2] > vl) return false;
  return lane_job(s, vl).slot_floats <= kMaxSlotFloats;
}

Status depthwise_lanes_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                               const float* W, float* Y, const EpilogueRun& e) {
  if (!depthwise_lanes_applies(s))
    return internal_error("depthwise convolution: the channel-lane path does not serve this shape");
  const simd::Level level = simd::simd_level();
  LaneJob j = lane_job(s, simd::lanes(level));
  j.x = X;
  j.w = W;
  j.y = Y;
  j.e = &e;
  j.act = InlineEpilogue::from(e);
  j.inline_epilogue = j.act.on;
  j.act.bias[0] = j.act.bias[1] = nullptr;

  ThreadPool& pool = ctx.pool();
  const int64_t items = s.n * j.groups;
  const double item_macs = static_cast<double>(j.oh) * j.ow * j.kh * j.kw * simd::lanes(level);
  const int64_t grain =
      std::max<int64_t>(1, static_cast<int64_t>(2.0e5 / std::max(item_macs, 1.0)));
  const int slots = ScratchSlots::count(pool);
  SOD2_ASSIGN_OR_RETURN(float* base, scratch_floats(ctx, slots * j.slot_floats));
  ScratchSlots slot_set(base, j.slot_floats, slots);
  auto* run = &run_items_base;
#if SOD2_SIMD_X86
  if (level == simd::Level::kAvx512) run = &run_items_avx512;
  if (level == simd::Level::kAvx2) run = &run_items_avx2;
#endif
  pool.parallel_for(items, grain, [&](int64_t i0, int64_t i1) {
    const int slot = slot_set.acquire();
    run(j, i0, i1, slot_set.data(slot));
    slot_set.release(slot);
  });
  return Status::ok_status();
}

}  // namespace sod2::rt

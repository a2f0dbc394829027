// Pointwise convolutions (1x1 window, stride 1, no padding) with few input channels per group,
// NCHW in and out, without a GEMM: Y[m, p] = epilogue(sum over k of W[m, k] * X[k, p]).
//
// With so few input channels (the expansions and projections of MobileNet-style blocks on their
// large early planes: 16 -> 48 on 112x112) a GEMM spends its time packing X and in the
// epilogue's second pass over Y, not in multiply-adds. Here each tile of MB output channels x NV
// vectors of positions is summed over every input channel in registers, gets the whole epilogue
// (bias, activation, residual) there and is stored once. Work items are runs of positions of one
// image and group (and ranges of output channels where positions are few); within an item the X
// tile of the current NV vectors (cg x NV x VL floats, at most 12 KiB) stays in L1 while every
// block of output channels reads it.
#include <algorithm>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/epilogue_simd.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;

// Input channels per group up to which the tiles beat the GEMM. Alone, on two threads: 16 -> 48
// on 112x112 0.137 ms through the GEMM, 0.116 here; 48 -> 24 on 56x56 0.0365 and 0.0356; with
// 64 input channels the GEMM was 1-10% faster from 28x28 up.
constexpr int64_t kMaxInputChannels = 48;

struct PwJob {
  const float* x;
  const float* w;
  float* y;
  const EpilogueRun* e;
  RegisterEpilogue ep;  // the residual laid out as Y
  int64_t c, m, cg, mg, p;
  int64_t span, spans;     // positions per NV vectors, and such runs in a plane (the last short)
  int64_t chunks;          // items per image and group along the positions, spans shared evenly
  int64_t mchunk, mparts;  // output channels per item, items per run of positions
};

template <int VL>
constexpr int kRows = VL == 16 ? 6 : 4;  // output channels per tile (MB)
template <int VL>
constexpr int kVecs = VL == 16 ? 4 : 2;  // vectors of positions per tile (NV)

// Stores the tile's sums with the epilogue applied to them, activation A known at compile time
// (a switch per vector would keep the sums out of registers).
template <int VL, int MB, int NV, bool Masked, Activation A>
SOD2_SIMD_INLINE void finish(const PwJob& j, Vec<VL> (&acc)[MB][NV], float* y, const float* res,
                             int64_t ch, int64_t n) {
  using V = Vec<VL>;
  const RegisterEpilogue& ep = j.ep;
  InlineEpilogue act = ep.act;
  act.act = A;
#pragma GCC unroll 8
  for (int r = 0; r < MB; ++r) {
    float* yr = y + r * j.p;
    const float* rr = res ? res + r * j.p : nullptr;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      // EpilogueRun::apply's order: each bias, a residual before the activation, the
      // activation, a residual after it.
      V s = acc[r][v];
      if (ep.bias[0]) s = s + ep.bias[0][ch + r];
      if (ep.bias[1]) s = s + ep.bias[1][ch + r];
      if (ep.residual_mode == 1)
        s += Masked ? simd::load_n<VL>(rr, n) : simd::load<VL>(rr + v * VL);
      s = inline_epilogue<VL>(s, act, 0);
      if (ep.residual_mode == 2)
        s += Masked ? simd::load_n<VL>(rr, n) : simd::load<VL>(rr + v * VL);
      if (Masked) {
        simd::store_n<VL>(yr, s, n);
      } else {
        simd::store<VL>(yr + v * VL, s);
      }
    }
  }
}

// Output channels [m, m + MB) of the group (channel `ch` of Y is the first) at positions
// [p, p + NV * VL); with Masked (NV == 1) only the first `n` positions exist.
template <int VL, int MB, int NV, bool Masked>
SOD2_SIMD_INLINE void tile(const PwJob& j, const float* x, const float* w, float* y,
                           const float* res, int64_t ch, int64_t n) {
  using V = Vec<VL>;
  V acc[MB][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MB; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = V{};
  for (int64_t k = 0; k < j.cg; ++k) {
    const float* xk = x + k * j.p;
    V xv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      xv[v] = Masked ? simd::load_n<VL>(xk, n) : simd::load<VL>(xk + v * VL);
#pragma GCC unroll 8
    for (int r = 0; r < MB; ++r) {
      const float wr = w[r * j.cg + k];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] += wr * xv[v];
    }
  }
  switch (j.ep.act.act) {
#define SOD2_PW_CASE(A) \
  case A: return finish<VL, MB, NV, Masked, A>(j, acc, y, res, ch, n);
    SOD2_PW_CASE(Activation::kNone)
    SOD2_PW_CASE(Activation::kRelu)
    SOD2_PW_CASE(Activation::kLeakyRelu)
    SOD2_PW_CASE(Activation::kClip)
    SOD2_PW_CASE(Activation::kHardSigmoid)
    SOD2_PW_CASE(Activation::kHardSwish)
    SOD2_PW_CASE(Activation::kSigmoid)
    SOD2_PW_CASE(Activation::kSilu)
#undef SOD2_PW_CASE
    default: break;  // Tanh: the sums stored, then EpilogueRun::apply on the tile in L1
  }
#pragma GCC unroll 8
  for (int r = 0; r < MB; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      if (Masked) {
        simd::store_n<VL>(y + r * j.p, acc[r][v], n);
      } else {
        simd::store<VL>(y + r * j.p + v * VL, acc[r][v]);
      }
    }
  j.e->apply(y, res, MB, Masked ? n : NV * VL, j.p, ch, true);
}

// A tile of `rows` (1..MB) output channels.
template <int VL, int NV, bool Masked>
SOD2_SIMD_INLINE void tile_rows(const PwJob& j, int64_t rows, const float* x, const float* w,
                                float* y, const float* res, int64_t ch, int64_t n) {
  constexpr int MB = kRows<VL>;
  static_assert(MB == 4 || MB == 6);
  switch (rows) {
    case 1: return tile<VL, 1, NV, Masked>(j, x, w, y, res, ch, n);
    case 2: return tile<VL, 2, NV, Masked>(j, x, w, y, res, ch, n);
    case 3: return tile<VL, 3, NV, Masked>(j, x, w, y, res, ch, n);
    case 4: return tile<VL, 4, NV, Masked>(j, x, w, y, res, ch, n);
    default: break;
  }
  if constexpr (MB == 6) {
    if (rows == 5) return tile<VL, 5, NV, Masked>(j, x, w, y, res, ch, n);
    return tile<VL, 6, NV, Masked>(j, x, w, y, res, ch, n);
  }
}

struct PwItems {
  template <int VL>
  SOD2_SIMD_INLINE static void run(const PwJob& j, int64_t i0, int64_t i1, float*) {
    constexpr int MB = kRows<VL>, NV = kVecs<VL>;
    const int64_t groups = j.m / j.mg;
    for (int64_t it = i0; it < i1; ++it) {
      const int64_t unit = it / (j.chunks * j.mparts);
      const int64_t pc = it / j.mparts % j.chunks, mp = it % j.mparts;
      const int64_t img = unit / groups, grp = unit % groups;
      const int64_t p0 = pc * j.spans / j.chunks * j.span;
      const int64_t p1 = std::min(j.p, (pc + 1) * j.spans / j.chunks * j.span);
      const int64_t m0 = mp * j.mchunk, m1 = std::min(j.mg, m0 + j.mchunk);
      const float* x = j.x + (img * j.c + grp * j.cg) * j.p;
      const int64_t y_off = (img * j.m + grp * j.mg) * j.p;
      // Lambdas would not inline into the ISA wrappers: the tile's pointers are spelled out.
      const float* wg = j.w + grp * j.mg * j.cg;
      float* yg = j.y + y_off;
      const float* rg = j.ep.residual ? j.ep.residual + y_off : nullptr;
      const int64_t ch0 = grp * j.mg;
      int64_t p = p0;
      for (; p + NV * VL <= p1; p += NV * VL)
        for (int64_t m = m0; m < m1; m += MB)
          tile_rows<VL, NV, false>(j, std::min<int64_t>(MB, m1 - m), x + p, wg + m * j.cg,
                                   yg + m * j.p + p, rg ? rg + m * j.p + p : nullptr, ch0 + m, 0);
      for (; p < p1; p += VL) {
        const int64_t n = std::min<int64_t>(VL, p1 - p);
        for (int64_t m = m0; m < m1; m += MB) {
          const int64_t rows = std::min<int64_t>(MB, m1 - m);
          float* yp = yg + m * j.p + p;
          const float* rp = rg ? rg + m * j.p + p : nullptr;
          if (n == VL) {
            tile_rows<VL, 1, false>(j, rows, x + p, wg + m * j.cg, yp, rp, ch0 + m, n);
          } else {
            tile_rows<VL, 1, true>(j, rows, x + p, wg + m * j.cg, yp, rp, ch0 + m, n);
          }
        }
      }
    }
  }
};

}  // namespace

bool pointwise_narrow_applies(const ConvShape& s) {
  const int64_t cg = s.c / s.group;
  return keeps_positions(s.win) && cg >= 1 && cg <= kMaxInputChannels;
}

Status pointwise_narrow_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                                const float* W, float* Y, const EpilogueRun& e) {
  PwJob j{};
  j.x = X;
  j.w = W;
  j.y = Y;
  j.e = &e;
  j.ep = RegisterEpilogue::from(e);
  j.c = s.c;
  j.m = s.m;
  j.cg = s.c / s.group;
  j.mg = s.m / s.group;
  j.p = s.win.out_size();
  const simd::Level level = simd::simd_level();
  const int64_t vl = simd::lanes(level);
  const int64_t span = vl * (vl == 16 ? kVecs<16> : kVecs<4>);
  const int64_t rows = vl == 16 ? kRows<16> : kRows<4>;

  // Items: at least two per thread when the work is worth the threads, runs of positions first
  // (each item then reads only its part of X), ranges of output channels when positions are few.
  ThreadPool& pool = ctx.pool();
  const int64_t units = s.n * s.group;
  const double macs = static_cast<double>(units) * j.mg * j.cg * j.p;
  const int64_t want = parallel_parts(pool, macs) > 1 ? 2 * pool.num_threads() : 1;
  j.span = span;
  j.spans = (j.p + span - 1) / span;
  j.chunks = std::clamp<int64_t>((want + units - 1) / units, 1, j.spans);
  j.mparts = std::clamp<int64_t>((want + units * j.chunks - 1) / (units * j.chunks), 1,
                                 (j.mg + 2 * rows - 1) / (2 * rows));
  j.mchunk = round_up((j.mg + j.mparts - 1) / j.mparts, rows);
  j.mparts = (j.mg + j.mchunk - 1) / j.mchunk;

  const auto run = simd::items_for<PwItems, PwJob>(level);
  pool.parallel_for(units * j.chunks * j.mparts, 1,
                    [&](int64_t i0, int64_t i1) { run(j, i0, i1, nullptr); });
  return Status::ok_status();
}

}  // namespace sod2::rt

// Pointwise convolutions (1x1, stride 1, no padding, one group) between channel-blocked tensors
// (kernel.h, BlockedIo): X [N, C / VL, P, VL] and Y [N, M / VL, P, VL], VL channels per block,
// the last block of either narrower where C or M is not a multiple of VL.
//
// oneDNN's JIT convolution runs these too, but at batch 1 on few output blocks (MobileNet's
// 16 -> 48 on 112x112) it can only split an image over the threads in bands of rows, each
// copied into a buffer of its own and out again. Here the threads take runs of positions of
// every block in place: a tile of NP positions x OB output blocks is summed in registers over
// every input channel (each input value broadcast against a vector of its weights for VL output
// channels), gets the whole epilogue (bias, activation, residual) there and is stored once.
// Weights are repacked once as [output block][input channel][VL], a narrow last output block's
// missing lanes zeros.
#include <algorithm>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/epilogue_simd.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;

struct PbJob {
  const float* x;
  const float* w;  // [M / VL][C][VL]
  float* y;
  const EpilogueRun* e;
  // The residual blocked as Y. Its mode and the biases are cleared where EpilogueRun::apply
  // runs them (Tanh).
  RegisterEpilogue ep;
  int64_t c, m, p;
  int64_t tiles, chunks;  // tiles of NP positions in a plane; items per image, tiles shared evenly
};

template <int VL>
constexpr int kPositions = VL == 16 ? 12 : 6;  // NP: positions per tile
constexpr int kBlocks = 2;                     // OB: output blocks per tile

// The first `width` floats at p, in a vector whose other lanes are zeros.
template <int VL>
SOD2_SIMD_INLINE Vec<VL> lanes_of(const float* p, int width) {
  return width == VL ? simd::load<VL>(p) : simd::load_n<VL>(p, width);
}

// Stores the tile with the epilogue applied to it, activation A a compile-time constant. y and
// res point at the image's first block, q0 is the tile's first position; a narrow last block
// (kernel.h) keeps its lanes, and reads and writes only those.
template <int VL, int OB, int NP, Activation A>
SOD2_SIMD_INLINE void finish(const PbJob& j, Vec<VL> (&acc)[OB][NP], int64_t ob, float* y,
                             const float* res, int64_t q0) {
  using V = Vec<VL>;
  const RegisterEpilogue& ep = j.ep;
  InlineEpilogue act = ep.act;
  act.act = A;
#pragma GCC unroll 2
  for (int o = 0; o < OB; ++o) {
    const int64_t ch = (ob + o) * VL;
    const int width = held_block_width(VL, j.m, ch);
    const V b0 = ep.bias[0] ? lanes_of<VL>(ep.bias[0] + ch, width) : V{};
    const V b1 = ep.bias[1] ? lanes_of<VL>(ep.bias[1] + ch, width) : V{};
    float* yo = y + ch * j.p + q0 * width;
    const float* ro = res ? res + ch * j.p + q0 * width : nullptr;
#pragma GCC unroll 12
    for (int q = 0; q < NP; ++q) {
      // EpilogueRun::apply's order: each bias, a residual before the activation, the
      // activation, a residual after it.
      V s = acc[o][q];
      if (ep.bias[0]) s = s + b0;
      if (ep.bias[1]) s = s + b1;
      if (ep.residual_mode == 1) s += lanes_of<VL>(ro + q * width, width);
      s = inline_epilogue<VL>(s, act, 0);
      if (ep.residual_mode == 2) s += lanes_of<VL>(ro + q * width, width);
      if (width == VL)
        simd::store<VL>(yo + q * VL, s);
      else
        simd::store_n<VL>(yo + q * width, s, width);
    }
  }
}

// Adds input block ib (`width` lanes per position) to the tile's sums: each input value
// broadcast against its weights for VL output channels of each of the OB blocks.
template <int VL, int OB, int NP>
SOD2_SIMD_INLINE void sum_block(const PbJob& j, const float* x, const float* w, int64_t ib,
                                int width, int64_t q0, Vec<VL> (&acc)[OB][NP]) {
  using V = Vec<VL>;
  const float* xb = x + ib * VL * j.p + q0 * width;
  const float* wb = w + ib * VL * VL;
  for (int l = 0; l < width; ++l) {
    V wv[OB];
#pragma GCC unroll 2
    for (int o = 0; o < OB; ++o) wv[o] = simd::load<VL>(wb + o * j.c * VL + l * VL);
#pragma GCC unroll 12
    for (int q = 0; q < NP; ++q) {
      const float xv = xb[q * width + l];
#pragma GCC unroll 2
      for (int o = 0; o < OB; ++o) acc[o][q] += wv[o] * xv;
    }
  }
}

// Output blocks [ob, ob + OB) at positions [q0, q0 + NP) of one image: x, y and res point at the
// image's first block. A narrow last input block is summed lane by lane over its own width.
template <int VL, int OB, int NP>
SOD2_SIMD_INLINE void tile(const PbJob& j, const float* x, int64_t ob, float* y, const float* res,
                           int64_t q0) {
  using V = Vec<VL>;
  V acc[OB][NP];
#pragma GCC unroll 2
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 12
    for (int q = 0; q < NP; ++q) acc[o][q] = V{};
  const float* w = j.w + ob * j.c * VL;
  const int64_t full = j.c / VL;
  for (int64_t ib = 0; ib < full; ++ib) sum_block<VL, OB, NP>(j, x, w, ib, VL, q0, acc);
  if (j.c % VL != 0) sum_block<VL, OB, NP>(j, x, w, full, static_cast<int>(j.c % VL), q0, acc);
  switch (j.ep.act.act) {
#define SOD2_PB_CASE(A) \
  case A: return finish<VL, OB, NP, A>(j, acc, ob, y, res, q0);
    SOD2_PB_CASE(Activation::kRelu)
    SOD2_PB_CASE(Activation::kLeakyRelu)
    SOD2_PB_CASE(Activation::kClip)
    SOD2_PB_CASE(Activation::kHardSigmoid)
    SOD2_PB_CASE(Activation::kHardSwish)
    SOD2_PB_CASE(Activation::kSigmoid)
    SOD2_PB_CASE(Activation::kSilu)
#undef SOD2_PB_CASE
    default: break;
  }
  finish<VL, OB, NP, Activation::kNone>(j, acc, ob, y, res, q0);
  // Tanh: EpilogueRun::apply on the tile just stored (biases and residual with
  // it), while it is in L1. `act` was kNone, so finish() stored the bare sums.
  if (!is_plain_arithmetic(j.e->activation))
    for (int o = 0; o < OB; ++o) {
      const int64_t ch = (ob + o) * VL;
      const int width = held_block_width(VL, j.m, ch);
      const int64_t at = ch * j.p + q0 * width;
      j.e->apply(y + at, res ? res + at : nullptr, NP, width, width, ch, false);
    }
}

template <int VL, int NP>
SOD2_SIMD_INLINE void tiles_at(const PbJob& j, const float* x, float* y, const float* res,
                               int64_t q0) {
  const int64_t blocks = (j.m + VL - 1) / VL;
  int64_t ob = 0;
  for (; ob + kBlocks <= blocks; ob += kBlocks) tile<VL, kBlocks, NP>(j, x, ob, y, res, q0);
  for (; ob < blocks; ++ob) tile<VL, 1, NP>(j, x, ob, y, res, q0);
}

struct PbItems {
  template <int VL>
  SOD2_SIMD_INLINE static void run(const PbJob& j, int64_t i0, int64_t i1, float*) {
    constexpr int NP = kPositions<VL>;
    for (int64_t it = i0; it < i1; ++it) {
      const int64_t img = it / j.chunks, pc = it % j.chunks;
      const int64_t q0 = pc * j.tiles / j.chunks * NP;
      const int64_t q1 = std::min(j.p, (pc + 1) * j.tiles / j.chunks * NP);
      const float* x = j.x + img * j.c * j.p;
      float* y = j.y + img * j.m * j.p;
      const float* res = j.ep.residual ? j.ep.residual + img * j.m * j.p : nullptr;
      int64_t q = q0;
      for (; q + NP <= q1; q += NP) tiles_at<VL, NP>(j, x, y, res, q);
      for (; q < q1; ++q) tiles_at<VL, 1>(j, x, y, res, q);
    }
  }
};

}  // namespace

bool pointwise_blocked_takes(const WindowAttrs& attrs, std::span<const int64_t> w_dims,
                             int64_t group, int block) {
  // Each tile streams all the weights: past a core's L2 they come from L3, where oneDNN's
  // kernels, which keep a block of them cached over many positions, win (ResNet-50's 1024 ->
  // 512 on 14x14: 1.85 ms oneDNN, 1.94 here on one thread; its 256 -> 1024, 1 MB of weights,
  // 1.05 against 1.01 here).
  constexpr int64_t kMaxWeights = 256 * 1024;
  // A 1x1 window keeps the positions only at stride 1 without pads (auto_pad gives none there).
  const auto all = [](const std::vector<int64_t>& v, int64_t want) {
    return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == want; });
  };
  if (w_dims.size() != 4 || w_dims[2] != 1 || w_dims[3] != 1 || !all(attrs.strides, 1) ||
      !all(attrs.pads, 0))
    return false;
  const int64_t m = w_dims[0], c = w_dims[1];
  return group == 1 && block > 1 && block == simd::lanes(simd::simd_level()) && m > 0 && c > 0 &&
         m * c <= kMaxWeights;
}

bool pointwise_blocked_applies(const ConvShape& s, int block) {
  const int64_t dims[4] = {s.m, s.c / std::max<int64_t>(s.group, 1), 1, 1};
  return keeps_positions(s.win) && pointwise_blocked_takes(WindowAttrs{}, dims, s.group, block);
}

void pack_pointwise_blocked(const float* w, int64_t m, int64_t c, int block, float* out) {
  for (int64_t ob = 0; ob < (m + block - 1) / block; ++ob)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int l = 0; l < block; ++l) {
        const int64_t oc = ob * block + l;
        out[(ob * c + ic) * block + l] = oc < m ? w[oc * c + ic] : 0.f;
      }
}

Status pointwise_blocked_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                                 const float* packed_w, float* Y, const EpilogueRun& e) {
  const simd::Level level = simd::simd_level();
  const int vl = simd::lanes(level);
  if (!pointwise_blocked_applies(s, vl))
    return internal_error("Conv: the blocked pointwise path does not serve this shape");
  PbJob j{};
  j.x = X;
  j.w = packed_w;
  j.y = Y;
  j.e = &e;
  j.ep = RegisterEpilogue::from(e);
  // Tanh runs in EpilogueRun::apply with the biases and the residual.
  if (!is_plain_arithmetic(e.activation)) {
    j.ep.bias[0] = j.ep.bias[1] = nullptr;
    j.ep.residual_mode = 0;
  }
  j.c = s.c;
  j.m = s.m;
  j.p = s.win.out_size();
  const int64_t np = vl == 16 ? kPositions<16> : kPositions<8>;
  j.tiles = (j.p + np - 1) / np;
  ThreadPool& pool = ctx.pool();
  const double macs = static_cast<double>(s.n) * s.m * s.c * j.p;
  const int64_t want = parallel_parts(pool, macs) > 1 ? 2 * pool.num_threads() : 1;
  j.chunks = std::clamp<int64_t>((want + s.n - 1) / s.n, 1, j.tiles);
  const auto run = simd::items_for<PbItems, PbJob>(level);
  pool.parallel_for(s.n * j.chunks, 1, [&](int64_t i0, int64_t i1) { run(j, i0, i1, nullptr); });
  return Status::ok_status();
}

}  // namespace sod2::rt

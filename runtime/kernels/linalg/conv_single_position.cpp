// Pointwise convolutions of one position per image (a squeeze-excitation's 1x1 convs on
// [N, C, 1, 1]): each output channel is the dot product of its row of W with the image's input
// channels, a matrix-vector product that streams W once.
//
// In a whole model these weights come from L3 or memory on every run (MobileNetV3's 720 <-> 184
// pair is 1 MB); the GEMM library, called per range of output channels with one column, read
// them at about 10 GB/s. Here the threads take contiguous ranges of rows, each summed four rows
// at a time along the input channels in vectors (four sequential streams the prefetchers
// follow), and the epilogue runs on the finished channels as one row of columns.
#include <algorithm>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;

constexpr int kRowsAtOnce = 4;
// Bytes of W worth one more thread (a few microseconds from L3).
constexpr int64_t kBytesPerPart = 64 * 1024;

struct SpJob {
  const float* x;
  const float* w;
  float* y;
  const EpilogueRun* e;
  int64_t c, m, cg, mg, groups;
  int64_t chunks;  // items per image and group: ranges of its output channels
};

// Sums of rows [r0, r0 + R) of w (rows of n floats) against x, into out[0, R).
template <int VL, int R>
SOD2_SIMD_INLINE void dot_rows(const float* w, const float* x, int64_t n, float* out) {
  using V = Vec<VL>;
  V acc[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) acc[r] = V{};
  int64_t k = 0;
  for (; k + VL <= n; k += VL) {
    const V xv = simd::load<VL>(x + k);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] += simd::load<VL>(w + r * n + k) * xv;
  }
  if (k < n) {
    const V xv = simd::load_n<VL>(x + k, n - k);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] += simd::load_n<VL>(w + r * n + k, n - k) * xv;
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) out[r] = simd::reduce_add<VL>(acc[r]);
}

struct SpItems {
  template <int VL>
  SOD2_SIMD_INLINE static void run(const SpJob& j, int64_t i0, int64_t i1, float*) {
    for (int64_t it = i0; it < i1; ++it) {
      const int64_t unit = it / j.chunks, part = it % j.chunks;
      const int64_t img = unit / j.groups, grp = unit % j.groups;
      const int64_t r0 = part * j.mg / j.chunks, r1 = (part + 1) * j.mg / j.chunks;
      const float* x = j.x + img * j.c + grp * j.cg;
      const float* w = j.w + grp * j.mg * j.cg;
      float* y = j.y + img * j.m + grp * j.mg;
      int64_t r = r0;
      for (; r + kRowsAtOnce <= r1; r += kRowsAtOnce)
        dot_rows<VL, kRowsAtOnce>(w + r * j.cg, x, j.cg, y + r);
      for (; r < r1; ++r) dot_rows<VL, 1>(w + r * j.cg, x, j.cg, y + r);
      // Channels as columns of one row: the epilogue's biases and residual are vectors here.
      if (!j.e->empty() && r1 > r0) {
        const int64_t off = img * j.m + grp * j.mg + r0;
        j.e->apply(j.y + off, j.e->residual ? j.e->residual + off : nullptr, 1, r1 - r0, r1 - r0,
                   grp * j.mg + r0, false);
      }
    }
  }
};

}  // namespace

bool single_position_applies(const ConvShape& s) {
  const Window3& g = s.win;
  if (g.k_size() != 1 || g.in_size() != 1 || g.out_size() != 1) return false;
  for (int a = 0; a < 3; ++a)
    if (g.pad_begin[a] != 0 || g.pad_end[a] != 0) return false;
  return s.c / s.group >= 1;
}

Status single_position_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                               const float* W, float* Y, const EpilogueRun& e) {
  SpJob j{};
  j.x = X;
  j.w = W;
  j.y = Y;
  j.e = &e;
  j.c = s.c;
  j.m = s.m;
  j.groups = s.group;
  j.cg = s.c / s.group;
  j.mg = s.m / s.group;
  ThreadPool& pool = ctx.pool();
  const int64_t units = s.n * s.group;
  const int64_t bytes = j.mg * j.cg * static_cast<int64_t>(sizeof(float));
  const int64_t parts = std::clamp<int64_t>(bytes / kBytesPerPart, 1, pool.num_threads());
  j.chunks = std::clamp<int64_t>((parts + units - 1) / units, 1, (j.mg + 3) / 4);
  const auto run = simd::items_for<SpItems, SpJob>(simd::simd_level());
  pool.parallel_for(units * j.chunks, 1, [&](int64_t i0, int64_t i1) { run(j, i0, i1, nullptr); });
  return Status::ok_status();
}

}  // namespace sod2::rt

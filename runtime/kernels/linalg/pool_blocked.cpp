#include "runtime/kernels/linalg/pool_blocked.h"

#include <algorithm>
#include <limits>

#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;

struct BlockedPoolJob {
  bool average;
  bool include_pad;
  Window3 g;
  const float* x;
  float* y;
};

// The taps of one output in row-major order, `rows` rows `row_step` floats apart and `cols`
// taps `col_step` apart in each: their sum, or their maximum as the NCHW paths compare (the first
// tap, then any greater one), for N outputs `out_step` floats apart at once (independent chains
// hide the compare's latency).
template <int VL, int N, bool AVERAGE>
SOD2_SIMD_INLINE void window_taps(const float* p, int64_t out_step, int64_t rows, int64_t row_step,
                                  int64_t cols, int64_t col_step, Vec<VL>* acc) {
#pragma GCC unroll 4
  for (int i = 0; i < N; ++i) acc[i] = simd::load<VL>(p + i * out_step);
  for (int64_t ty = 0; ty < rows; ++ty) {
    const float* r = p + ty * row_step;
    for (int64_t tx = ty == 0 ? 1 : 0; tx < cols; ++tx) {
#pragma GCC unroll 4
      for (int i = 0; i < N; ++i) {
        const Vec<VL> v = simd::load<VL>(r + i * out_step + tx * col_step);
        if constexpr (AVERAGE)
          acc[i] += v;
        else
          acc[i] = v > acc[i] ? v : acc[i];
      }
    }
  }
}

// Output rows [r0, r1) of the flattened (block, output row) range. Columns whose window lies
// inside the row take every horizontal tap, four outputs at a time; the border columns clip
// theirs.
template <int VL, bool AVERAGE>
SOD2_SIMD_INLINE void pool_rows(const BlockedPoolJob& j, int64_t r0, int64_t r1) {
  const Window3& g = j.g;
  const int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t kx = g.k[2], sx = g.stride[2], dx = g.dil[2], px = g.pad_begin[2];
  // Interior columns: start >= 0 and start + (kx - 1) * dx <= iw - 1.
  const int64_t reach = iw - 1 - (kx - 1) * dx + px;
  const int64_t in0 = std::min<int64_t>(ow, (px + sx - 1) / sx);
  const int64_t in1 = reach < 0 ? in0 : std::clamp<int64_t>(reach / sx + 1, in0, ow);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / oh, oy = r % oh;
    const float* xb = j.x + b * ih * iw * VL;
    float* yr = j.y + (b * oh + oy) * ow * VL;
    const AxisWindow wy = axis_window(g, 1, oy);
    const int64_t rows = wy.t1 - wy.t0, row_step = g.dil[1] * iw * VL;
    const float* row0 = xb + (wy.start + wy.t0 * g.dil[1]) * iw * VL;
    // 0 for a window wholly in padding, as on the NCHW paths.
    auto finish = [&](Vec<VL> acc, int64_t n) {
      if constexpr (AVERAGE)
        return n > 0 ? acc / static_cast<float>(n) : simd::splat<VL>(0.f);
      else
        return n > 0 ? acc : simd::splat<VL>(0.f);
    };
    auto border = [&](int64_t ox) {
      const AxisWindow wx = axis_window(g, 2, ox);
      const int64_t cols = wx.t1 - wx.t0;
      Vec<VL> acc = simd::splat<VL>(0.f);
      if (rows > 0 && cols > 0)
        window_taps<VL, 1, AVERAGE>(row0 + (wx.start + wx.t0 * dx) * VL, 0, rows, row_step, cols,
                                    dx * VL, &acc);
      const int64_t n = AVERAGE && j.include_pad ? wy.padded * wx.padded : rows * cols;
      simd::store<VL>(yr + ox * VL, finish(acc, rows * cols > 0 ? n : 0));
    };
    for (int64_t ox = 0; ox < in0; ++ox) border(ox);
    const int64_t n = AVERAGE && j.include_pad ? wy.padded * kx : rows * kx;
    int64_t ox = in0;
    if (rows > 0) {
      for (; ox + 4 <= in1; ox += 4) {
        Vec<VL> acc[4];
        window_taps<VL, 4, AVERAGE>(row0 + (ox * sx - px) * VL, sx * VL, rows, row_step, kx,
                                    dx * VL, acc);
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) simd::store<VL>(yr + (ox + i) * VL, finish(acc[i], n));
      }
    }
    for (; ox < ow; ++ox) border(ox);
  }
}

template <int VL>
SOD2_SIMD_INLINE void global_blocks(bool average, const float* x, float* y, int64_t count,
                                    int64_t b0, int64_t b1) {
  for (int64_t b = b0; b < b1; ++b) {
    const float* xb = x + b * count * VL;
    Vec<VL> acc = count > 0 ? simd::load<VL>(xb) : simd::splat<VL>(0.f);
    for (int64_t p = 1; p < count; ++p) {
      const Vec<VL> v = simd::load<VL>(xb + p * VL);
      if (average)
        acc += v;
      else
        acc = v > acc ? v : acc;
    }
    if (average && count > 0) acc /= static_cast<float>(count);
    simd::store<VL>(y + b * VL, acc);
  }
}

// pool_rows for the job's kind of pool.
template <int VL>
SOD2_SIMD_INLINE void pool_rows_any(const BlockedPoolJob& j, int64_t r0, int64_t r1) {
  if (j.average)
    pool_rows<VL, true>(j, r0, r1);
  else
    pool_rows<VL, false>(j, r0, r1);
}

#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void pool_rows_16(const BlockedPoolJob& j, int64_t r0, int64_t r1) {
  pool_rows_any<16>(j, r0, r1);
}
SOD2_TARGET_AVX2 void pool_rows_8(const BlockedPoolJob& j, int64_t r0, int64_t r1) {
  pool_rows_any<8>(j, r0, r1);
}
SOD2_TARGET_AVX512 void global_16(bool average, const float* x, float* y, int64_t count, int64_t b0,
                                  int64_t b1) {
  global_blocks<16>(average, x, y, count, b0, b1);
}
SOD2_TARGET_AVX2 void global_8(bool average, const float* x, float* y, int64_t count, int64_t b0,
                               int64_t b1) {
  global_blocks<8>(average, x, y, count, b0, b1);
}
#else
void pool_rows_16(const BlockedPoolJob& j, int64_t r0, int64_t r1) { pool_rows_any<16>(j, r0, r1); }
void pool_rows_8(const BlockedPoolJob& j, int64_t r0, int64_t r1) { pool_rows_any<8>(j, r0, r1); }
void global_16(bool average, const float* x, float* y, int64_t count, int64_t b0, int64_t b1) {
  global_blocks<16>(average, x, y, count, b0, b1);
}
void global_8(bool average, const float* x, float* y, int64_t count, int64_t b0, int64_t b1) {
  global_blocks<8>(average, x, y, count, b0, b1);
}
#endif

}  // namespace

bool blocked_pool_applies(const Window3& g) {
  return g.spatial <= 2 && g.in[0] == 1 && g.out[0] == 1 && g.k[0] == 1;
}

Status pool_blocked(KernelContext& ctx, bool average, bool include_pad, const Window3& g, int block,
                    int64_t blocks, const float* X, float* Y) {
  if (block != 16 && block != 8)
    return internal_error("pooling: channel blocks of " + std::to_string(block));
  const BlockedPoolJob job{average, include_pad, g, X, Y};
  const int64_t rows = blocks * g.out[1];
  const int64_t per_row = std::max<int64_t>(1, g.out[2] * g.k[1] * g.k[2] * block);
  const int64_t grain = std::max<int64_t>(1, 32768 / per_row);
  auto fn = block == 16 ? &pool_rows_16 : &pool_rows_8;
  ctx.pool().parallel_for(rows, grain, [&](int64_t r0, int64_t r1) { fn(job, r0, r1); });
  return Status::ok_status();
}

void global_pool_blocked(ThreadPool& pool, bool average, int block, int64_t images,
                         int64_t channels, int64_t count, const float* X, float* Y) {
  auto fn = block == 16 ? &global_16 : &global_8;
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(count * block, 1));
  if (channels % block == 0) {
    pool.parallel_for(images * channels / block, grain,
                      [&](int64_t b0, int64_t b1) { fn(average, X, Y, count, b0, b1); });
    return;
  }
  // A narrow last block per image: the whole blocks as above, image by image, then its lanes,
  // each in the order a vector lane takes them.
  const int64_t whole = channels / block, width = channels % block;
  for (int64_t img = 0; img < images; ++img) {
    const float* x = X + img * channels * count;
    float* y = Y + img * channels;
    pool.parallel_for(whole, grain,
                      [&](int64_t b0, int64_t b1) { fn(average, x, y, count, b0, b1); });
    const float* xt = x + whole * block * count;
    for (int64_t l = 0; l < width; ++l) {
      float acc = count > 0 ? xt[l] : 0.f;
      for (int64_t p = 1; p < count; ++p) {
        const float v = xt[p * width + l];
        acc = average ? acc + v : (v > acc ? v : acc);
      }
      if (average && count > 0) acc /= static_cast<float>(count);
      y[whole * block + l] = acc;
    }
  }
}

}  // namespace sod2::rt

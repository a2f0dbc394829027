#include "runtime/kernels/linalg/channel_blocks.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/kernels/cpu_clones.h"
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

template <int N>
using Lanes = simd::Vec<N>;

// Stage b of an N x N transpose swaps bit b of the row index with bit b of the column index:
// rows i and i + b (bit b of i clear) exchange their off-diagonal b-wide blocks.
constexpr int low_row_lane(int n, int b, int p) { return (p & b) ? n + p - b : p; }
constexpr int high_row_lane(int n, int b, int p) { return (p & b) ? n + p : p + b; }

template <int N, int B, size_t... P>
inline void exchange_blocks(Lanes<N>& x, Lanes<N>& y, std::index_sequence<P...>) {
  const Lanes<N> lo = __builtin_shufflevector(x, y, low_row_lane(N, B, P)...);
  const Lanes<N> hi = __builtin_shufflevector(x, y, high_row_lane(N, B, P)...);
  x = lo;
  y = hi;
}

template <int N, int B>
inline void transpose_stage(Lanes<N>* r) {
  for (int i = 0; i < N; ++i)
    if (!(i & B)) exchange_blocks<N, B>(r[i], r[i + B], std::make_index_sequence<N>{});
}

// r[i][j] -> r[j][i] in 4 (N = 16), 3 or 2 stages of two-vector shuffles: GCC turns the
// element-wise loop into scalar moves.
template <int N>
inline void transpose(Lanes<N>* r) {
  if constexpr (N >= 16) transpose_stage<N, 8>(r);
  if constexpr (N >= 8) transpose_stage<N, 4>(r);
  transpose_stage<N, 2>(r);
  transpose_stage<N, 1>(r);
}

// Where blocked positions go: position p at out[(p / row_len) * row_stride + (p % row_len) *
// block], rows of row_len positions row_stride floats apart (a padded buffer's rows); one row
// of `count` is plain position-major.
struct RowsOut {
  float* out;
  int64_t row_len, row_stride;
};

// Stores the first n vectors of r, positions p.. of `to`, `col` being p's column in its row.
template <class V>
inline void store_positions(const V* r, int64_t n, const RowsOut& to, int64_t p, int64_t col,
                            int block) {
  float* dst = to.out + p / to.row_len * to.row_stride + col * block;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst, &r[k], sizeof(V));
    dst += block;
    if (++col == to.row_len) {
      col = 0;
      dst += to.row_stride - to.row_len * block;
    }
  }
}

// Square tiles of kBlock positions x kBlock channels, so both sides move whole vectors; the last
// partial tile goes through a zero-filled full one, and so do the lanes past `channels` (a
// block of fewer channels: MobileNetV3's 72 and 120, ShuffleNet's 24).
template <int kBlock>
SOD2_CPU_CLONES void interleave(const float* __restrict x, int channels, int64_t stride,
                                int64_t count, RowsOut to) {
  using V = Lanes<kBlock>;
  V r[kBlock];
  const bool one_row = to.row_len >= count;
  int64_t p = 0;
  for (; p + kBlock <= count; p += kBlock) {
    // (The transpose leaves data in every row: the missing channels' rows are zeroed each tile.)
    for (int j = 0; j < channels; ++j) std::memcpy(&r[j], x + j * stride + p, sizeof(V));
    for (int j = channels; j < kBlock; ++j) r[j] = V{};
    transpose<kBlock>(r);
    if (one_row)
      std::memcpy(to.out + p * kBlock, r, sizeof r);
    else
      store_positions(r, kBlock, to, p, p % to.row_len, kBlock);
  }
  if (p == count) return;
  const int64_t rest = count - p;
  for (int j = 0; j < kBlock; ++j) {
    r[j] = V{};
    if (j < channels) std::memcpy(&r[j], x + j * stride + p, sizeof(float) * rest);
  }
  transpose<kBlock>(r);
  store_positions(r, rest, to, p, p % to.row_len, kBlock);
}

// interleave from 8-bit planes: a tile's bytes (the last partial tile's zero-filled), widened to
// floats and centred in one flat loop, then transposed. Written so that GCC vectorises the
// widening: __builtin_convertvector of bytes, or a loop per row, became scalar conversions.
template <int kBlock, class T>
SOD2_CPU_CLONES void interleave_8bit(const T* __restrict x, int channels, int64_t stride,
                                     int64_t count, float zero_point, RowsOut to) {
  using V = Lanes<kBlock>;
  V r[kBlock];
  alignas(64) T bytes[kBlock * kBlock];
  alignas(64) float tile[kBlock * kBlock];
  const bool one_row = to.row_len >= count;
  for (int64_t p = 0; p < count; p += kBlock) {
    const int64_t n = std::min<int64_t>(kBlock, count - p);
    if (n == kBlock) {
      for (int j = 0; j < channels; ++j)
        std::memcpy(bytes + j * kBlock, x + j * stride + p, kBlock);
    } else {
      std::memset(bytes, 0, sizeof bytes);
      for (int j = 0; j < channels; ++j)
        std::memcpy(bytes + j * kBlock, x + j * stride + p, static_cast<size_t>(n));
    }
    for (int i = 0; i < kBlock * kBlock; ++i)
      tile[i] = static_cast<float>(static_cast<int32_t>(bytes[i])) - zero_point;
    // Lanes past the channels are zeros, not the zero point's negation.
    for (int i = channels * kBlock; i < kBlock * kBlock; ++i) tile[i] = 0.f;
    for (int j = 0; j < kBlock; ++j) std::memcpy(&r[j], tile + j * kBlock, sizeof(V));
    transpose<kBlock>(r);
    if (one_row)
      std::memcpy(to.out + p * kBlock, r, sizeof(V) * static_cast<size_t>(n));
    else
      store_positions(r, n, to, p, p % to.row_len, kBlock);
  }
}

// The inverse of interleave, into the planes of the first `channels` lanes.
template <int kBlock>
SOD2_CPU_CLONES void deinterleave(const float* __restrict in, int channels, int64_t count,
                                  int64_t stride, float* __restrict y) {
  using V = Lanes<kBlock>;
  V r[kBlock];
  int64_t p = 0;
  for (; p + kBlock <= count; p += kBlock) {
    std::memcpy(r, in + p * kBlock, sizeof r);
    transpose<kBlock>(r);
    for (int j = 0; j < channels; ++j) std::memcpy(y + j * stride + p, &r[j], sizeof(V));
  }
  if (p == count) return;
  const int64_t rest = count - p;
  for (int q = 0; q < kBlock; ++q) r[q] = V{};
  std::memcpy(r, in + p * kBlock, sizeof(V) * rest);
  transpose<kBlock>(r);
  for (int j = 0; j < channels; ++j) std::memcpy(y + j * stride + p, &r[j], sizeof(float) * rest);
}

}  // namespace

void block_positions_rows(int block, int channels, const float* x, int64_t stride, int64_t count,
                          int64_t row_len, int64_t row_stride, float* out) {
  const RowsOut to{out, std::max<int64_t>(row_len, 1), row_stride};
  if (channels > 0 && channels <= block) {
    if (block == 16) return interleave<16>(x, channels, stride, count, to);
    if (block == 8) return interleave<8>(x, channels, stride, count, to);
    if (block == 4) return interleave<4>(x, channels, stride, count, to);
  }
  for (int64_t p = 0; p < count; ++p) {
    float* dst = out + p / to.row_len * row_stride + p % to.row_len * block;
    for (int j = 0; j < block; ++j) dst[j] = j < channels ? x[j * stride + p] : 0.f;
  }
}

void block_positions(int block, int channels, const float* x, int64_t stride, int64_t count,
                     float* out) {
  block_positions_rows(block, channels, x, stride, count, count, 0, out);
}

template <class T>
void block_positions_typed(int block, int channels, const T* x, float zp, int64_t stride,
                           int64_t count, const RowsOut& to) {
  if (channels > 0 && channels <= block) {
    if (block == 16) return interleave_8bit<16>(x, channels, stride, count, zp, to);
    if (block == 8) return interleave_8bit<8>(x, channels, stride, count, zp, to);
    if (block == 4) return interleave_8bit<4>(x, channels, stride, count, zp, to);
  }
  for (int64_t p = 0; p < count; ++p) {
    float* dst = to.out + p / to.row_len * to.row_stride + p % to.row_len * block;
    for (int j = 0; j < block; ++j)
      dst[j] = j < channels ? static_cast<float>(x[j * stride + p]) - zp : 0.f;
  }
}

void block_positions_8bit_rows(int block, int channels, const void* x, bool is_signed,
                               int32_t zero_point, int64_t stride, int64_t count, int64_t row_len,
                               int64_t row_stride, float* out) {
  const float zp = static_cast<float>(zero_point);
  const RowsOut to{out, std::max<int64_t>(row_len, 1), row_stride};
  if (is_signed)
    return block_positions_typed(block, channels, static_cast<const int8_t*>(x), zp, stride, count,
                                 to);
  block_positions_typed(block, channels, static_cast<const uint8_t*>(x), zp, stride, count, to);
}

void block_positions_8bit(int block, int channels, const void* x, bool is_signed,
                          int32_t zero_point, int64_t stride, int64_t count, float* out) {
  block_positions_8bit_rows(block, channels, x, is_signed, zero_point, stride, count, count, 0,
                            out);
}

void unblock_positions(int block, int channels, const float* in, int64_t count, int64_t stride,
                       float* y) {
  if (channels > 0 && channels <= block) {
    if (block == 16) return deinterleave<16>(in, channels, count, stride, y);
    if (block == 8) return deinterleave<8>(in, channels, count, stride, y);
    if (block == 4) return deinterleave<4>(in, channels, count, stride, y);
  }
  for (int j = 0; j < channels; ++j)
    for (int64_t p = 0; p < count; ++p) y[j * stride + p] = in[p * block + j];
}

namespace {

// Calls f(nchw offset, blocked offset, channels) for each block of the tensor, on `pool`: the
// blocked images padded to whole blocks, or (held) as large as the NCHW ones.
template <class F>
void for_each_block(ThreadPool& pool, int block, int64_t images, int64_t channels, int64_t count,
                    bool held, const F& f) {
  const int64_t blocks = (channels + block - 1) / block;
  const int64_t blocked_image = held ? channels : blocks * block;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, block * count));
  pool.parallel_for(images * blocks, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t image = b / blocks, ch = b % blocks * block;
      f((image * channels + ch) * count, (image * blocked_image + ch) * count,
        held_block_width(block, channels, ch));
    }
  });
}

}  // namespace

void block_tensor(ThreadPool& pool, int block, const float* x, int64_t images, int64_t channels,
                  int64_t count, float* out) {
  for_each_block(pool, block, images, channels, count, false, [&](int64_t at, int64_t to, int nc) {
    block_positions(block, nc, x + at, count, count, out + to);
  });
}

void unblock_tensor(ThreadPool& pool, int block, const float* in, int64_t images, int64_t channels,
                    int64_t count, float* y) {
  for_each_block(pool, block, images, channels, count, false,
                 [&](int64_t at, int64_t from, int nc) {
                   unblock_positions(block, nc, in + from, count, count, y + at);
                 });
}

// A narrow block is a block of its own width: positions nc floats apart.
void hold_tensor(ThreadPool& pool, int block, const float* x, int64_t images, int64_t channels,
                 int64_t count, float* out) {
  for_each_block(pool, block, images, channels, count, true, [&](int64_t at, int64_t to, int nc) {
    block_positions(nc, nc, x + at, count, count, out + to);
  });
}

void release_tensor(ThreadPool& pool, int block, const float* in, int64_t images, int64_t channels,
                    int64_t count, float* y) {
  for_each_block(pool, block, images, channels, count, true, [&](int64_t at, int64_t from, int nc) {
    unblock_positions(nc, nc, in + from, count, count, y + at);
  });
}

}  // namespace sod2::rt

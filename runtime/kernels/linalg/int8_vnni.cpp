#include "runtime/kernels/linalg/int8_vnni.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include "runtime/kernels/linalg/int8_vnni_simd.h"
#define SOD2_VNNI 1
#else
#define SOD2_VNNI 0
#endif

namespace sod2::rt::quant {

namespace {
std::atomic<bool> g_vnni_enabled{true};

bool cpu_has_vnni() {
#if SOD2_VNNI
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  }();
  return yes;
#else
  return false;
#endif
}
}  // namespace

bool vnni_available() { return cpu_has_vnni() && g_vnni_enabled.load(std::memory_order_relaxed); }

bool vbmi_available() {
#if SOD2_VNNI
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  }();
  return yes;
#else
  return false;
#endif
}

void set_vnni_enabled(bool enabled) { g_vnni_enabled.store(enabled); }

void vnni_pack_weights(const int8_t* w, int64_t m, int64_t k, int64_t ldw, VnniWeights* out) {
  out->m = m;
  out->k = k;
  out->quads = (k + 3) / 4;
  const int64_t blocks = (m + kVnniRows - 1) / kVnniRows;
  out->data.assign(static_cast<size_t>(blocks * out->quads * kVnniRows * 4), 0);
  out->row_sums.assign(static_cast<size_t>(m), 0);
  out->mp = 0;
  out->lanes.clear();
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* row = w + i * ldw;
    int8_t* dst =
        out->data.data() + (i / kVnniRows) * out->quads * kVnniRows * 4 + (i % kVnniRows) * 4;
    uint32_t sum = 0;  // wraps as the GEMM's sums do
    for (int64_t kk = 0; kk < k; ++kk) {
      dst[(kk / 4) * kVnniRows * 4 + kk % 4] = row[kk];
      sum += static_cast<uint32_t>(static_cast<int32_t>(row[kk]));
    }
    out->row_sums[static_cast<size_t>(i)] = static_cast<int32_t>(sum);
  }
}

void vnni_pack_lanes(VnniWeights* w) {
  w->mp = (w->m + 15) / 16 * 16;
  w->lanes.assign(static_cast<size_t>(w->quads * w->mp * 4), 0);
  for (int64_t i = 0; i < w->m; ++i) {
    const int8_t* src =
        w->data.data() + (i / kVnniRows) * w->quads * kVnniRows * 4 + (i % kVnniRows) * 4;
    for (int64_t q = 0; q < w->quads; ++q)
      std::memcpy(w->lanes.data() + (q * w->mp + i) * 4, src + q * kVnniRows * 4, 4);
  }
}

int64_t vnni_lanes_stage_ints(int64_t m0, int64_t m1, int64_t n) {
  return n * ((m1 + 15) / 16 * 16 - m0 / 16 * 16);
}

int64_t vnni_packed_columns(int64_t n) { return (n + kVnniCols - 1) / kVnniCols * kVnniCols; }
int64_t vnni_packed_bytes(int64_t k, int64_t n) { return (k + 3) / 4 * vnni_packed_columns(n) * 4; }

#if SOD2_VNNI
namespace {

using namespace vnni_store;

// The first min(n, 16) lanes of a vector of positions.
inline __mmask16 first_positions(int64_t n) {
  return n >= kVnniCols ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

// x_zero times a row's weight sum, in every lane: what the zero point adds to each of the row's
// sums. uint32 arithmetic: the sums wrap modulo 2^32, as ONNX's int32 does.
SOD2_TARGET_VNNI inline __m512i zero_point_term(int32_t x_zero, int32_t row_sum) {
  return _mm512_set1_epi32(
      static_cast<int32_t>(static_cast<uint32_t>(x_zero) * static_cast<uint32_t>(row_sum)));
}

// Four rows' bytes j..j+15 interleaved: out[4 * t + r] = row r's byte j + t.
SOD2_TARGET_VNNI inline void interleave16(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2,
                                          const uint8_t* r3, uint8_t* out) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r2));
  const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r3));
  const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
  const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
  auto* o = reinterpret_cast<__m128i*>(out);
  _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
  _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
}

// The same for bytes j..j+63 of four rows, 256 bytes out: the byte and word interleaves work
// within 128-bit lanes, so lane L of q_i holds positions 16L + 4i .. 16L + 4i + 3; two rounds of
// lane shuffles put them in order. A third of interleave16's instructions per byte.
SOD2_TARGET_VNNI inline void interleave64(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2,
                                          const uint8_t* r3, uint8_t* out) {
  const __m512i a = _mm512_loadu_si512(r0), b = _mm512_loadu_si512(r1);
  const __m512i c = _mm512_loadu_si512(r2), d = _mm512_loadu_si512(r3);
  const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
  const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
  const __m512i q0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), q1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
  const __m512i q2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), q3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
  // t0 = [q0.0, q0.1, q1.0, q1.1], t1 = [q2.0, q2.1, q3.0, q3.1], t2 and t3 the same of lanes 2, 3.
  const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, _MM_SHUFFLE(1, 0, 1, 0));
  const __m512i t1 = _mm512_shuffle_i64x2(q2, q3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m512i t2 = _mm512_shuffle_i64x2(q0, q1, _MM_SHUFFLE(3, 2, 3, 2));
  const __m512i t3 = _mm512_shuffle_i64x2(q2, q3, _MM_SHUFFLE(3, 2, 3, 2));
  auto* o = reinterpret_cast<__m512i*>(out);
  _mm512_storeu_si512(o + 0, _mm512_shuffle_i64x2(t0, t1, _MM_SHUFFLE(2, 0, 2, 0)));
  _mm512_storeu_si512(o + 1, _mm512_shuffle_i64x2(t0, t1, _MM_SHUFFLE(3, 1, 3, 1)));
  _mm512_storeu_si512(o + 2, _mm512_shuffle_i64x2(t2, t3, _MM_SHUFFLE(2, 0, 2, 0)));
  _mm512_storeu_si512(o + 3, _mm512_shuffle_i64x2(t2, t3, _MM_SHUFFLE(3, 1, 3, 1)));
}

// NV vectors of 16 positions for 8 rows: acc[r][v] over every quad, then C = acc - x_zero * sum.
// Stores rows [r0, r1) of the block, row r at c + (r - r0) * ldc, and `cols` columns; with a
// requantizing q, 8-bit values at q->out + (r - r0) * q->ldo instead (q's bias and mult are
// offset to the block's row 0).
template <int NV>
SOD2_TARGET_VNNI void micro_tile(const int8_t* wb, const uint8_t* xb, int64_t quads,
                                 int64_t quad_stride, const int32_t* sums, int32_t x_zero,
                                 int64_t r0, int64_t r1, int64_t cols, int32_t* c, int64_t ldc,
                                 const VnniRequant* q = nullptr) {
  __m512i acc[kVnniRows][NV];
  for (auto& r : acc)
    for (auto& v : r) v = _mm512_setzero_si512();
  for (int64_t q = 0; q < quads; ++q) {
    __m512i x[NV];
    for (int v = 0; v < NV; ++v)
      x[v] = _mm512_loadu_si512(xb + q * quad_stride + v * kVnniCols * 4);
    const int32_t* wq = reinterpret_cast<const int32_t*>(wb + q * kVnniRows * 4);
    for (int r = 0; r < kVnniRows; ++r) {
      const __m512i wr = _mm512_set1_epi32(wq[r]);
      for (int v = 0; v < NV; ++v) acc[r][v] = dpbusd(acc[r][v], x[v], wr);
    }
  }
  for (int64_t r = r0; r < r1; ++r) {
    const __m512i zs = zero_point_term(x_zero, sums[r]);
    for (int v = 0; v < NV; ++v) {
      const int64_t left = cols - v * kVnniCols;
      if (left <= 0) break;
      const __mmask16 mask = first_positions(left);
      const __m512i sum = _mm512_sub_epi32(acc[r][v], zs);
      if (!q) {
        _mm512_mask_storeu_epi32(c + (r - r0) * ldc + v * kVnniCols, mask, sum);
        continue;
      }
      const __m512i biased = _mm512_add_epi32(sum, _mm512_set1_epi32(q->e.bias ? q->e.bias[r] : 0));
      store_row(biased, q->e, r, q->out, (r - r0) * q->ldo + v * kVnniCols, mask, q->join,
                q->residual);
    }
  }
}

// v[i][j] -> v[j][i] for 16 vectors of 16 int32: pairs of lanes, then of pairs, then of
// 128-bit quarters, in four stages of two-source shuffles.
SOD2_TARGET_VNNI inline void transpose16(__m512i* v) {
  __m512i a[16], b[16];
  for (int i = 0; i < 16; i += 2) {
    a[i] = _mm512_unpacklo_epi32(v[i], v[i + 1]);
    a[i + 1] = _mm512_unpackhi_epi32(v[i], v[i + 1]);
  }
  for (int i = 0; i < 16; i += 4)
    for (int k = 0; k < 2; ++k) {
      b[i + k] = _mm512_unpacklo_epi64(a[i + k], a[i + k + 2]);
      b[i + k + 2] = _mm512_unpackhi_epi64(a[i + k], a[i + k + 2]);
    }
  for (int i = 0; i < 16; i += 8)
    for (int k = 0; k < 4; ++k) {
      a[i + k] = _mm512_shuffle_i32x4(b[i + k], b[i + k + 4], 0x88);
      a[i + k + 4] = _mm512_shuffle_i32x4(b[i + k], b[i + k + 4], 0xdd);
    }
  for (int k = 0; k < 8; ++k) {
    b[k] = _mm512_shuffle_i32x4(a[k], a[k + 8], 0x88);
    b[k + 8] = _mm512_shuffle_i32x4(a[k], a[k + 8], 0xdd);
  }
  // The 64-bit unpacks leave columns 1 and 2 of each four swapped.
  for (int i = 0; i < 16; i += 4) {
    v[i] = b[i];
    v[i + 1] = b[i + 2];
    v[i + 2] = b[i + 1];
    v[i + 3] = b[i + 3];
  }
}

// P positions x NV vectors of 16 channels: acc[p][v] over every quad, stored to stage row p
// (columns v * 16 on, rows ld apart). wl: the lanes of the tile's first channel; xb: the packed
// operand at the tile's first position.
template <int P, int NV>
SOD2_TARGET_VNNI void lanes_tile(const int8_t* wl, int64_t quad_w, const uint8_t* xb,
                                 int64_t quad_x, int64_t quads, int32_t* stage, int64_t ld) {
  __m512i acc[P][NV];
  for (auto& r : acc)
    for (auto& v : r) v = _mm512_setzero_si512();
  for (int64_t q = 0; q < quads; ++q) {
    __m512i w[NV];
    for (int v = 0; v < NV; ++v) w[v] = _mm512_loadu_si512(wl + q * quad_w + v * 64);
    const int32_t* xq = reinterpret_cast<const int32_t*>(xb + q * quad_x);
    for (int p = 0; p < P; ++p) {
      const __m512i x = _mm512_set1_epi32(xq[p]);
      for (int v = 0; v < NV; ++v) acc[p][v] = dpbusd(acc[p][v], x, w[v]);
    }
  }
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < NV; ++v) _mm512_storeu_si512(stage + p * ld + v * 16, acc[p][v]);
}

template <int P>
SOD2_TARGET_VNNI void lanes_tile_nv(int nv, const int8_t* wl, int64_t quad_w, const uint8_t* xb,
                                    int64_t quad_x, int64_t quads, int32_t* stage, int64_t ld) {
  switch (nv) {
    case 1: lanes_tile<P, 1>(wl, quad_w, xb, quad_x, quads, stage, ld); break;
    case 2: lanes_tile<P, 2>(wl, quad_w, xb, quad_x, quads, stage, ld); break;
    case 3: lanes_tile<P, 3>(wl, quad_w, xb, quad_x, quads, stage, ld); break;
    default: lanes_tile<P, 4>(wl, quad_w, xb, quad_x, quads, stage, ld); break;
  }
}

SOD2_TARGET_VNNI void gemm_lanes_vnni(const VnniWeights& w, int64_t m0, int64_t m1,
                                      const uint8_t* packed_x, int64_t n, int32_t x_zero,
                                      const VnniRequant& q, int32_t* stage) {
  constexpr int kP = 6, kNv = 4;
  const int64_t c0 = m0 / 16 * 16, c1 = (m1 + 15) / 16 * 16, ld = c1 - c0;
  const int64_t quad_x = vnni_packed_columns(n) * 4, quad_w = w.mp * 4;
  // Channel blocks outside, positions inside: a block's weights (4 x 64 bytes a quad) stay in
  // L1 while the positions pass.
  for (int64_t o = c0; o < c1; o += 16 * kNv) {
    const int nv = static_cast<int>(std::min<int64_t>(kNv, (c1 - o) / 16));
    const int8_t* wl = w.lanes.data() + o * 4;
    // Tiles of 6 positions, the last two of 7 or 8 as 4 + 3 or 4 + 4: a tile of one or two
    // positions keeps too few sums in flight to hide the multiply-add's latency (a 7x7 map's
    // 49th position cost a twentieth of its conv on one thread).
    for (int64_t j = 0, p = 0; j < n; j += p) {
      const int64_t left = n - j;
      p = left == 7 || left == 8 ? 4 : std::min<int64_t>(kP, left);
      const uint8_t* xb = packed_x + j * 4;
      int32_t* st = stage + j * ld + (o - c0);
      switch (p) {
        case 1: lanes_tile_nv<1>(nv, wl, quad_w, xb, quad_x, w.quads, st, ld); break;
        case 2: lanes_tile_nv<2>(nv, wl, quad_w, xb, quad_x, w.quads, st, ld); break;
        case 3: lanes_tile_nv<3>(nv, wl, quad_w, xb, quad_x, w.quads, st, ld); break;
        case 4: lanes_tile_nv<4>(nv, wl, quad_w, xb, quad_x, w.quads, st, ld); break;
        case 5: lanes_tile_nv<5>(nv, wl, quad_w, xb, quad_x, w.quads, st, ld); break;
        default: lanes_tile_nv<6>(nv, wl, quad_w, xb, quad_x, w.quads, st, ld); break;
      }
    }
  }
  // Each channel's sums, 16 positions at a time, through micro_tile's store: blocks of 16
  // positions x 16 channels of stage transposed in registers (a gather per channel and 16
  // positions cost the 7x7 conv of ResNet's last stage 7% of its time on one thread).
  for (int64_t cb = c0; cb < c1; cb += 16) {
    for (int64_t t = 0; t < n; t += kVnniCols) {
      const int64_t rows = std::min<int64_t>(kVnniCols, n - t);
      const __mmask16 mask = first_positions(n - t);
      __m512i v[16];
      for (int64_t i = 0; i < 16; ++i)
        v[i] = i < rows ? _mm512_loadu_si512(stage + (t + i) * ld + (cb - c0))
                        : _mm512_setzero_si512();
      transpose16(v);
      const int64_t first = std::max(cb, m0), last = std::min(cb + 16, m1);
      for (int64_t r = first; r < last; ++r) {
        const __m512i zs = zero_point_term(x_zero, w.row_sums[r]);
        const __m512i bias = _mm512_set1_epi32(q.e.bias ? q.e.bias[r] : 0);
        store_row(_mm512_add_epi32(_mm512_sub_epi32(v[r - cb], zs), bias), q.e, r, q.out,
                  (r - m0) * q.ldo + t, mask, q.join, q.residual);
      }
    }
  }
}

SOD2_TARGET_VNNI void finish_float_sums_vnni(const ChannelEpilogue& e, int64_t row,
                                             const float* sums, int64_t n, void* out) {
  const __m512i bias = _mm512_set1_epi32(e.bias ? e.bias[row] : 0);
  for (int64_t t = 0; t < n; t += kVnniCols) {
    const __mmask16 mask = first_positions(n - t);
    // Exact integers below 2^24 as floats: the conversion is exact; the bias adds modulo 2^32.
    const __m512i sum = _mm512_cvttps_epi32(_mm512_maskz_loadu_ps(mask, sums + t));
    store_row(_mm512_add_epi32(sum, bias), e, row, out, t, mask);
  }
}

SOD2_TARGET_VNNI void finish_float_lanes_vnni(const ChannelEpilogue& e, int64_t row0, int channels,
                                              const float* lanes, int64_t count, int64_t plane,
                                              int64_t at, void* out) {
  const size_t bytes = dtype_size(e.out_type);
  for (int64_t t = 0; t < count; t += kVnniCols) {
    const int64_t rows = std::min<int64_t>(kVnniCols, count - t);
    __m512i v[16];
    for (int64_t i = 0; i < 16; ++i)
      v[i] = i < rows ? _mm512_cvttps_epi32(_mm512_loadu_ps(lanes + (t + i) * 16))
                      : _mm512_setzero_si512();
    transpose16(v);
    const __mmask16 mask = first_positions(count - t);
    for (int l = 0; l < channels; ++l) {
      const int64_t r = row0 + l;
      const __m512i bias = _mm512_set1_epi32(e.bias ? e.bias[r] : 0);
      // store_row's `at` counts from out, in elements; rows are channels of e.
      store_row(_mm512_add_epi32(v[l], bias), e, r,
                static_cast<char*>(out) + static_cast<size_t>(at + l * plane + t) * bytes, 0, mask);
    }
  }
}

SOD2_TARGET_VNNI void pack_activations_vnni(const uint8_t* x, int64_t ldx, int64_t k, int64_t n,
                                            uint8_t* out) {
  const int64_t np = vnni_packed_columns(n), quads = (k + 3) / 4;
  static const uint8_t zeros[kVnniCols] = {};
  for (int64_t q = 0; q < quads; ++q) {
    const uint8_t* rows[4];
    for (int r = 0; r < 4; ++r) rows[r] = 4 * q + r < k ? x + (4 * q + r) * ldx : nullptr;
    uint8_t* dst = out + q * np * 4;
    int64_t j = 0;
    if (rows[3]) {  // four real rows (the zeros stand in for 16 bytes only)
      for (; j + 4 * kVnniCols <= n; j += 4 * kVnniCols)
        interleave64(rows[0] + j, rows[1] + j, rows[2] + j, rows[3] + j, dst + j * 4);
    }
    for (; j + kVnniCols <= n; j += kVnniCols) {
      const uint8_t* src[4];
      for (int r = 0; r < 4; ++r) src[r] = rows[r] ? rows[r] + j : zeros;
      interleave16(src[0], src[1], src[2], src[3], dst + j * 4);
    }
    if (j < np) {
      // The last partial vector through a zero-padded copy (never read past a row's end).
      uint8_t tail[4][kVnniCols] = {};
      for (int r = 0; r < 4; ++r)
        if (rows[r]) std::memcpy(tail[r], rows[r] + j, static_cast<size_t>(n - j));
      interleave16(tail[0], tail[1], tail[2], tail[3], dst + j * 4);
    }
  }
}

SOD2_TARGET_VNNI void pack_runs_vnni(const uint8_t* const* row_base, int64_t k, const VnniRun* runs,
                                     int64_t nruns, int64_t n, uint8_t* out) {
  const int64_t np = vnni_packed_columns(n), quads = (k + 3) / 4;
  for (int64_t q = 0; q < quads; ++q) {
    // Rows past k read row 0 again: their weights are zero.
    const uint8_t* rows[4];
    for (int r = 0; r < 4; ++r) rows[r] = row_base[4 * q + r < k ? 4 * q + r : 0];
    uint8_t* dst = out + q * np * 4;
    // In order: a run's overrun lands where the next run (or quad) writes.
    for (int64_t i = 0; i < nruns; ++i) {
      const VnniRun& run = runs[i];
      uint8_t* d = dst + run.t * 4;
      // 64 positions at a time while more than 32 are left (an output row of 56 is one step),
      // then 16.
      int64_t j = 0;
      for (; run.count - j > 2 * kVnniCols; j += 4 * kVnniCols)
        interleave64(rows[0] + run.offset + j, rows[1] + run.offset + j, rows[2] + run.offset + j,
                     rows[3] + run.offset + j, d + j * 4);
      for (; j < run.count; j += kVnniCols)
        interleave16(rows[0] + run.offset + j, rows[1] + run.offset + j, rows[2] + run.offset + j,
                     rows[3] + run.offset + j, d + j * 4);
    }
  }
}

}  // namespace
#endif

void vnni_pack_activations(const uint8_t* x, int64_t ldx, int64_t k, int64_t n, uint8_t* out) {
#if SOD2_VNNI
  pack_activations_vnni(x, ldx, k, n, out);
#else
  (void)x, (void)ldx, (void)k, (void)n, (void)out;
#endif
}

void vnni_gemm_lanes_requant(const VnniWeights& w, int64_t m0, int64_t m1, const uint8_t* packed_x,
                             int64_t n, int32_t x_zero, const VnniRequant& q, int32_t* stage) {
#if SOD2_VNNI
  gemm_lanes_vnni(w, m0, m1, packed_x, n, x_zero, q, stage);
#else
  (void)w, (void)m0, (void)m1, (void)packed_x, (void)n, (void)x_zero, (void)q, (void)stage;
#endif
}

void vnni_finish_float_sums(const ChannelEpilogue& e, int64_t row, const float* sums, int64_t n,
                            void* out) {
#if SOD2_VNNI
  finish_float_sums_vnni(e, row, sums, n, out);
#else
  (void)e, (void)row, (void)sums, (void)n, (void)out;
#endif
}

void vnni_finish_float_lanes(const ChannelEpilogue& e, int64_t row0, int channels,
                             const float* lanes, int64_t count, int64_t plane, int64_t at,
                             void* out) {
#if SOD2_VNNI
  finish_float_lanes_vnni(e, row0, channels, lanes, count, plane, at, out);
#else
  (void)e, (void)row0, (void)channels, (void)lanes, (void)count, (void)plane, (void)at, (void)out;
#endif
}

void vnni_pack_runs(const uint8_t* const* row_base, int64_t k, const VnniRun* runs, int64_t nruns,
                    int64_t n, uint8_t* out) {
#if SOD2_VNNI
  pack_runs_vnni(row_base, k, runs, nruns, n, out);
#else
  (void)row_base, (void)k, (void)runs, (void)nruns, (void)n, (void)out;
#endif
}

namespace {

void gemm_blocks(const VnniWeights& w, int64_t m0, int64_t m1, const uint8_t* packed_x, int64_t n,
                 int32_t x_zero, int32_t* c, int64_t ldc, const VnniRequant* q) {
#if SOD2_VNNI
  const int64_t np = vnni_packed_columns(n), quad_stride = np * 4;
  const int64_t block_bytes = w.quads * kVnniRows * 4;
  for (int64_t i0 = m0 / kVnniRows * kVnniRows; i0 < m1; i0 += kVnniRows) {
    // A block's rows outside [m0, m1) are computed and not stored.
    const int64_t r0 = std::max(m0, i0) - i0, r1 = std::min(m1, i0 + kVnniRows) - i0;
    const int8_t* wb = w.data.data() + (i0 / kVnniRows) * block_bytes;
    const int32_t* sums = w.row_sums.data() + i0;
    int32_t* out = c ? c + (i0 + r0 - m0) * ldc : nullptr;
    VnniRequant block_q;
    if (q) {  // the same rows, offset to the block
      block_q = *q;
      block_q.e = q->e.from_channel(i0);
    }
    // The requantizing store of the tile at column j, or none.
    auto tile_q = [&](int64_t j) -> const VnniRequant* {
      if (!q) return nullptr;
      const int64_t at = (i0 + r0 - m0) * q->ldo + j;
      block_q.out = q->e.out_type == DType::kFloat
                        ? static_cast<void*>(static_cast<float*>(q->out) + at)
                        : static_cast<void*>(static_cast<char*>(q->out) + at);
      if (q->join) block_q.residual = static_cast<const char*>(q->residual) + at;
      return &block_q;
    };
    int64_t j = 0;
    for (; j + 2 * kVnniCols <= np; j += 2 * kVnniCols)
      micro_tile<2>(wb, packed_x + j * 4, w.quads, quad_stride, sums, x_zero, r0, r1, n - j,
                    out ? out + j : nullptr, ldc, tile_q(j));
    if (j < np)
      micro_tile<1>(wb, packed_x + j * 4, w.quads, quad_stride, sums, x_zero, r0, r1, n - j,
                    out ? out + j : nullptr, ldc, tile_q(j));
  }
#else
  (void)w, (void)m0, (void)m1, (void)packed_x, (void)n, (void)x_zero, (void)c, (void)ldc, (void)q;
#endif
}

}  // namespace

void vnni_gemm(const VnniWeights& w, int64_t m0, int64_t m1, const uint8_t* packed_x, int64_t n,
               int32_t x_zero, int32_t* c, int64_t ldc) {
  gemm_blocks(w, m0, m1, packed_x, n, x_zero, c, ldc, nullptr);
}

void vnni_gemm_requant(const VnniWeights& w, int64_t m0, int64_t m1, const uint8_t* packed_x,
                       int64_t n, int32_t x_zero, const VnniRequant& q) {
  gemm_blocks(w, m0, m1, packed_x, n, x_zero, nullptr, 0, &q);
}

}  // namespace sod2::rt::quant

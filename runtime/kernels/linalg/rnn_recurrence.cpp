#include "runtime/kernels/linalg/rnn_recurrence.h"

#include <algorithm>

#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

using simd::Vec;
constexpr int kUnits = static_cast<int>(kRecurrentUnits);

// Accumulator registers a row group may take: 24 of AVX-512's 32, 12 of AVX2's and SSE's 16,
// leaving room for the gates' weight vectors and the broadcast.
constexpr int accumulator_budget(int vl) { return vl == 16 ? 24 : 12; }

// ROWS rows of h against one block: every gate of the block's units, accumulated over k in
// registers, stored to gh (lanes past `units` left alone: they are the next gate's columns).
template <int VL, int GATES, int ROWS>
SOD2_SIMD_INLINE void block_rows(const float* block, int64_t hidden, const float* h, float* gh,
                                 int64_t ldc, int64_t unit0, int64_t units) {
  constexpr int NV = kUnits / VL;
  Vec<VL> acc[ROWS][GATES * NV];
#pragma GCC unroll 8
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < GATES * NV; ++v) acc[r][v] = Vec<VL>{};
  for (int64_t k = 0; k < hidden; ++k) {
    const float* wk = block + k * GATES * kUnits;
    Vec<VL> w[GATES * NV];
#pragma GCC unroll 16
    for (int v = 0; v < GATES * NV; ++v) w[v] = simd::load<VL>(wk + v * VL);
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; ++r) {
      const Vec<VL> hv = simd::splat<VL>(h[r * hidden + k]);
#pragma GCC unroll 16
      for (int v = 0; v < GATES * NV; ++v) acc[r][v] += w[v] * hv;
    }
  }
  for (int r = 0; r < ROWS; ++r)
    for (int g = 0; g < GATES; ++g)
      for (int v = 0; v < NV; ++v) {
        const int64_t lanes = std::min<int64_t>(VL, units - v * VL);
        if (lanes <= 0) break;
        float* dst = gh + r * ldc + g * hidden + unit0 + v * VL;
        if (lanes == VL)
          simd::store<VL>(dst, acc[r][g * NV + v]);
        else
          simd::store_n<VL>(dst, acc[r][g * NV + v], lanes);
      }
}

// `rows` (<= ROWS) rows: the instance for exactly that many.
template <int VL, int GATES, int ROWS>
SOD2_SIMD_INLINE void block_tail(int64_t rows, const float* block, int64_t hidden, const float* h,
                                 float* gh, int64_t ldc, int64_t unit0, int64_t units) {
  if constexpr (ROWS > 0) {
    if (rows == ROWS) return block_rows<VL, GATES, ROWS>(block, hidden, h, gh, ldc, unit0, units);
    block_tail<VL, GATES, ROWS - 1>(rows, block, hidden, h, gh, ldc, unit0, units);
  }
}

template <int VL, int GATES>
SOD2_SIMD_INLINE void product(const PackedRecurrence& p, const float* h, int64_t batch,
                              int64_t block0, int64_t block1, float* gh, int64_t ldc) {
  constexpr int kRows = std::max(1, accumulator_budget(VL) / (GATES * (kUnits / VL)));
  const int64_t block_floats = p.hidden * GATES * kUnits;
  for (int64_t blk = block0; blk < block1; ++blk) {
    const float* block = p.data + blk * block_floats;
    const int64_t unit0 = blk * kUnits, units = std::min<int64_t>(kUnits, p.hidden - unit0);
    // Row groups of even size: 8 rows as 4 + 4 rather than 6 + 2, whose two-row group would load
    // each weight vector for two multiply-adds only.
    const int64_t groups = (batch + kRows - 1) / kRows;
    for (int64_t grp = 0, b = 0; grp < groups; ++grp) {
      const int64_t rows = (batch - b) / (groups - grp);
      block_tail<VL, GATES, kRows>(rows, block, p.hidden, h + b * p.hidden, gh + b * ldc, ldc,
                                   unit0, units);
      b += rows;
    }
  }
}

template <int VL>
SOD2_SIMD_INLINE void product_any(const PackedRecurrence& p, const float* h, int64_t batch,
                                  int64_t block0, int64_t block1, float* gh, int64_t ldc) {
  if (p.gates == 4) return product<VL, 4>(p, h, batch, block0, block1, gh, ldc);
  product<VL, 3>(p, h, batch, block0, block1, gh, ldc);
}

#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void product_avx512(const PackedRecurrence& p, const float* h, int64_t batch,
                                       int64_t block0, int64_t block1, float* gh, int64_t ldc) {
  product_any<16>(p, h, batch, block0, block1, gh, ldc);
}
SOD2_TARGET_AVX2 void product_avx2(const PackedRecurrence& p, const float* h, int64_t batch,
                                   int64_t block0, int64_t block1, float* gh, int64_t ldc) {
  product_any<8>(p, h, batch, block0, block1, gh, ldc);
}
#endif

}  // namespace

int64_t packed_recurrence_floats(int gates, int64_t hidden) {
  const int64_t blocks = (hidden + kRecurrentUnits - 1) / kRecurrentUnits;
  return blocks * hidden * gates * kRecurrentUnits;
}

void pack_recurrence(const float* r, int gates, int64_t hidden, float* out) {
  const int64_t blocks = (hidden + kRecurrentUnits - 1) / kRecurrentUnits;
  const int64_t ku = kRecurrentUnits, row = gates * ku;  // floats per k in a block
  // Each row of R is read in order and written down its unit's column of the block (a few dozen
  // KiB, cached), rather than each packed k gathering from gates * 16 rows of R.
  for (int64_t blk = 0; blk < blocks; ++blk) {
    float* ob = out + blk * hidden * row;
    for (int g = 0; g < gates; ++g)
      for (int64_t u = 0; u < ku; ++u) {
        const int64_t unit = blk * ku + u;
        float* o = ob + g * ku + u;
        const float* src = unit < hidden ? r + (g * hidden + unit) * hidden : nullptr;
        for (int64_t k = 0; k < hidden; ++k) o[k * row] = src ? src[k] : 0.f;
      }
  }
}

void PackedRecurrenceCache::prepare(const Tensor* r, int dirs, int gates, int64_t hidden) {
  // hidden is the node's attribute: bounded by R's size before the products that check it.
  if (!r || r->dtype != DType::kFloat || hidden <= 0 || hidden > r->numel() || dirs < 1 ||
      dirs > 2 || !(r->shape == Shape{dirs, gates * hidden, hidden}))
    return;
  for (int d = 0; d < dirs; ++d)
    get(r->as<float>() + d * gates * hidden * hidden, d, dirs, gates, hidden);
}

const float* PackedRecurrenceCache::get(const float* r_d, int d, int dirs, int gates,
                                        int64_t hidden) {
  const int64_t floats = packed_recurrence_floats(gates, hidden);
  const auto total = static_cast<size_t>(dirs * floats);
  if (packed_.size() != total) {
    packed_.assign(total, 0.f);
    packed_from_.fill(nullptr);
  }
  float* out = packed_.data() + d * floats;
  if (packed_from_[static_cast<size_t>(d)] != r_d) {
    pack_recurrence(r_d, gates, hidden, out);
    packed_from_[static_cast<size_t>(d)] = r_d;
  }
  return out;
}

void recurrent_block_product(const PackedRecurrence& r, const float* h, int64_t batch,
                             int64_t block0, int64_t block1, float* gh, int64_t ldc) {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return product_avx512(r, h, batch, block0, block1, gh, ldc);
    case simd::Level::kAvx2: return product_avx2(r, h, batch, block0, block1, gh, ldc);
    default: break;
  }
#endif
  product_any<4>(r, h, batch, block0, block1, gh, ldc);
}

}  // namespace sod2::rt

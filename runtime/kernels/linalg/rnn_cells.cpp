#include "runtime/kernels/linalg/rnn_cells.h"

#include "runtime/kernels/linalg/simd.h"
#include "runtime/kernels/math/fast_math.h"

namespace sod2::rt {
namespace {

// As the Sigmoid and Tanh ops compute them, so a model's cell matches its unrolled graph.
SOD2_SIMD_INLINE float sigmoid(float v) { return math::vec_sigmoidf(v); }

SOD2_SIMD_INLINE void lstm_impl(const float* __restrict xg, const float* __restrict rg,
                                float* __restrict c, float* __restrict h, int64_t n, int64_t H) {
  for (int64_t j = 0; j < n; ++j) {
    const float i = sigmoid(xg[j] + rg[j]);
    const float o = sigmoid(xg[H + j] + rg[H + j]);
    const float f = sigmoid(xg[2 * H + j] + rg[2 * H + j]);
    const float g = math::vec_tanhf(xg[3 * H + j] + rg[3 * H + j]);
    const float cn = f * c[j] + i * g;
    c[j] = cn;
    h[j] = o * math::vec_tanhf(cn);
  }
}

// h_prev and h_out may be the same (in place); nothing else aliases.
SOD2_SIMD_INLINE void gru_impl(const float* __restrict xg, const float* __restrict rg,
                               const float* __restrict rbh, const float* h_prev, float* h_out,
                               int64_t n, int64_t H, bool lbr) {
  if (lbr) {
    for (int64_t j = 0; j < n; ++j) {
      const float z = sigmoid(xg[j] + rg[j]);
      const float r = sigmoid(xg[H + j] + rg[H + j]);
      const float hh = math::vec_tanhf(xg[2 * H + j] + r * (rg[2 * H + j] + rbh[j]));
      h_out[j] = (1.f - z) * hh + z * h_prev[j];
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      const float z = sigmoid(xg[j] + rg[j]);
      const float hh = math::vec_tanhf(xg[2 * H + j] + rg[2 * H + j] + rbh[j]);
      h_out[j] = (1.f - z) * hh + z * h_prev[j];
    }
  }
}

#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void lstm_avx512(const float* xg, const float* rg, float* c, float* h, int64_t n,
                                    int64_t H) {
  lstm_impl(xg, rg, c, h, n, H);
}
SOD2_TARGET_AVX2 void lstm_avx2(const float* xg, const float* rg, float* c, float* h, int64_t n,
                                int64_t H) {
  lstm_impl(xg, rg, c, h, n, H);
}
SOD2_TARGET_AVX512 void gru_avx512(const float* xg, const float* rg, const float* rbh,
                                   const float* h_prev, float* h_out, int64_t n, int64_t H,
                                   bool lbr) {
  gru_impl(xg, rg, rbh, h_prev, h_out, n, H, lbr);
}
SOD2_TARGET_AVX2 void gru_avx2(const float* xg, const float* rg, const float* rbh,
                               const float* h_prev, float* h_out, int64_t n, int64_t H, bool lbr) {
  gru_impl(xg, rg, rbh, h_prev, h_out, n, H, lbr);
}
#endif

}  // namespace

void lstm_cell_default(const float* xg, const float* rg, float* c, float* h, int64_t n, int64_t H) {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return lstm_avx512(xg, rg, c, h, n, H);
    case simd::Level::kAvx2: return lstm_avx2(xg, rg, c, h, n, H);
    default: break;
  }
#endif
  lstm_impl(xg, rg, c, h, n, H);
}

void gru_cell_default(const float* xg, const float* rg, const float* rbh, const float* h_prev,
                      float* h_out, int64_t n, int64_t H, bool linear_before_reset) {
  const bool lbr = linear_before_reset;
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return gru_avx512(xg, rg, rbh, h_prev, h_out, n, H, lbr);
    case simd::Level::kAvx2: return gru_avx2(xg, rg, rbh, h_prev, h_out, n, H, lbr);
    default: break;
  }
#endif
  gru_impl(xg, rg, rbh, h_prev, h_out, n, H, lbr);
}

}  // namespace sod2::rt

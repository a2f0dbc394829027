#include "runtime/kernels/linalg/gemm_builtin.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace sod2::rt {
namespace {

// The portable sgemm for targets without oneDNN or OpenBLAS (SOD2_LINALG_GEMM=builtin): the
// GotoBLAS blocking with a register-tiled micro-kernel in GCC/Clang vector extensions of 4 floats
// (NEON or SSE). Panels of op(B) (kKc x kNc) and of op(A) (kMc x kKc) are packed into contiguous
// strips of kNr columns / kMr rows, zero-padded, so the micro-kernel runs a fixed kMr x kNr tile
// of accumulators: 16 of the 32 NEON registers on arm64, 8 of the 16 SSE registers elsewhere.
typedef float V4 __attribute__((vector_size(16)));
#if defined(__aarch64__)
constexpr int64_t kMr = 8;
#else
constexpr int64_t kMr = 4;
#endif
constexpr int64_t kNr = 8, kNv = kNr / 4;
constexpr int64_t kKc = 256, kMc = 64, kNc = 1024;

// op(X)[i, j] for a row-major X with leading dimension ld.
inline float at(const float* x, int64_t ld, bool trans, int64_t i, int64_t j) {
  return trans ? x[j * ld + i] : x[i * ld + j];
}

// op(B)[p0 : p0+kc, j0 : j0+nc] as ceil(nc / kNr) strips, each kc rows of kNr floats.
void pack_b(const GemmArgs& g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* out) {
  for (int64_t js = 0; js < nc; js += kNr) {
    const int64_t w = std::min(kNr, nc - js);
    for (int64_t p = 0; p < kc; ++p, out += kNr) {
      if (!g.trans_b && w == kNr) {
        std::memcpy(out, g.b + (p0 + p) * g.ldb + j0 + js, kNr * sizeof(float));
        continue;
      }
      int64_t j = 0;
      for (; j < w; ++j) out[j] = at(g.b, g.ldb, g.trans_b, p0 + p, j0 + js + j);
      for (; j < kNr; ++j) out[j] = 0.f;
    }
  }
}

// op(A)[i0 : i0+mc, p0 : p0+kc] as ceil(mc / kMr) strips, each kc columns of kMr floats.
void pack_a(const GemmArgs& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* out) {
  for (int64_t is = 0; is < mc; is += kMr) {
    const int64_t h = std::min(kMr, mc - is);
    for (int64_t p = 0; p < kc; ++p, out += kMr) {
      int64_t i = 0;
      for (; i < h; ++i) out[i] = at(g.a, g.lda, g.trans_a, i0 + is + i, p0 + p);
      for (; i < kMr; ++i) out[i] = 0.f;
    }
  }
}

// acc = sum over p of a[p][:] (outer) b[p][:], then C tile = alpha * acc + beta' * C where beta'
// is g.beta on the first k block and 1 after it. beta' == 0 never reads C (it may be garbage).
void micro_tile(int64_t kc, const float* a, const float* b, float alpha, float beta, float* c,
                int64_t ldc, int64_t h, int64_t w) {
  V4 vacc[kMr][kNv] = {};
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    V4 vb[kNv];
    std::memcpy(vb, b, sizeof vb);
    for (int64_t i = 0; i < kMr; ++i) {
      const V4 ai = V4{} + a[i];
      for (int64_t v = 0; v < kNv; ++v) vacc[i][v] += ai * vb[v];
    }
  }
  float acc[kMr][kNr];
  std::memcpy(acc, vacc, sizeof acc);
  for (int64_t i = 0; i < h; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.f) {
      for (int64_t j = 0; j < w; ++j) row[j] = alpha * acc[i][j];
    } else if (beta == 1.f) {
      for (int64_t j = 0; j < w; ++j) row[j] += alpha * acc[i][j];
    } else {
      for (int64_t j = 0; j < w; ++j) row[j] = alpha * acc[i][j] + beta * row[j];
    }
  }
}

}  // namespace

void sgemm_builtin(const GemmArgs& g) {
  // Per thread: sgemm() calls this from the pool's threads at once.
  thread_local std::vector<float> a_pack, b_pack;
  const int64_t nc_max = std::min(kNc, (g.n + kNr - 1) / kNr * kNr);
  const int64_t mc_max = std::min(kMc, (g.m + kMr - 1) / kMr * kMr);
  const int64_t kc_max = std::min(kKc, g.k);
  b_pack.resize(static_cast<size_t>(kc_max * nc_max));
  a_pack.resize(static_cast<size_t>(mc_max * kc_max));
  for (int64_t j0 = 0; j0 < g.n; j0 += kNc) {
    const int64_t nc = std::min(kNc, g.n - j0);
    for (int64_t p0 = 0; p0 < g.k; p0 += kKc) {
      const int64_t kc = std::min(kKc, g.k - p0);
      const float beta = p0 == 0 ? g.beta : 1.f;
      pack_b(g, p0, kc, j0, nc, b_pack.data());
      for (int64_t i0 = 0; i0 < g.m; i0 += kMc) {
        const int64_t mc = std::min(kMc, g.m - i0);
        pack_a(g, i0, mc, p0, kc, a_pack.data());
        for (int64_t js = 0; js < nc; js += kNr) {
          const float* bp = b_pack.data() + (js / kNr) * kc * kNr;
          for (int64_t is = 0; is < mc; is += kMr) {
            const float* ap = a_pack.data() + (is / kMr) * kc * kMr;
            micro_tile(kc, ap, bp, g.alpha, beta, g.c + (i0 + is) * g.ldc + j0 + js, g.ldc,
                       std::min(kMr, mc - is), std::min(kNr, nc - js));
          }
        }
      }
    }
  }
}

}  // namespace sod2::rt

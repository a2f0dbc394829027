#include "runtime/kernels/linalg/int8_gemm.h"

#include <algorithm>

#if defined(SOD2_GEMM_ONEDNN)
#include <dnnl.h>
#include <omp.h>
#endif

namespace sod2::rt::quant {
namespace {

constexpr int64_t kRows = 256;  // output positions per pass of the portable loop

template <class A>
void igemm_portable(int64_t m, int64_t n, int64_t k, const A* a, int64_t lda, int32_t a_zero,
                    const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc) {
  int32_t acc[kRows];
  for (int64_t i0 = 0; i0 < m; i0 += kRows) {
    const int64_t rows = std::min(kRows, m - i0);
    for (int64_t j = 0; j < n; ++j) {
      std::fill(acc, acc + rows, 0);
      const int8_t* brow = b + j * ldb;
      for (int64_t kk = 0; kk < k; ++kk) {
        const int32_t w = brow[kk];
        if (w == 0) continue;
        const A* arow = a + kk * lda + i0;
        for (int64_t i = 0; i < rows; ++i) acc[i] += w * (static_cast<int32_t>(arow[i]) - a_zero);
      }
      for (int64_t i = 0; i < rows; ++i) c[(i0 + i) * ldc + j] = acc[i];
    }
  }
}

#if defined(SOD2_GEMM_ONEDNN)
bool has_vnni() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni");
  }();
  return yes;
}

// oneDNN threads with OpenMP: pin each of our threads' team to 1 (as gemm.cpp does for sgemm).
void pin_openmp() {
  thread_local bool pinned = false;
  if (!pinned) {
    omp_set_num_threads(1);
    pinned = true;
  }
}
#endif

}  // namespace

void igemm_serial(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda, int32_t a_zero,
                  const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(SOD2_GEMM_ONEDNN)
  if (has_vnni() && k > 0 && a_zero >= 0 && a_zero <= 255) {
    pin_openmp();
    const int32_t co = 0;
    if (dnnl_gemm_u8s8s32('T', 'T', 'F', m, n, k, 1.0f, a, lda, static_cast<uint8_t>(a_zero), b,
                          ldb, 0, 0.0f, c, ldc, &co) == dnnl_success)
      return;
  }
#endif
  igemm_portable(m, n, k, a, lda, a_zero, b, ldb, c, ldc);
}

void igemm_serial(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, int32_t a_zero,
                  const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(SOD2_GEMM_ONEDNN)
  if (has_vnni() && k > 0 && a_zero >= -128 && a_zero <= 127) {
    pin_openmp();
    const int32_t co = 0;
    if (dnnl_gemm_s8s8s32('T', 'T', 'F', m, n, k, 1.0f, a, lda, static_cast<int8_t>(a_zero), b, ldb,
                          0, 0.0f, c, ldc, &co) == dnnl_success)
      return;
  }
#endif
  igemm_portable(m, n, k, a, lda, a_zero, b, ldb, c, ldc);
}

const char* igemm_backend_name() {
#if defined(SOD2_GEMM_ONEDNN)
  if (has_vnni()) return "oneDNN (VNNI)";
#endif
  return "portable";
}

}  // namespace sod2::rt::quant

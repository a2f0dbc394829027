#include "runtime/kernels/linalg/int8_gemm.h"

#include <algorithm>

#if defined(SOD2_GEMM_ONEDNN)
#include <dnnl.h>
#include <omp.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#endif

namespace sod2::rt::quant {
namespace {

// The portable loop: one output channel at a time, its row of sums kept in registers/L1 over
// chunks of positions.
constexpr int64_t kChunk = 512;

void igemm_portable(int64_t m, int64_t n, int64_t k, const int8_t* w, int64_t ldw, const int8_t* x,
                    int64_t ldx, int32_t x_zero, int32_t* c, int64_t ldc) {
  for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
    const int64_t cols = std::min(kChunk, n - j0);
    for (int64_t i = 0; i < m; ++i) {
      // uint32: sums wrap modulo 2^32 as ONNX's int32 does (a crafted K can overflow; no UB).
      auto* crow = reinterpret_cast<uint32_t*>(c + i * ldc + j0);
      std::fill(crow, crow + cols, 0u);
      const int8_t* wrow = w + i * ldw;
      for (int64_t kk = 0; kk < k; ++kk) {
        const int32_t wv = wrow[kk];
        if (wv == 0) continue;
        const int8_t* xrow = x + kk * ldx + j0;
        for (int64_t j = 0; j < cols; ++j)
          crow[j] += static_cast<uint32_t>(wv * (static_cast<int32_t>(xrow[j]) - x_zero));
      }
    }
  }
}

#if defined(SOD2_GEMM_ONEDNN)
bool has_vnni() {
#if !defined(__x86_64__) && !defined(__i386__)
  return false;  // VNNI is x86's; elsewhere the portable loops run
#else
  static const bool yes = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vnni")) return true;
    // AVX-VNNI (CPUID leaf 7, sub-leaf 1, EAX bit 4) read directly: clang before 15 does not
    // know the name "avxvnni" and refuses to build (the fuzz and ASan presets).
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 4)) != 0;
  }();
  return yes;
#endif
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

void igemm_serial(int64_t m, int64_t n, int64_t k, const int8_t* w, int64_t ldw, const int8_t* x,
                  int64_t ldx, int32_t x_zero, int32_t* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(SOD2_GEMM_ONEDNN)
  if (has_vnni() && k > 0 && x_zero >= -128 && x_zero <= 127) {
    pin_openmp();
    const int32_t co = 0;
    if (dnnl_gemm_s8s8s32('N', 'N', 'F', m, n, k, 1.0f, w, ldw, 0, x, ldx,
                          static_cast<int8_t>(x_zero), 0.0f, c, ldc, &co) == dnnl_success)
      return;
  }
#endif
  igemm_portable(m, n, k, w, ldw, x, ldx, x_zero, c, ldc);
}

namespace {

template <class A>
void igemm_rows_portable(int64_t m, int64_t n, int64_t k, const A* a, int64_t lda, int32_t a_zero,
                         const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    auto* __restrict crow = reinterpret_cast<uint32_t*>(c + i * ldc);  // wraps, as above
    std::fill(crow, crow + n, 0u);
    for (int64_t kk = 0; kk < k; ++kk) {
      const int32_t av = static_cast<int32_t>(a[i * lda + kk]) - a_zero;
      if (av == 0) continue;
      const int8_t* __restrict brow = b + kk * ldb;
      for (int64_t j = 0; j < n; ++j)
        crow[j] += static_cast<uint32_t>(av * static_cast<int32_t>(brow[j]));
    }
  }
}

}  // namespace

void igemm_rows(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda, int32_t a_zero,
                const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(SOD2_GEMM_ONEDNN)
  if (has_vnni() && k > 0 && a_zero >= 0 && a_zero <= 255) {
    pin_openmp();
    const int32_t co = 0;
    if (dnnl_gemm_u8s8s32('N', 'N', 'F', m, n, k, 1.0f, a, lda, static_cast<uint8_t>(a_zero), b,
                          ldb, 0, 0.0f, c, ldc, &co) == dnnl_success)
      return;
  }
#endif
  igemm_rows_portable(m, n, k, a, lda, a_zero, b, ldb, c, ldc);
}

void igemm_rows(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, int32_t a_zero,
                const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(SOD2_GEMM_ONEDNN)
  if (has_vnni() && k > 0 && a_zero >= -128 && a_zero <= 127) {
    pin_openmp();
    const int32_t co = 0;
    if (dnnl_gemm_s8s8s32('N', 'N', 'F', m, n, k, 1.0f, a, lda, static_cast<int8_t>(a_zero), b, ldb,
                          0, 0.0f, c, ldc, &co) == dnnl_success)
      return;
  }
#endif
  igemm_rows_portable(m, n, k, a, lda, a_zero, b, ldb, c, ldc);
}

const char* igemm_backend_name() {
#if defined(SOD2_GEMM_ONEDNN)
  if (has_vnni()) return "oneDNN (VNNI)";
#endif
  return "portable";
}

}  // namespace sod2::rt::quant

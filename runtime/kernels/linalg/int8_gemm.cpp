#include "runtime/kernels/linalg/int8_gemm.h"

#include <algorithm>

// The SDOT kernel: GCC builds it for any arm64 target with a function attribute (the CPU is asked
// at run time); clang's arm_neon.h (before 16) declares the dot product intrinsics only when the
// whole file targets them, so a clang build has the kernel where -march includes +dotprod.
#if defined(__aarch64__) && defined(__linux__) && \
    (!defined(__clang__) || defined(__ARM_FEATURE_DOTPROD))
#include <arm_neon.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>

#include <vector>
#define SOD2_ARM_DOT 1
#if defined(__clang__)
#define SOD2_TARGET_DOTPROD
#else
#define SOD2_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#else
#define SOD2_ARM_DOT 0
#endif

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

#if SOD2_ARM_DOT
// The Armv8.2 dot product instructions (SDOT), which most phone cores since 2017 have.
bool has_dotprod() {
  static const bool yes = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return yes;
}

constexpr int64_t kDotRows = 8;  // output channels per micro-tile: two vectors of four rows' quads
constexpr int64_t kDotCols = 8;  // positions per micro-tile: two vectors of four

// C rows [i0, i0 + 8) (those below m), columns [j0, j0 + 8) (those below n), from W's rows
// packed as [quad][row][4] (wp) and X packed as [quad][position][4] (xp, np positions a quad):
// SDOT's lane form multiplies four positions' quads by one row's quad.
SOD2_TARGET_DOTPROD void dot_tile(const int8_t* wp, const int8_t* xp, int64_t quads, int64_t np,
                                  const int32_t* row_sums, int32_t x_zero, int64_t rows,
                                  int64_t cols, int32_t* c, int64_t ldc) {
  int32x4_t acc[kDotRows][2];
  for (auto& r : acc) r[0] = r[1] = vdupq_n_s32(0);
  for (int64_t q = 0; q < quads; ++q) {
    const int8x16_t x0 = vld1q_s8(xp + q * np * 4), x1 = vld1q_s8(xp + q * np * 4 + 16);
    const int8x16_t w0 = vld1q_s8(wp + q * 32), w1 = vld1q_s8(wp + q * 32 + 16);
#define SOD2_DOT_ROW(r, w, lane)                       \
  acc[r][0] = vdotq_laneq_s32(acc[r][0], x0, w, lane); \
  acc[r][1] = vdotq_laneq_s32(acc[r][1], x1, w, lane);
    SOD2_DOT_ROW(0, w0, 0)
    SOD2_DOT_ROW(1, w0, 1)
    SOD2_DOT_ROW(2, w0, 2)
    SOD2_DOT_ROW(3, w0, 3)
    SOD2_DOT_ROW(4, w1, 0)
    SOD2_DOT_ROW(5, w1, 1)
    SOD2_DOT_ROW(6, w1, 2)
    SOD2_DOT_ROW(7, w1, 3)
#undef SOD2_DOT_ROW
  }
  for (int64_t r = 0; r < rows; ++r) {
    // uint32: the sums wrap modulo 2^32 as ONNX's int32 does, and as SDOT's do.
    const int32_t zs =
        static_cast<int32_t>(static_cast<uint32_t>(x_zero) * static_cast<uint32_t>(row_sums[r]));
    int32_t out[kDotCols];
    vst1q_s32(out, vsubq_s32(acc[r][0], vdupq_n_s32(zs)));
    vst1q_s32(out + 4, vsubq_s32(acc[r][1], vdupq_n_s32(zs)));
    std::copy(out, out + cols, c + r * ldc);
  }
}

// igemm_serial on SDOT: X packed once per call into quads of taps per position, W a block of 8
// rows at a time; sum w * (x - x_zero) = sum w * x - x_zero * sum w.
void igemm_dot(int64_t m, int64_t n, int64_t k, const int8_t* w, int64_t ldw, const int8_t* x,
               int64_t ldx, int32_t x_zero, int32_t* c, int64_t ldc) {
  const int64_t quads = (k + 3) / 4, np = (n + kDotCols - 1) / kDotCols * kDotCols;
  // Per thread, grown to the largest call and reused: no allocation in the steady state.
  thread_local std::vector<int8_t> xp, wp;
  xp.assign(static_cast<size_t>(quads * np * 4), 0);
  wp.resize(static_cast<size_t>(quads * kDotRows * 4));
  for (int64_t kk = 0; kk < k; ++kk) {
    const int8_t* row = x + kk * ldx;
    int8_t* dst = xp.data() + (kk / 4) * np * 4 + kk % 4;
    for (int64_t j = 0; j < n; ++j) dst[j * 4] = row[j];
  }
  int32_t row_sums[kDotRows];
  for (int64_t i0 = 0; i0 < m; i0 += kDotRows) {
    const int64_t rows = std::min(kDotRows, m - i0);
    std::fill(wp.begin(), wp.end(), int8_t{0});
    for (int64_t r = 0; r < rows; ++r) {
      const int8_t* wrow = w + (i0 + r) * ldw;
      uint32_t sum = 0;  // wraps, as the sums do
      for (int64_t kk = 0; kk < k; ++kk) {
        wp[static_cast<size_t>((kk / 4) * kDotRows * 4 + r * 4 + kk % 4)] = wrow[kk];
        sum += static_cast<uint32_t>(static_cast<int32_t>(wrow[kk]));
      }
      row_sums[r] = static_cast<int32_t>(sum);
    }
    for (int64_t j0 = 0; j0 < n; j0 += kDotCols)
      dot_tile(wp.data(), xp.data() + j0 * 4, quads, np, row_sums, x_zero, rows,
               std::min(kDotCols, n - j0), c + i0 * ldc + j0, ldc);
  }
}
#endif

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
#if SOD2_ARM_DOT
  if (has_dotprod()) {
    igemm_dot(m, n, k, w, ldw, x, ldx, x_zero, c, ldc);
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
#if SOD2_ARM_DOT
  if (has_dotprod()) return "arm64 dot product (SDOT)";
#endif
  return "portable";
}

}  // namespace sod2::rt::quant

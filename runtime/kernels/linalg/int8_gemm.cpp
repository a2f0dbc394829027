#include "runtime/kernels/linalg/int8_gemm.h"

#include <algorithm>
#include <type_traits>

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

constexpr int64_t kDotRows = 8;  // rows of C per micro-tile: two vectors of four rows' quads
constexpr int64_t kDotCols = 8;  // columns of C per micro-tile: two vectors of four
// Fewer rows of C than this run the portable loop: B is packed per call, which a row or two of
// multiply-adds does not repay (a decoder's single token through a MatMul).
constexpr int64_t kDotMinRows = 4;

// C rows [i0, i0 + 8) (`rows` of them), columns [j0, j0 + 8) (`cols`), from A's rows packed as
// [quad][row][4] (ap) and B packed as [quad][column][4] (bp, np columns a quad), less
// row_corr[r] + col_corr[j]: SDOT's lane form multiplies four columns' quads by one row's quad.
SOD2_TARGET_DOTPROD void dot_tile(const int8_t* ap, const int8_t* bp, int64_t quads, int64_t np,
                                  const int32_t* row_corr, const int32_t* col_corr, int64_t rows,
                                  int64_t cols, int32_t* c, int64_t ldc) {
  int32x4_t acc[kDotRows][2];
  for (auto& r : acc) r[0] = r[1] = vdupq_n_s32(0);
  for (int64_t q = 0; q < quads; ++q) {
    const int8x16_t b0 = vld1q_s8(bp + q * np * 4), b1 = vld1q_s8(bp + q * np * 4 + 16);
    const int8x16_t a0 = vld1q_s8(ap + q * 32), a1 = vld1q_s8(ap + q * 32 + 16);
#define SOD2_DOT_ROW(r, a, lane)                       \
  acc[r][0] = vdotq_laneq_s32(acc[r][0], b0, a, lane); \
  acc[r][1] = vdotq_laneq_s32(acc[r][1], b1, a, lane);
    SOD2_DOT_ROW(0, a0, 0)
    SOD2_DOT_ROW(1, a0, 1)
    SOD2_DOT_ROW(2, a0, 2)
    SOD2_DOT_ROW(3, a0, 3)
    SOD2_DOT_ROW(4, a1, 0)
    SOD2_DOT_ROW(5, a1, 1)
    SOD2_DOT_ROW(6, a1, 2)
    SOD2_DOT_ROW(7, a1, 3)
#undef SOD2_DOT_ROW
  }
  // Wrapping subtractions: the sums are modulo 2^32 as ONNX's int32, and as SDOT's.
  const int32x4_t cc0 = vld1q_s32(col_corr), cc1 = vld1q_s32(col_corr + 4);
  for (int64_t r = 0; r < rows; ++r) {
    const int32x4_t rc = vdupq_n_s32(row_corr[r]);
    int32_t out[kDotCols];
    vst1q_s32(out, vsubq_s32(vsubq_s32(acc[r][0], rc), cc0));
    vst1q_s32(out + 4, vsubq_s32(vsubq_s32(acc[r][1], rc), cc1));
    std::copy(out, out + cols, c + r * ldc);
  }
}

// B's rows [0, k) of n columns (row kk at b + kk * ldb) as quads of rows per column:
// out[(kk / 4) * np * 4 + j * 4 + kk % 4] = B[kk][j], zero past k and n (out holds quads * np * 4
// bytes). Four rows and 16 columns at a time by byte and halfword zips.
SOD2_TARGET_DOTPROD void pack_quads(const int8_t* b, int64_t ldb, int64_t k, int64_t n, int64_t np,
                                    int8_t* out) {
  const int64_t quads = (k + 3) / 4;
  std::fill(out, out + quads * np * 4, int8_t{0});
  for (int64_t q = 0; q < quads; ++q) {
    int8_t* dst = out + q * np * 4;
    int64_t j = 0;
    if (4 * q + 3 < k) {
      const int8_t* r0 = b + (4 * q) * ldb;
      const int8_t* r1 = r0 + ldb;
      const int8_t* r2 = r1 + ldb;
      const int8_t* r3 = r2 + ldb;
      for (; j + 16 <= n; j += 16) {
        const int8x16_t a0 = vld1q_s8(r0 + j), a1 = vld1q_s8(r1 + j);
        const int8x16_t a2 = vld1q_s8(r2 + j), a3 = vld1q_s8(r3 + j);
        const int16x8_t lo01 = vreinterpretq_s16_s8(vzip1q_s8(a0, a1));
        const int16x8_t hi01 = vreinterpretq_s16_s8(vzip2q_s8(a0, a1));
        const int16x8_t lo23 = vreinterpretq_s16_s8(vzip1q_s8(a2, a3));
        const int16x8_t hi23 = vreinterpretq_s16_s8(vzip2q_s8(a2, a3));
        int8_t* d = dst + j * 4;
        vst1q_s8(d, vreinterpretq_s8_s16(vzip1q_s16(lo01, lo23)));
        vst1q_s8(d + 16, vreinterpretq_s8_s16(vzip2q_s16(lo01, lo23)));
        vst1q_s8(d + 32, vreinterpretq_s8_s16(vzip1q_s16(hi01, hi23)));
        vst1q_s8(d + 48, vreinterpretq_s8_s16(vzip2q_s16(hi01, hi23)));
      }
    }
    for (int64_t kk = 4 * q; kk < std::min(k, 4 * q + 4); ++kk) {
      const int8_t* row = b + kk * ldb;
      for (int64_t jj = j; jj < n; ++jj) dst[jj * 4 + kk % 4] = row[jj];
    }
  }
}

// a * b modulo 2^32.
int32_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

// C = sum over kk < k of (A[i][kk] - a_zero) * (B[kk][j] - b_zero), exact modulo 2^32, on SDOT:
// A (m x k, row i at a + i * lda) int8, or uint8 moved to int8 (v ^ 0x80 = v - 128, and its zero
// point with it); B int8 (k x n, row kk at b + kk * ldb). Expanded, the sum is A.B less
// b_zero * (A's row sums) less a_zero * (B's column sums) plus k * a_zero * b_zero. B is packed
// once per call into quads of k per column, A a block of 8 rows at a time.
template <class TA>
void igemm_dot(int64_t m, int64_t n, int64_t k, const TA* a, int64_t lda, int32_t a_zero,
               const int8_t* b, int64_t ldb, int32_t b_zero, int32_t* c, int64_t ldc) {
  constexpr bool kFlip = std::is_same_v<TA, uint8_t>;
  if constexpr (kFlip) a_zero -= 128;
  const int64_t quads = (k + 3) / 4, np = (n + kDotCols - 1) / kDotCols * kDotCols;
  // Per thread, grown to the largest call and reused: no allocation in the steady state.
  thread_local std::vector<int8_t> bp, ap;
  thread_local std::vector<int32_t> col_corr;
  bp.resize(static_cast<size_t>(quads * np * 4));
  ap.resize(static_cast<size_t>(quads * kDotRows * 4));
  col_corr.assign(static_cast<size_t>(np), 0);
  pack_quads(b, ldb, k, n, np, bp.data());
  for (int64_t kk = 0; kk < k && a_zero != 0; ++kk) {
    const int8_t* row = b + kk * ldb;
    for (int64_t j = 0; j < n; ++j) {  // wrapping, as the sums
      int32_t& sum = col_corr[static_cast<size_t>(j)];
      sum = static_cast<int32_t>(static_cast<uint32_t>(sum) +
                                 static_cast<uint32_t>(static_cast<int32_t>(row[j])));
    }
  }
  for (auto& v : col_corr) v = wrap_mul(a_zero, v);
  int32_t row_corr[kDotRows];
  for (int64_t i0 = 0; i0 < m; i0 += kDotRows) {
    const int64_t rows = std::min(kDotRows, m - i0);
    std::fill(ap.begin(), ap.end(), int8_t{0});
    for (int64_t r = 0; r < rows; ++r) {
      const TA* arow = a + (i0 + r) * lda;
      uint32_t sum = 0;  // wraps, as the sums do
      for (int64_t kk = 0; kk < k; ++kk) {
        const auto v = static_cast<int8_t>(kFlip ? arow[kk] ^ 0x80 : arow[kk]);
        ap[static_cast<size_t>((kk / 4) * kDotRows * 4 + r * 4 + kk % 4)] = v;
        sum += static_cast<uint32_t>(static_cast<int32_t>(v));
      }
      row_corr[r] =
          static_cast<int32_t>(static_cast<uint32_t>(wrap_mul(b_zero, sum)) -
                               static_cast<uint32_t>(wrap_mul(k, wrap_mul(a_zero, b_zero))));
    }
    for (int64_t j0 = 0; j0 < n; j0 += kDotCols)
      dot_tile(ap.data(), bp.data() + j0 * 4, quads, np, row_corr, col_corr.data() + j0, rows,
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
  if (has_dotprod() && m >= kDotMinRows) {
    igemm_dot(m, n, k, w, ldw, 0, x, ldx, x_zero, c, ldc);
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
#if SOD2_ARM_DOT
  if (has_dotprod() && m >= kDotMinRows) {
    igemm_dot(m, n, k, a, lda, a_zero, b, ldb, 0, c, ldc);
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
#if SOD2_ARM_DOT
  if (has_dotprod() && m >= kDotMinRows) {
    igemm_dot(m, n, k, a, lda, a_zero, b, ldb, 0, c, ldc);
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

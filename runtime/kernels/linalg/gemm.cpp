#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/gemm_builtin.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#if defined(SOD2_GEMM_ONEDNN)
#include <dnnl.h>
#include <omp.h>
#elif defined(SOD2_GEMM_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#elif !defined(SOD2_GEMM_BUILTIN)
#error "define SOD2_GEMM_ONEDNN, SOD2_GEMM_OPENBLAS or SOD2_GEMM_BUILTIN"
#endif

namespace sod2::rt {
namespace {

// The work (float multiply-adds) one more thread must get to be worth waking: about 5 us. The
// pool's workers spin between the kernels of a run (thread_pool.h), so handing them work costs
// well under a microsecond; it was 2e6 when every hand-over was a futex wake.
constexpr double kMacsPerPart = 0.5e6;
constexpr int64_t kRowsForFullReuse = 8;

// C = beta * C, for k == 0 (libraries disagree on whether they touch C then).
void scale_c(const GemmArgs& g) {
  for (int64_t i = 0; i < g.m; ++i) {
    float* row = g.c + i * g.ldc;
    if (g.beta == 0.f) {
      std::memset(row, 0, static_cast<size_t>(g.n) * sizeof(float));
    } else {
      for (int64_t j = 0; j < g.n; ++j) row[j] *= g.beta;
    }
  }
}

}  // namespace

const char* gemm_backend_name() {
#if defined(SOD2_GEMM_ONEDNN)
  return "oneDNN";
#elif defined(SOD2_GEMM_OPENBLAS)
  return "OpenBLAS";
#else
  return "builtin";
#endif
}

void sgemm_serial(const GemmArgs& g) {
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k <= 0) return scale_c(g);
#if defined(SOD2_GEMM_ONEDNN)
  gemm_library_single_thread_here();
  dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b,
             g.ldb, g.beta, g.c, g.ldc);
#elif defined(SOD2_GEMM_BUILTIN)
  sgemm_builtin(g);
#else
  // OpenBLAS's thread count is global: one thread, set once, so concurrent calls from our pool's
  // threads each run on their own thread.
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
              g.trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(g.m), static_cast<int>(g.n),
              static_cast<int>(g.k), g.alpha, g.a, static_cast<int>(g.lda), g.b,
              static_cast<int>(g.ldb), g.beta, g.c, static_cast<int>(g.ldc));
#endif
}

void gemm_library_single_thread_here() {
#if defined(SOD2_GEMM_ONEDNN)
  thread_local bool pinned = false;
  if (!pinned) {
    omp_set_num_threads(1);
    pinned = true;
  }
#endif
}

void gemm_library_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    float a[64], b[64], c[64];
    for (int i = 0; i < 64; ++i) a[i] = b[i] = 1.f;
    GemmArgs g;
    g.m = g.n = g.k = 8;
    g.a = a;
    g.b = b;
    g.c = c;
    g.lda = g.ldb = g.ldc = 8;
    sgemm_serial(g);
  });
}

int64_t parallel_parts(const ThreadPool& pool, double macs) {
  const int64_t threads = pool.num_threads();
  if (threads <= 1 || macs < 2 * kMacsPerPart) return 1;
  return std::clamp<int64_t>(static_cast<int64_t>(macs / kMacsPerPart), 1, threads);
}

void sgemm(ThreadPool& pool, const GemmArgs& g, const TileFn* on_tile) {
  if (g.m <= 0 || g.n <= 0) return;
  // With few rows of A each element of B is used few times: the GEMM streams B at memory speed,
  // not at the FMA units', so a multiply-add costs more time than the kMacsPerPart rule assumes.
  const double reuse = static_cast<double>(std::min<int64_t>(g.m, kRowsForFullReuse));
  int64_t parts = parallel_parts(pool, static_cast<double>(g.m) * g.n * std::max<int64_t>(g.k, 1) *
                                           (kRowsForFullReuse / reuse));
  // An epilogue runs on each part's tile of C once its GEMM is done. Smaller tiles, to find C
  // still in L2, measured slower: each call packs its operands again, and 512 KiB tiles cost
  // 10-20% on outputs of 4.8 to 38 MB (and more where the tiles did not divide among the threads).
  if (parts <= 1) {
    sgemm_serial(g);
    if (on_tile) (*on_tile)(0, g.m, 0, g.n);
    return;
  }
  // Split the longer side; column tiles stay multiples of 16 (a vector of floats or more), row
  // tiles multiples of 4.
  const bool split_n = g.n >= g.m;
  const int64_t len = split_n ? g.n : g.m;
  const int64_t align = split_n ? 16 : 4;
  int64_t step = (len + parts - 1) / parts;
  step = std::max(align, (step + align - 1) / align * align);
  const int64_t tiles = (len + step - 1) / step;
  pool.parallel_for(tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t lo = t * step, hi = std::min(len, lo + step);
      GemmArgs s = g;
      if (split_n) {
        s.n = hi - lo;
        s.b = g.trans_b ? g.b + lo * g.ldb : g.b + lo;
        s.c = g.c + lo;
      } else {
        s.m = hi - lo;
        s.a = g.trans_a ? g.a + lo : g.a + lo * g.lda;
        s.c = g.c + lo * g.ldc;
      }
      sgemm_serial(s);
      if (on_tile) split_n ? (*on_tile)(0, g.m, lo, hi) : (*on_tile)(lo, hi, 0, g.n);
    }
  });
}

}  // namespace sod2::rt

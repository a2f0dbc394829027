// Single-precision GEMM for the linalg kernels: a thin wrapper over the kernel library chosen at
// build time (oneDNN's dnnl_sgemm on x86-64, OpenBLAS's cblas_sgemm elsewhere; see the README's
// measurements; a portable built-in sgemm where neither exists), plus the tiling that spreads one
// GEMM over our ThreadPool.
//
// The library always runs single-threaded on the calling thread: parallelism is ours (tiles in
// ctx.pool()), so --threads is the only knob and nothing oversubscribes the cores.
#pragma once

#include <cstdint>

#include "runtime/threads/thread_pool.h"

namespace sod2::rt {

// Row-major C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C.
struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.f;
  float* c = nullptr;
  int64_t ldc = 0;
};

// A non-owning callable `void(int64_t m0, int64_t m1, int64_t n0, int64_t n1)`: told when the
// tile [m0,m1) x [n0,n1) of C is final, on the thread that computed it (for a fused epilogue).
class TileFn {
 public:
  template <typename F>
  TileFn(const F& f)  // NOLINT: implicit on purpose, like RangeFn
      : obj_(&f), call_([](const void* o, int64_t a, int64_t b, int64_t c, int64_t d) {
          (*static_cast<const F*>(o))(a, b, c, d);
        }) {}
  void operator()(int64_t m0, int64_t m1, int64_t n0, int64_t n1) const {
    call_(obj_, m0, m1, n0, n1);
  }

 private:
  const void* obj_;
  void (*call_)(const void*, int64_t, int64_t, int64_t, int64_t);
};

// On the calling thread only. Any of m, n, k may be 0.
void sgemm_serial(const GemmArgs& g);

// Splits C into tiles over the pool when the work pays for waking threads; calls on_tile (if
// given) for each finished tile. Must not be called from inside a parallel_for.
void sgemm(ThreadPool& pool, const GemmArgs& g, const TileFn* on_tile = nullptr);

// How many parallel parts a job of `macs` multiply-adds is worth (1 = run inline): waking a
// worker costs ~20 us, about 2M multiply-adds of GEMM time.
int64_t parallel_parts(const ThreadPool& pool, double macs);

// Initialises the GEMM library once per process (oneDNN generates all its sgemm kernels on
// first use: about 2.5 MiB of JIT code and page faults in its 40 MiB library). Kernels that
// call sgemm do it when they are created, so the cost lands in session creation, not in the
// first inference.
void gemm_library_init();

// Makes the GEMM library run single-threaded when called from this thread (oneDNN's OpenMP team
// size is per thread): our pool's threads each run their own part, and a library team of its own
// would oversubscribe the cores. Once per thread; cheap after that.
void gemm_library_single_thread_here();

// The name of the library behind sgemm_serial ("oneDNN", "OpenBLAS", "builtin"), for logs.
const char* gemm_backend_name();

}  // namespace sod2::rt

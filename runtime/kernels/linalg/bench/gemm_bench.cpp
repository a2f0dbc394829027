// Standalone timing of the GEMM candidates for the linalg kernels (not built by CMake, not a
// test). Build by hand:
//   g++ -O3 -march=native -std=c++20 gemm_bench.cpp $(pkg-config --cflags --libs openblas) \
//       -ldnnl -fopenmp -o /tmp/gemm_bench
// Prints best-of-N milliseconds and GFLOP/s for sgemm shapes and a 3x3 conv done two ways.
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

extern "C" void openblas_set_num_threads(int);

static double best_ms(const std::function<void()>& f, int reps = 30) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

// Runs fn(part, parts) on `threads` std::threads (the way our pool would call a 1-thread GEMM).
static void split(int threads, const std::function<void(int, int)>& fn) {
  if (threads == 1) return fn(0, 1);
  std::vector<std::thread> ts;
  for (int t = 1; t < threads; ++t) ts.emplace_back(fn, t, threads);
  fn(0, threads);
  for (auto& t : ts) t.join();
}

static void report(const char* what, double ms, double flops) {
  std::printf("%-44s %8.3f ms %8.1f GFLOP/s\n", what, ms, flops / ms * 1e-6);
}

int main() {
  openblas_set_num_threads(1);
  struct S {
    int m, k, n;
  };
  for (S s : {S{128, 128, 128}, S{512, 128, 512}, S{16, 512, 128}, S{64, 576, 3136}}) {
    std::vector<float> a(size_t(s.m) * s.k, 0.5f), b(size_t(s.k) * s.n, 0.25f),
        c(size_t(s.m) * s.n);
    const double fl = 2.0 * s.m * s.n * s.k;
    std::printf("M=%d K=%d N=%d\n", s.m, s.k, s.n);
    for (int th : {1, 2}) {
      // OpenBLAS single-threaded, N split across our threads (columns stay contiguous per row).
      double ms = best_ms([&] {
        split(th, [&](int p, int parts) {
          int n0 = s.n * p / parts, n1 = s.n * (p + 1) / parts;
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, n1 - n0, s.k, 1.f, a.data(),
                      s.k, b.data() + n0, s.n, 0.f, c.data() + n0, s.n);
        });
      });
      char buf[64];
      std::snprintf(buf, sizeof buf, "  openblas 1t x %d split", th);
      report(buf, ms, fl);
      ms = best_ms([&] {
        split(th, [&](int p, int parts) {
          omp_set_num_threads(1);
          int n0 = s.n * p / parts, n1 = s.n * (p + 1) / parts;
          dnnl_sgemm('N', 'N', s.m, n1 - n0, s.k, 1.f, a.data(), s.k, b.data() + n0, s.n, 0.f,
                     c.data() + n0, s.n);
        });
      });
      std::snprintf(buf, sizeof buf, "  dnnl_sgemm 1t x %d split", th);
      report(buf, ms, fl);
      omp_set_num_threads(th);
      ms = best_ms([&] {
        dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.f, a.data(), s.k, b.data(), s.n, 0.f, c.data(), s.n);
      });
      std::snprintf(buf, sizeof buf, "  dnnl_sgemm omp %d", th);
      report(buf, ms, fl);
    }
  }

  // 3x3 conv 64->64 on 56x56, pad 1: im2col + sgemm vs a direct loop (output-row vectorised).
  const int C = 64, H = 56, W = 56, K = 64;
  std::vector<float> x(size_t(C) * H * W, 0.5f), w(size_t(K) * C * 9, 0.1f), y(size_t(K) * H * W);
  std::vector<float> col(size_t(C) * 9 * H * W);
  const double fl = 2.0 * K * C * 9 * H * W;
  auto im2col = [&] {
    for (int c = 0; c < C; ++c)
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
          float* dst = col.data() + (size_t(c) * 9 + ky * 3 + kx) * H * W;
          for (int oy = 0; oy < H; ++oy) {
            int iy = oy + ky - 1;
            for (int ox = 0; ox < W; ++ox) {
              int ix = ox + kx - 1;
              dst[oy * W + ox] =
                  (iy >= 0 && iy < H && ix >= 0 && ix < W) ? x[(size_t(c) * H + iy) * W + ix] : 0.f;
            }
          }
        }
  };
  report("conv3x3 im2col only", best_ms(im2col), fl);
  report("conv3x3 im2col+openblas 1t", best_ms([&] {
           im2col();
           cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, K, H * W, C * 9, 1.f, w.data(),
                       C * 9, col.data(), H * W, 0.f, y.data(), H * W);
         }),
         fl);
  report("conv3x3 direct 1t",
         best_ms(
             [&] {
               std::fill(y.begin(), y.end(), 0.f);
               for (int k = 0; k < K; ++k)
                 for (int c = 0; c < C; ++c)
                   for (int ky = 0; ky < 3; ++ky)
                     for (int kx = 0; kx < 3; ++kx) {
                       float wv = w[((size_t(k) * C + c) * 3 + ky) * 3 + kx];
                       for (int oy = 0; oy < H; ++oy) {
                         int iy = oy + ky - 1;
                         if (iy < 0 || iy >= H) continue;
                         float* yr = y.data() + (size_t(k) * H + oy) * W;
                         const float* xr = x.data() + (size_t(c) * H + iy) * W;
                         int x0 = std::max(0, 1 - kx), x1 = std::min(W, W + 1 - kx);
                         for (int ox = x0; ox < x1; ++ox) yr[ox] += wv * xr[ox + kx - 1];
                       }
                     }
             },
             5),
         fl);
  // Depthwise 3x3 on 64 channels: direct vs im2col + per-channel gemv.
  const double dfl = 2.0 * C * 9 * H * W;
  report("depthwise3x3 direct 1t", best_ms([&] {
           std::fill(y.begin(), y.end(), 0.f);
           for (int c = 0; c < C; ++c)
             for (int ky = 0; ky < 3; ++ky)
               for (int kx = 0; kx < 3; ++kx) {
                 float wv = w[size_t(c) * 9 + ky * 3 + kx];
                 for (int oy = 0; oy < H; ++oy) {
                   int iy = oy + ky - 1;
                   if (iy < 0 || iy >= H) continue;
                   float* yr = y.data() + (size_t(c) * H + oy) * W;
                   const float* xr = x.data() + (size_t(c) * H + iy) * W;
                   int x0 = std::max(0, 1 - kx), x1 = std::min(W, W + 1 - kx);
                   for (int ox = x0; ox < x1; ++ox) yr[ox] += wv * xr[ox + kx - 1];
                 }
               }
         }),
         dfl);
  report("depthwise3x3 im2col+sgemv 1t", best_ms([&] {
           im2col();
           for (int c = 0; c < C; ++c)
             cblas_sgemv(CblasRowMajor, CblasTrans, 9, H * W, 1.f,
                         col.data() + size_t(c) * 9 * H * W, H * W, w.data() + c * 9, 1, 0.f,
                         y.data() + size_t(c) * H * W, 1);
         }),
         dfl);
}

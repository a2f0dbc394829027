// The FP32 multiply-add peak of the machine it runs on, measured: each thread keeps independent
// chains of vector multiply-adds in registers (no memory traffic), at each SIMD level the kernels
// may use (runtime/kernels/linalg/simd.h). `make bench` and `make bench-corpus` divide achieved
// GOP/s by it for their roofline column (tests/bench/ort_compare.js), so "% of peak" is this
// machine's: the vCPUs these benchmarks meet differ (a Zen 5 guest runs two 512-bit FMAs a cycle,
// a Zen 4 guest one, about 221 against 112 GFLOP/s a core), and a figure from a spec sheet would
// be off by 2x on one of them.
//
//   fp32_peak [--threads T] [--json]
//
// Prints each level's GFLOP/s at one thread and at T (default: the hardware threads); with
// --json one object whose "gflops" is the best level's at T threads.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "runtime/kernels/linalg/simd.h"
#include "runtime/threads/thread_pool.h"

namespace {

using namespace sod2::rt;

// Independent accumulator chains per thread: enough to cover the multiply-add latency on two
// pipes (4 cycles x 2), few enough for AVX2's 16 registers with the two operands.
constexpr int kChains = 12;

// Multiply-adds of `iters` rounds over the chains; returns a lane sum so nothing is dropped.
template <int VL>
SOD2_SIMD_INLINE float chains(int64_t iters) {
  using V = simd::Vec<VL>;
  V acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = simd::splat<VL>(1.f + 0.001f * static_cast<float>(j));
  // Volatile operands: the compiler cannot fold the loop into a closed form.
  volatile float bv = 0.9999999f, cv = 1e-7f;
  const V b = simd::splat<VL>(bv), c = simd::splat<VL>(cv);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kChains; ++j) acc[j] = acc[j] * b + c;
  }
  V sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum += acc[j];
  return simd::reduce_add<VL>(sum);
}

#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 float chains_avx512(int64_t iters) { return chains<16>(iters); }
SOD2_TARGET_AVX2 float chains_avx2(int64_t iters) { return chains<8>(iters); }
#endif
float chains_base(int64_t iters) { return chains<4>(iters); }

struct Level {
  const char* name;
  int lanes;
  float (*run)(int64_t);
};

std::vector<Level> levels() {
  std::vector<Level> out;
#if SOD2_SIMD_X86
  const simd::Level l = simd::simd_level();
  if (l == simd::Level::kAvx512) out.push_back({"AVX-512", 16, chains_avx512});
  if (l >= simd::Level::kAvx2) out.push_back({"AVX2+FMA", 8, chains_avx2});
  out.push_back({"SSE2 (no FMA)", 4, chains_base});
#else
  out.push_back({"NEON", 4, chains_base});
#endif
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// GFLOP/s of `threads` threads each running `iters` rounds (a multiply-add counts 2), best of 3.
double measure(ThreadPool& pool, const Level& level, int threads, int64_t iters) {
  std::vector<float> sink(static_cast<size_t>(threads));
  double best = 0.0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(threads, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) sink[static_cast<size_t>(i)] = level.run(iters);
    });
    const double s = seconds_since(t0);
    const double flop = 2.0 * static_cast<double>(iters) * kChains * level.lanes * threads;
    best = std::max(best, flop / s * 1e-9);
  }
  volatile float keep = sink[0];
  (void)keep;
  return best;
}

// Rounds that take about 0.2 s on one thread.
int64_t calibrate(const Level& level) {
  int64_t iters = 1 << 16;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile float keep = level.run(iters);
    (void)keep;
    const double s = seconds_since(t0);
    if (s > 0.05 || iters > (int64_t{1} << 40)) return static_cast<int64_t>(iters * (0.2 / s)) + 1;
    iters *= 4;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
      if (threads < 1 || threads > 1024) {
        std::fprintf(stderr, "fp32_peak: --threads takes 1..1024\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: fp32_peak [--threads T] [--json]\n");
      return 2;
    }
  }
  ThreadPool pool(threads);
  std::string rows;
  double best = 0.0, best_one = 0.0;
  const char* best_name = "";
  for (const Level& level : levels()) {
    const int64_t iters = calibrate(level);
    const double one = measure(pool, level, 1, iters);
    const double all = measure(pool, level, threads, iters);
    if (all > best) {
      best = all;
      best_one = one;
      best_name = level.name;
    }
    char line[160];
    if (json)
      std::snprintf(line, sizeof line,
                    "%s{\"level\": \"%s\", \"gflops_1_thread\": %.1f, \"gflops\": %.1f}",
                    rows.empty() ? "" : ", ", level.name, one, all);
    else
      std::snprintf(line, sizeof line, "%-14s %8.1f GFLOP/s at 1 thread %8.1f at %d\n", level.name,
                    one, all, threads);
    rows += line;
  }
  if (json)
    std::printf(
        "{\"threads\": %d, \"level\": \"%s\", \"gflops_1_thread\": %.1f, \"gflops\": %.1f, "
        "\"levels\": [%s]}\n",
        threads, best_name, best_one, best, rows.c_str());
  else
    std::printf("%sFP32 peak: %.1f GFLOP/s at %d threads (%s)\n", rows.c_str(), best, threads,
                best_name);
  return 0;
}

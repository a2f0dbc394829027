// Standalone timing of ResNet-18/50's conv shapes at batch 1 and 8 (not built by CMake, not a
// test): the NCHW paths (conv_forward) against the Conv kernel, which takes the blocked oneDNN
// path where it applies (conv_blocked.cpp). Best of 30, caches warm. Build after `make build`:
//   g++ -O2 -std=c++20 -I. runtime/kernels/linalg/bench/conv_bench.cpp \
//       build/lib/libsod2_kernels_linalg.a build/lib/libsod2_runtime_base.a -ldnnl -fopenmp \
//       -o /tmp/conv_bench && /tmp/conv_bench [THREADS] [PEAK_GFLOPS]
// Prints a Markdown table: ms, GFLOP/s and % of FP32 peak at THREADS (PEAK_GFLOPS: what
// build/bin/fp32_peak measures on the machine; 220.5 a thread when not given).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/linalg/bench/bench_memory.h"
#include "runtime/kernels/linalg/bench/bench_timing.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/geometry.h"
#include "tests/runtime/kernel_harness.h"
using namespace sod2::rt;
using sod2::Expected;
int main(int argc, char** argv) {
  KernelRegistry r;
  register_linalg_kernels(r);
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  const double peak = argc > 2 ? atof(argv[2]) : 220.5 * threads;
  struct C {
    const char* name;
    int64_t c, h, m, k, s;
  };
  std::vector<C> cases = {
      {"3x3 64 @56", 64, 56, 64, 3, 1},           {"3x3 128 @28", 128, 28, 128, 3, 1},
      {"3x3 256 @14", 256, 14, 256, 3, 1},        {"3x3 512 @7", 512, 7, 512, 3, 1},
      {"3x3 64->128 s2", 64, 56, 128, 3, 2},      {"3x3 256->512 s2", 256, 14, 512, 3, 2},
      {"1x1 64->256 @56", 64, 56, 256, 1, 1},     {"1x1 256->64 @56", 256, 56, 64, 1, 1},
      {"1x1 512->128 @28", 512, 28, 128, 1, 1},   {"1x1 256->1024 @14", 256, 14, 1024, 1, 1},
      {"1x1 1024->256 @14", 1024, 14, 256, 1, 1}, {"1x1 2048->512 @7", 2048, 7, 512, 1, 1},
      {"1x1 512->2048 @7", 512, 7, 2048, 1, 1},   {"1x1 256->512 s2", 256, 28, 512, 1, 2}};
  ThreadPool pool(threads);
  printf(
      "| conv | batch | NCHW paths ms | GFLOP/s | %% peak | blocked ms | GFLOP/s | %% peak "
      "|\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int64_t n : {1, 8})
    for (auto& c : cases) {
      const int64_t pad = c.k / 2, o = (c.h + 2 * pad - c.k) / c.s + 1;
      HostTensor x = filled({n, c.c, c.h, c.h}), w = filled({c.m, c.c, c.k, c.k});
      Attrs a;
      a.set("strides", testing::attr_ints({c.s, c.s}));
      a.set("pads", testing::attr_ints({pad, pad, pad, pad}));
      std::vector<const HostTensor*> in = {&x, &w};
      NodeInfo info = testing::node_info("Conv", 17, in, 1, a);
      info.input_constant = {false, true};
      auto k = r.create(info);
      std::vector<Tensor> views = {x.view(), w.view()};
      std::vector<const Tensor*> ptrs = {&views[0], &views[1]};
      ReusingAllocator alloc;
      KernelContext ctx(ptrs, &alloc, &pool);
      auto wa = read_window_attrs(a, "Conv");
      auto s = conv_shape(&views[0], &views[1], nullptr, wa.value(), 1, "Conv");
      HostTensor y(DType::kFloat, s.value().out);
      // The executor's scratch grows until a run fits; so does the bench's.
      auto run = [&](auto&& f) {
        for (int tries = 0; tries < 32; ++tries) {
          alloc.reset();
          if (f().ok()) return;
          alloc.grow();
        }
      };
      run([&] {
        return conv_forward(ctx, s.value(), x.data<float>(), w.data<float>(), y.data<float>(),
                            EpilogueRun{});
      });
      const double old_ms = best_of([&] {
        run([&] {
          return conv_forward(ctx, s.value(), x.data<float>(), w.data<float>(), y.data<float>(),
                              EpilogueRun{});
        });
      });
      run([&] { return k.value()->run(ctx); });
      const double new_ms = best_of([&] { run([&] { return k.value()->run(ctx); }); });
      const double flop = 2.0 * n * c.m * c.c * o * o * c.k * c.k;
      printf("| %s | %ld | %.3f | %.0f | %.0f%% | %.3f | %.0f | %.0f%% |\n", c.name, (long)n,
             old_ms, flop / old_ms / 1e6, flop / old_ms / 1e6 / peak * 100, new_ms,
             flop / new_ms / 1e6, flop / new_ms / 1e6 / peak * 100);
    }
}

// Standalone timing of MobileNetV3-Large's, EfficientNet-B0's, MobileNetV2's and ConvNeXt's
// depthwise shapes (224x224) at batch 1 and 8 (not built by CMake, not a test): the row path
// (depthwise_forward) against the channel-lane path (depthwise_lanes_forward), the one the Conv
// kernel picks marked.
// Best of 30, caches warm. Build after `make build`:
//   g++ -O2 -std=c++20 -I. runtime/kernels/linalg/bench/dw_bench.cpp \
//       build/lib/libsod2_kernels_linalg.a build/lib/libsod2_runtime_base.a -ldnnl -fopenmp \
//       -o /tmp/dw_bench && /tmp/dw_bench [THREADS [CHANNELS]]
// CHANNELS keeps only the shapes with that many channels (for a profiler).
// Prints a Markdown table: ms and GB/s of input + output traffic for each path.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/kernels/linalg/bench/bench_memory.h"
#include "runtime/kernels/linalg/bench/bench_timing.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/geometry.h"
#include "tests/runtime/kernel_harness.h"
using namespace sod2::rt;
int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  const int64_t only = argc > 2 ? atoll(argv[2]) : 0;
  struct C {
    int64_t c, h, k, s;
  };
  // clang-format off
  const std::vector<C> cases = {
      // MobileNetV3-Large
      {16, 112, 3, 1}, {64, 112, 3, 2}, {72, 56, 3, 1}, {72, 56, 5, 2}, {120, 28, 5, 1},
      {240, 28, 3, 2}, {200, 14, 3, 1}, {480, 14, 3, 1}, {672, 14, 3, 1}, {672, 14, 5, 2},
      {960, 7, 5, 1},
      // EfficientNet-B0
      {32, 112, 3, 1}, {96, 112, 3, 2}, {144, 56, 3, 1}, {144, 56, 5, 2}, {240, 28, 5, 1},
      {480, 14, 5, 1}, {672, 14, 5, 1}, {1152, 7, 5, 1}, {1152, 7, 3, 1},
      // MobileNetV2 and ConvNeXt-Tiny
      {192, 28, 3, 1}, {576, 14, 3, 1}, {96, 56, 7, 1}, {192, 28, 7, 1}};
  // clang-format on
  ThreadPool pool(threads);
  printf(
      "| depthwise | batch | rows ms | GB/s | lanes ms | GB/s | picked |\n"
      "|---|---:|---:|---:|---:|---:|---|\n");
  for (int64_t n : {1, 8})
    for (const C& c : cases) {
      if (only && c.c != only) continue;
      const int64_t pad = c.k / 2;
      HostTensor x = filled({n, c.c, c.h, c.h}), w = filled({c.c, 1, c.k, c.k});
      Attrs a;
      a.set("strides", testing::attr_ints({c.s, c.s}));
      a.set("pads", testing::attr_ints({pad, pad, pad, pad}));
      a.set("group", testing::attr_int(c.c));
      std::vector<Tensor> views = {x.view(), w.view()};
      std::vector<const Tensor*> ptrs = {&views[0], &views[1]};
      ReusingAllocator alloc;
      KernelContext ctx(ptrs, &alloc, &pool);
      auto wa = read_window_attrs(a, "Conv");
      auto s = conv_shape(&views[0], &views[1], nullptr, wa.value(), c.c, "Conv");
      HostTensor y(DType::kFloat, s.value().out);
      auto run = [&](auto&& f) {
        for (int tries = 0; tries < 32; ++tries) {
          alloc.reset();
          if (f().ok()) return;
          alloc.grow();
        }
      };
      auto rows = [&] {
        return depthwise_forward(ctx, s.value(), x.data<float>(), w.data<float>(), y.data<float>(),
                                 EpilogueRun{});
      };
      auto lanes = [&] {
        return depthwise_lanes_forward(ctx, s.value(), x.data<float>(), w.data<float>(),
                                       y.data<float>(), EpilogueRun{});
      };
      run(rows);
      const double rows_ms = best_of([&] { run(rows); });
      const bool picked = depthwise_lanes_applies(s.value());
      // Any error but scratch running out means the lane path cannot serve the shape.
      bool served = true;
      for (int tries = 0; tries < 32; ++tries) {
        alloc.reset();
        const sod2::Status st = lanes();
        if (st.ok()) break;
        if (st.message().find("depthwise") != std::string::npos) served = false;
        if (!served) break;
        alloc.grow();
      }
      double lanes_ms = 0;
      if (served) lanes_ms = best_of([&] { run(lanes); });
      const double bytes = 4.0 * (x.view().shape.numel() + y.view().shape.numel());
      printf("| %ldch %ldx%ld k%ld s%ld | %ld | %.3f | %.1f | ", (long)c.c, (long)c.h, (long)c.h,
             (long)c.k, (long)c.s, (long)n, rows_ms, bytes / rows_ms / 1e6);
      if (served)
        printf("%.3f | %.1f | %s |\n", lanes_ms, bytes / lanes_ms / 1e6, picked ? "lanes" : "rows");
      else
        printf("- | - | rows |\n");
    }
}

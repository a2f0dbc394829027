// Standalone timing of the linalg kernels as the executor runs them (not built by CMake, not a
// test). Build by hand after building sod2_kernels_linalg in build-linalg:
//   g++ -O2 -std=c++20 -I/work/main kernel_bench.cpp build-linalg/lib/libsod2_kernels_linalg.a \
//       build-linalg/lib/libsod2_runtime_base.a -ldnnl -fopenmp -o /tmp/kernel_bench
// Prints best-of-30 ms and G multiply-adds (or window taps) per second at 1 and 2 threads.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/linalg/bench/bench_memory.h"
#include "tests/runtime/kernel_harness.h"

using namespace sod2::rt;
using sod2::Expected;

static double time_op(const KernelRegistry& r, const char* op, int opset,
                      const std::vector<const HostTensor*>& in, Attrs attrs, int threads) {
  NodeInfo info = testing::node_info(op, opset, in, 1, attrs);
  if (std::string(op).rfind("Fused", 0) == 0) info.domain = "sod2";
  auto k = r.create(info);
  if (!k.ok()) return -1;
  std::vector<Tensor> views;
  for (const HostTensor* t : in) views.push_back(t->view());
  std::vector<const Tensor*> ptrs;
  for (auto& v : views) ptrs.push_back(&v);
  ReusingAllocator alloc;
  alloc.grow();
  ThreadPool pool(threads);
  KernelContext ctx(ptrs, &alloc, &pool);
  double best = 1e30;
  for (int i = 0; i < 30; ++i) {
    alloc.reset();
    auto t0 = std::chrono::steady_clock::now();
    if (!k.value()->run(ctx).ok()) {
      alloc.grow();
      continue;
    }
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

struct Case {
  const char* name;
  const char* op;
  std::vector<Shape> in;
  Attrs attrs;
  double macs;  // multiply-adds (or window taps for pooling), for the rate
};

static Attrs conv_attrs(int64_t group, int64_t stride, int64_t pad, int64_t dims = 2) {
  Attrs a;
  a.set("group", testing::attr_int(group));
  a.set("strides", testing::attr_ints(std::vector<int64_t>(dims, stride)));
  a.set("pads", testing::attr_ints(std::vector<int64_t>(2 * dims, pad)));
  return a;
}

static Attrs pool_attrs(int64_t k, int64_t s, int64_t pad) {
  Attrs a;
  a.set("kernel_shape", testing::attr_ints({k, k}));
  a.set("strides", testing::attr_ints({s, s}));
  a.set("pads", testing::attr_ints({pad, pad, pad, pad}));
  return a;
}

// usage: kernel_bench [FILTER]   (runs the cases whose name contains FILTER)
int main(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  KernelRegistry r;
  register_linalg_kernels(r);
  auto dw = [](const char* name, int64_t n, int64_t c, int64_t h, int64_t k, int64_t s) {
    const int64_t o = (h + 2 * (k / 2) - k) / s + 1;
    return Case{name,
                "Conv",
                {{n, c, h, h}, {c, 1, k, k}},
                conv_attrs(c, s, k / 2),
                double(n) * c * o * o * k * k};
  };
  auto conv = [](const char* name, int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int64_t k,
                 int64_t s) {
    const int64_t oh = (h + 2 * (k / 2) - k) / s + 1, ow = (w + 2 * (k / 2) - k) / s + 1;
    return Case{name,
                "Conv",
                {{n, c, h, w}, {m, c, k, k}},
                conv_attrs(1, s, k / 2),
                double(n) * m * c * oh * ow * k * k};
  };
  std::vector<Case> cases = {
      // dofa_mbv3/max at batch 8, 224: blocks.0 (7x7 s2 on 112), stage 0 (7x7 s1 on 56), ...
      dw("dw7s2 8x96x112", 8, 96, 112, 7, 2),
      dw("dw7s1 8x96x56", 8, 96, 56, 7, 1),
      dw("dw7s1 8x240x14", 8, 240, 14, 7, 1),
      dw("dw7s1 8x480x7", 8, 480, 7, 7, 1),
      dw("dw3s1 8x16x112", 8, 16, 112, 3, 1),
      dw("dw3s2 8x96x112", 8, 96, 112, 3, 2),
      dw("dw3s2 8x48x112", 8, 48, 112, 3, 2),
      dw("dw3s1 8x48x56", 8, 48, 56, 3, 1),
      dw("dw3s1 8x48x64", 8, 48, 64, 3, 1),
      dw("dw3s1 8x48x63", 8, 48, 63, 3, 1),
      dw("dw5s1 8x144x28", 8, 144, 28, 5, 1),
      dw("dw7s1 1x96x40", 1, 96, 40, 7, 1),
      // conformer: depthwise Conv1d k=15 on [8,144,375]; the 1->32 3x3 s2 subsampling conv.
      Case{"dw1d k15 8x144x375",
           "Conv",
           {{8, 144, 375}, {144, 1, 15}},
           conv_attrs(144, 1, 7, 1),
           8.0 * 144 * 375 * 15},
      Case{"sub0 1->32 3x3s2 8x1500x80",
           "Conv",
           {{8, 1, 1500, 80}, {32, 1, 3, 3}},
           conv_attrs(1, 2, 0),
           8.0 * 32 * 749 * 39 * 9},
      Case{"sub2 32->32 3x3s2 8x749x39",
           "Conv",
           {{8, 32, 749, 39}, {32, 32, 3, 3}},
           conv_attrs(1, 2, 0),
           8.0 * 32 * 32 * 374 * 19 * 9},
      conv("conv3x3 64->64 56x56", 1, 64, 56, 56, 64, 3, 1),
      // unet_tiny at batch 1, 64x64: the small-spatial, many-channel end.
      conv("conv3x3 128->128 8x8", 1, 128, 8, 8, 128, 3, 1),
      conv("conv3x3 64->128 8x8", 1, 64, 8, 8, 128, 3, 1),
      conv("conv3x3 128->64 16x16", 1, 128, 16, 16, 64, 3, 1),
      conv("conv3x3 64->64 16x16", 1, 64, 16, 16, 64, 3, 1),
      conv("conv3x3 64->32 32x32", 1, 64, 32, 32, 32, 3, 1),
      conv("stem 3->16 3x3s2 8x224x224", 8, 3, 224, 224, 16, 3, 2),
      conv("conv3x3 16->16 256x256", 1, 16, 256, 256, 16, 3, 1),
      conv("conv3x3 32->64 s2 192x256", 1, 32, 192, 256, 64, 3, 2),
      conv("conv1x1 96->24 8x56x56", 8, 96, 56, 56, 24, 1, 1),
      conv("conv1x1 56->336 8x14x14", 8, 56, 14, 14, 336, 1, 1),
      [] {
        Case c{"fused conv1x1 56->336 8x14x14 hswish",
               "FusedConv",
               {{8, 56, 14, 14}, {336, 56, 1, 1}},
               conv_attrs(1, 1, 0),
               8.0 * 336 * 56 * 196};
        c.attrs.set("activation", testing::attr_string("HardSwish"));
        return c;
      }(),
      conv("conv1x1 16->96 8x112x112", 8, 16, 112, 112, 96, 1, 1),
      Case{"maxpool2x2 1x16x256",
           "MaxPool",
           {{1, 16, 256, 256}},
           pool_attrs(2, 2, 0),
           16.0 * 128 * 128 * 4},
      Case{"maxpool3x3s2 1x64x112",
           "MaxPool",
           {{1, 64, 112, 112}},
           pool_attrs(3, 2, 1),
           64.0 * 56 * 56 * 9},
      Case{"avgpool2x2 1x16x256",
           "AveragePool",
           {{1, 16, 256, 256}},
           pool_attrs(2, 2, 0),
           16.0 * 128 * 128 * 4},
      [] {
        Case c{"resize bilinear 1x32x128x128 x2",
               "Resize",
               {{1, 32, 128, 128}, {0}, {4}},
               {},
               32.0 * 256 * 256};
        c.attrs.set("mode", testing::attr_string("linear"));
        return c;
      }(),
      Case{"matmul attn 8x4x384x32 . 8x4x32x384",
           "MatMul",
           {{8, 4, 384, 32}, {8, 4, 32, 384}},
           {},
           8.0 * 4 * 384 * 384 * 32},
      Case{"matmul attn 8x4x384x384 . 8x4x384x32",
           "MatMul",
           {{8, 4, 384, 384}, {8, 4, 384, 32}},
           {},
           8.0 * 4 * 384 * 384 * 32},
      Case{"matmul 3072x128 . 128x512",
           "MatMul",
           {{8, 384, 128}, {128, 512}},
           {},
           3072.0 * 128 * 512},
  };
  for (const Case& c : cases) {
    if (std::string(c.name).find(filter) == std::string::npos) continue;
    std::vector<HostTensor> ins;
    for (const Shape& s : c.in) ins.push_back(filled(s));
    if (std::string(c.op) == "Resize") {  // scales [1, 1, 2, 2]
      float* sc = ins[2].data<float>();
      sc[0] = sc[1] = 1.f;
      sc[2] = sc[3] = 2.f;
    }
    std::vector<const HostTensor*> ptrs;
    for (auto& t : ins) ptrs.push_back(&t);
    for (int th : {1, 2}) {
      const double ms = time_op(r, c.op, 13, ptrs, c.attrs, th);
      std::printf("%-40s %dT %9.3f ms %7.1f G/s\n", c.name, th, ms, c.macs / ms * 1e-6);
    }
  }
}

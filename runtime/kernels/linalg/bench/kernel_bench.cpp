// Standalone timing of the linalg kernels as the executor runs them (not built by CMake, not a
// test). Build by hand after building sod2_kernels_linalg in build-linalg:
//   g++ -O2 -std=c++20 -I/work/main kernel_bench.cpp <libsod2_kernels_linalg.a>
//       <libsod2_runtime_base.a> [libsod2_status.a] -ldnnl -fopenmp -o /tmp/kernel_bench
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "runtime/kernels/kernel_registry.h"
#include "tests/runtime/kernel_harness.h"

using namespace sod2::rt;
using sod2::Expected;

// Reuses its output and scratch memory between runs, as the executor's arena does (the test
// harness's allocator takes fresh pages every run, and first touch dominates there).
class ReusingAllocator : public OutputAllocator {
 public:
  Expected<Tensor*> output(size_t, DType dtype, const Shape& shape) override {
    const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
    if (out_.size() < bytes) out_.resize(bytes);
    view_ = Tensor{dtype, shape, out_.data()};
    return &view_;
  }
  Expected<void*> scratch(size_t bytes) override {
    if (used_ + bytes + 64 > scratch_.size()) {
      if (used_ == 0)
        scratch_.resize(bytes + 64);
      else
        return sod2::internal_error("bench scratch: call reset()");
    }
    auto p = reinterpret_cast<uintptr_t>(scratch_.data() + used_);
    p = (p + 63) & ~uintptr_t{63};
    used_ += bytes + 64;
    return reinterpret_cast<void*>(p);
  }
  void reset() { used_ = 0; }
  void grow() { scratch_.resize(scratch_.size() * 2 + (1 << 20)); }

 private:
  std::vector<uint8_t> out_, scratch_;
  size_t used_ = 0;
  Tensor view_;
};

static double time_op(const KernelRegistry& r, const char* op, int opset,
                      const std::vector<const HostTensor*>& in, Attrs attrs, int threads) {
  const NodeInfo info = testing::node_info(op, opset, in, 1, attrs);
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

static HostTensor filled(Shape s) {
  HostTensor t(DType::kFloat, s);
  for (int64_t i = 0; i < s.numel(); ++i) t.data<float>()[i] = 0.01f * float(i % 97);
  return t;
}

int main() {
  KernelRegistry r;
  register_linalg_kernels(r);
  struct MM {
    int64_t m, k, n;
  };
  for (MM s : {MM{128, 128, 128}, MM{512, 128, 512}, MM{16, 512, 128}})
    for (int th : {1, 2}) {
      HostTensor a = filled({s.m, s.k}), b = filled({s.k, s.n});
      const double ms = time_op(r, "MatMul", 13, {&a, &b}, {}, th);
      std::printf("MatMul %ldx%ldx%ld  %dT %8.3f ms %7.1f GFLOP/s\n", long(s.m), long(s.k),
                  long(s.n), th, ms, 2.0 * s.m * s.k * s.n / ms * 1e-6);
    }
  Attrs pad1;
  pad1.set("pads", testing::attr_ints({1, 1, 1, 1}));
  for (int th : {1, 2}) {
    HostTensor x = filled({1, 64, 56, 56}), w = filled({64, 64, 3, 3});
    double ms = time_op(r, "Conv", 11, {&x, &w}, pad1, th);
    std::printf("Conv 3x3 64->64 56x56 %dT %8.3f ms %7.1f GFLOP/s\n", th, ms,
                2.0 * 64 * 64 * 9 * 56 * 56 / ms * 1e-6);
    HostTensor wd = filled({64, 1, 3, 3});
    Attrs dw = pad1;
    dw.set("group", testing::attr_int(64));
    ms = time_op(r, "Conv", 11, {&x, &wd}, dw, th);
    std::printf("Depthwise 3x3 64ch 56x56 %dT %8.3f ms %7.1f GFLOP/s\n", th, ms,
                2.0 * 64 * 9 * 56 * 56 / ms * 1e-6);
    HostTensor w1 = filled({64, 64, 1, 1});
    ms = time_op(r, "Conv", 11, {&x, &w1}, {}, th);
    std::printf("Conv 1x1 64->64 56x56 %dT %8.3f ms %7.1f GFLOP/s\n", th, ms,
                2.0 * 64 * 64 * 56 * 56 / ms * 1e-6);
  }
}

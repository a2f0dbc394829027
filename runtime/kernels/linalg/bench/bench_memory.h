// What the standalone linalg benchmarks share (not built by CMake): an allocator that reuses its
// memory between runs as the executor's arena does, and deterministic input data.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernels/kernel.h"

namespace sod2::rt {

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

inline HostTensor filled(Shape s) {
  HostTensor t(DType::kFloat, s);
  for (int64_t i = 0; i < s.numel(); ++i) t.data<float>()[i] = 0.01f * float(i % 97);
  return t;
}

}  // namespace sod2::rt

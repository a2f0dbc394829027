// A tensor as kernels see it: a typed, shaped view of bytes someone else owns (the arena, a
// package constant, the caller's input). Views never own memory.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/tensor/dtype.h"
#include "runtime/tensor/shape.h"

namespace sod2::rt {

struct Tensor {
  DType dtype = DType::kUndefined;
  Shape shape;
  void* data = nullptr;

  int64_t numel() const { return shape.numel(); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

// A tensor that owns its bytes: attributes' tensors, test inputs, heap values inside control-flow
// bodies. Its `view()` stays valid while it lives and is not resized.
class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, Shape shape) : dtype_(dtype), shape_(shape) {
    bytes_.resize(static_cast<size_t>(shape.numel()) * dtype_size(dtype));
  }
  Tensor view() const { return {dtype_, shape_, const_cast<uint8_t*>(bytes_.data())}; }
  // Re-types and reshapes in place, keeping the capacity: a value produced again with a size it
  // had before reuses its (already faulted-in) bytes.
  void reset(DType dtype, const Shape& shape) {
    dtype_ = dtype;
    shape_ = shape;
    bytes_.resize(static_cast<size_t>(shape.numel()) * dtype_size(dtype));
  }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes_.data());
  }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::vector<uint8_t> bytes_;
};

}  // namespace sod2::rt

// A tensor as kernels see it: a typed, shaped view of bytes someone else owns (the arena, a
// package constant, the caller's input). Views never own memory.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status/status.h"
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

// The one checked size computation (DESIGN §6): the bytes of a `dtype` tensor of `shape`, or an
// error naming the shape when a dim is negative, the element count or the bytes overflow, or the
// bytes exceed `cap`. Every size the runtime computes from a kernel's or a package's numbers goes
// through it before anything is allocated or written.
inline Expected<size_t> checked_tensor_bytes(DType dtype, const Shape& shape,
                                             uint64_t cap = UINT64_MAX) {
  uint64_t n = dtype_size(dtype);
  for (int i = 0; i < shape.rank(); ++i) {
    const int64_t d = shape[i];
    if (d < 0) return invalid_argument("shape " + shape.to_string() + " has a negative dim");
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d)) {
      // Keep looking for a zero dim: an empty tensor of huge other dims holds no bytes.
      for (int j = i + 1; j < shape.rank(); ++j)
        if (shape[j] == 0) return size_t{0};
      return resource_exhausted("shape " + shape.to_string() + " of " + dtype_name(dtype) +
                                " overflows 64-bit byte counts");
    }
    n *= static_cast<uint64_t>(d);
  }
  if (n > cap || n > static_cast<uint64_t>(INT64_MAX)) {
    return resource_exhausted("shape " + shape.to_string() + " of " + dtype_name(dtype) +
                              " needs " + std::to_string(n) + " bytes, above the limit of " +
                              std::to_string(cap) + " bytes per run");
  }
  return static_cast<size_t>(n);
}

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

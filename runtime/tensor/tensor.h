// A tensor as kernels see it: a typed, shaped view of bytes someone else owns (the arena, a
// package constant, the caller's input). Views never own memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/tensor/dtype.h"
#include "runtime/tensor/shape.h"

namespace sod2::rt {

class Sequence;  // runtime/tensor/sequence.h

struct Tensor {
  DType dtype = DType::kUndefined;
  Shape shape;
  void* data = nullptr;
  // ONNX's non-tensor values ride in the same slot, so frames, bodies and loop state carry them
  // like tensors: a sequence (`sequence` set, `dtype` its element type, no data) or an optional
  // holding nothing (`none`). An optional holding a value is that value. Kernels see them only
  // when they say they take them (Kernel::takes_non_tensors); the session checks.
  const Sequence* sequence = nullptr;
  bool none = false;

  bool is_tensor() const { return sequence == nullptr && !none; }

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
  // A string element is a std::string object (its characters come on top).
  uint64_t n = dtype == DType::kString ? sizeof(std::string) : dtype_size(dtype);
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

// Copies `from`'s elements into `to`, of the same type and element count: bytes, or for string
// tensors (whose elements are std::strings, never in the arena) the strings one by one.
inline void copy_elements(const Tensor& from, const Tensor& to) {
  if (from.dtype == DType::kString) {
    const auto* src = from.as<const std::string>();
    std::copy(src, src + from.numel(), to.as<std::string>());
  } else if (from.bytes() > 0) {
    std::memcpy(to.data, from.data, from.bytes());
  }
}

// A tensor that owns its bytes: attributes' tensors, test inputs, heap values inside control-flow
// bodies. Its `view()` stays valid while it lives and is not resized. A string tensor owns its
// std::strings (a view's data points at them).
class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, Shape shape) : dtype_(dtype), shape_(shape) { size_elements(); }
  // A sequence value (shared, never copied: sequences are immutable) or an empty optional.
  static HostTensor of_sequence(std::shared_ptr<const Sequence> sequence, DType element_dtype);
  static HostTensor of_none() {
    HostTensor h;
    h.none_ = true;
    return h;
  }
  Tensor view() const {
    if (!is_tensor()) return {dtype_, shape_, nullptr, sequence_.get(), none_};
    if (dtype_ == DType::kString)
      return {dtype_, shape_, const_cast<std::string*>(strings_.data())};
    return {dtype_, shape_, const_cast<uint8_t*>(bytes_.data())};
  }
  bool is_tensor() const { return !sequence_ && !none_; }
  // Re-types and reshapes in place, keeping the capacity: a value produced again with a size it
  // had before reuses its (already faulted-in) bytes.
  void reset(DType dtype, const Shape& shape) {
    sequence_.reset();
    none_ = false;
    dtype_ = dtype;
    shape_ = shape;
    size_elements();
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
  std::vector<std::string>& strings() { return strings_; }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  void size_elements() {
    const size_t n = static_cast<size_t>(shape_.numel());
    bytes_.resize(n * dtype_size(dtype_));
    strings_.resize(dtype_ == DType::kString ? n : 0);
  }

  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::vector<uint8_t> bytes_;
  std::vector<std::string> strings_;
  std::shared_ptr<const Sequence> sequence_;
  bool none_ = false;
};

}  // namespace sod2::rt

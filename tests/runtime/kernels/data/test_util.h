// Helpers for the data kernel tests: building tensors, running a kernel from the data registry,
// reading results, and straightforward reference implementations to compare against.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "tests/runtime/kernel_harness.h"

namespace sod2::rt::testing {

inline const KernelRegistry& data_registry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    register_data_kernels(*reg);
    return reg;
  }();
  return *r;
}

// Like make_tensor, but an empty `values` makes an empty tensor without calling memcpy on null.
template <typename T>
HostTensor tensor_of(DType dtype, Shape s, const std::vector<T>& v) {
  return v.empty() ? HostTensor(dtype, s) : make_tensor(dtype, s, v);
}
inline HostTensor f32(Shape s, const std::vector<float>& v) {
  return tensor_of(DType::kFloat, s, v);
}
inline HostTensor i64(Shape s, const std::vector<int64_t>& v) {
  return tensor_of(DType::kInt64, s, v);
}
inline HostTensor i32(Shape s, const std::vector<int32_t>& v) {
  return tensor_of(DType::kInt32, s, v);
}
inline HostTensor i64_vec(const std::vector<int64_t>& v) {
  return i64(Shape{static_cast<int64_t>(v.size())}, v);
}
inline HostTensor i64_scalar(int64_t v) { return i64(Shape{}, {v}); }
inline HostTensor f32_scalar(float v) { return f32(Shape{}, {v}); }

// A float tensor holding 0, 1, 2, ... (distinct values make misplaced copies visible).
inline HostTensor iota_f32(Shape s) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  std::iota(v.begin(), v.end(), 0.0f);
  return f32(s, v);
}

template <typename T>
std::vector<T> values(const HostTensor& t) {
  const size_t n = static_cast<size_t>(t.shape().numel());
  return std::vector<T>(t.data<T>(), t.data<T>() + n);
}

inline Attrs attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attrs a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

inline AttrValue attr_tensor(HostTensor t) {
  AttrValue a;
  a.kind = AttrValue::Kind::kTensor;
  a.tensor = std::move(t);
  return a;
}

// Runs a single-output kernel and expects success.
inline HostTensor run1(const std::string& op, int opset, const std::vector<const HostTensor*>& in,
                       Attrs a = {}, int threads = 1) {
  auto r = run_kernel(data_registry(), op, opset, in, 1, std::move(a), threads);
  EXPECT_TRUE(r.ok()) << op << "-" << opset << ": " << r.status().to_string();
  if (!r.ok()) return HostTensor();
  return std::move(r.value()[0]);
}

// The error of a kernel run that was expected to fail (not [[nodiscard]], unlike Status, since
// many tests only need the failure itself).
struct KernelError {
  StatusCode status_code = StatusCode::kOk;
  std::string text;
  StatusCode code() const { return status_code; }
  const std::string& message() const { return text; }
};

// Runs a kernel expecting failure; returns the error.
inline KernelError run_error(const std::string& op, int opset,
                             const std::vector<const HostTensor*>& in, Attrs a = {},
                             size_t outputs = 1) {
  auto r = run_kernel(data_registry(), op, opset, in, outputs, std::move(a));
  EXPECT_FALSE(r.ok()) << op << "-" << opset << " unexpectedly succeeded";
  if (r.ok()) return {};
  return {r.status().code(), r.status().message()};
}

// Reference: element of `in` (row-major) at multi-index.
inline int64_t flat_index(const Shape& s, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (int i = 0; i < s.rank(); ++i) off = off * s[i] + idx[static_cast<size_t>(i)];
  return off;
}

// Calls fn(index vector) for every index of shape s in row-major order.
template <typename F>
void for_each_index(const Shape& s, F fn) {
  const int64_t n = s.numel();
  std::vector<int64_t> idx(static_cast<size_t>(s.rank()), 0);
  for (int64_t k = 0; k < n; ++k) {
    fn(idx);
    for (int i = s.rank() - 1; i >= 0; --i) {
      if (++idx[static_cast<size_t>(i)] < s[i]) break;
      idx[static_cast<size_t>(i)] = 0;
    }
  }
}

}  // namespace sod2::rt::testing

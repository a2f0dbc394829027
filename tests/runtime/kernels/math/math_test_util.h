// Shared helpers of the math kernel tests: tensors from values, seeded random inputs, a numpy
// broadcast index for reference implementations, and tolerant comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "../../kernel_harness.h"

namespace sod2::rt {
// Readable shapes in gtest failure messages.
inline void PrintTo(const Shape& s, std::ostream* os) { *os << s.to_string(); }
}  // namespace sod2::rt

namespace sod2::rt::math_test {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::make_tensor;

inline const KernelRegistry& registry() {
  static const KernelRegistry r = [] {
    KernelRegistry reg;
    register_math_kernels(reg);
    return reg;
  }();
  return r;
}

inline Attrs attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attrs a;
  for (const auto& [name, v] : list) a.set(name, v);
  return a;
}

// Runs a kernel; fails the test on error and returns the outputs.
inline std::vector<HostTensor> run_ok(const std::string& op, int opset,
                                      const std::vector<const HostTensor*>& inputs,
                                      size_t num_outputs = 1, Attrs a = {}, int threads = 1) {
  auto r = testing::run_kernel(registry(), op, opset, inputs, num_outputs, std::move(a), threads);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().to_string();
  if (!r.ok()) return std::vector<HostTensor>(num_outputs);
  return std::move(r).value();
}

inline Status run_status(const std::string& op, int opset,
                         const std::vector<const HostTensor*>& inputs, size_t num_outputs = 1,
                         Attrs a = {}) {
  auto r = testing::run_kernel(registry(), op, opset, inputs, num_outputs, std::move(a));
  return r.ok() ? Status::ok_status() : r.status();
}

inline HostTensor f32(Shape s, const std::vector<float>& v) {
  return make_tensor(DType::kFloat, s, v);
}
inline HostTensor f64(Shape s, const std::vector<double>& v) {
  return make_tensor(DType::kDouble, s, v);
}
inline HostTensor i32(Shape s, const std::vector<int32_t>& v) {
  return make_tensor(DType::kInt32, s, v);
}
inline HostTensor i64(Shape s, const std::vector<int64_t>& v) {
  return make_tensor(DType::kInt64, s, v);
}
inline HostTensor b8(Shape s, const std::vector<uint8_t>& v) {
  return make_tensor(DType::kBool, s, v);
}

inline HostTensor random_f32(Shape s, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (float& x : v) x = dist(gen);
  return f32(s, v);
}

template <class T>
std::vector<T> values(const HostTensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.shape().numel());
}

// The flat index into a tensor of shape `in` that broadcasts to output index `out_index` of
// shape `out` (numpy rules, right-aligned).
inline int64_t broadcast_index(const Shape& out, int64_t out_index, const Shape& in) {
  int64_t idx = 0, in_stride = 1, rem = out_index;
  for (int d = out.rank() - 1; d >= 0; --d) {
    const int64_t coord = rem % out[d];
    rem /= out[d];
    const int k = d - (out.rank() - in.rank());
    if (k < 0) break;
    if (in[k] != 1) idx += coord * in_stride;
    in_stride *= in[k];
  }
  return idx;
}

// |a - e| <= rel * max(|e|, floor) elementwise, NaNs and infinities matching exactly.
template <class T>
void expect_near_all(const HostTensor& actual, const std::vector<double>& expected, double rel,
                     double floor = 1e-6, const std::string& what = "") {
  ASSERT_EQ(actual.shape().numel(), static_cast<int64_t>(expected.size())) << what;
  const T* a = actual.data<T>();
  for (size_t i = 0; i < expected.size(); ++i) {
    const double e = expected[i], v = static_cast<double>(a[i]);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(v)) << what << " [" << i << "] = " << v << ", expected NaN";
    } else if (std::isinf(e)) {
      EXPECT_EQ(v, e) << what << " [" << i << "]";
    } else {
      EXPECT_LE(std::abs(v - e), rel * std::max(std::abs(e), floor))
          << what << " [" << i << "] = " << v << ", expected " << e;
    }
  }
}

// Uniform floats in [lo, hi), seeded.
inline HostTensor random_tensor(Shape shape, uint32_t seed, float lo = -3.f, float hi = 3.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  HostTensor t(DType::kFloat, shape);
  float* p = t.view().as<float>();
  for (int64_t i = 0; i < t.view().numel(); ++i) p[i] = d(rng);
  return t;
}

// Bitwise equal, any NaN equal to any NaN: "" or where they first differ.
inline std::string differs(const HostTensor& a, const HostTensor& b) {
  if (!(a.view().shape == b.view().shape))
    return "shapes " + a.view().shape.to_string() + " vs " + b.view().shape.to_string();
  const float* x = a.view().as<const float>();
  const float* y = b.view().as<const float>();
  for (int64_t i = 0; i < a.view().numel(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0)
      return "element " + std::to_string(i) + ": " + std::to_string(x[i]) + " vs " +
             std::to_string(y[i]);
  }
  return "";
}

}  // namespace sod2::rt::math_test

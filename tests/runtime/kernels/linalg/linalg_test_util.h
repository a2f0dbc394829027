// Helpers for the linalg kernel tests: random tensors, attribute building, comparison.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_registry.h"
#include "tests/runtime/kernel_harness.h"

namespace sod2::rt::linalg_test {

using testing::attr_float;
using testing::attr_floats;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

inline const KernelRegistry& registry() {
  static const KernelRegistry r = [] {
    KernelRegistry k;
    register_linalg_kernels(k);
    return k;
  }();
  return r;
}

inline HostTensor rand_tensor(Shape s, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  HostTensor t(DType::kFloat, s);
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  float* p = t.data<float>();
  for (int64_t i = 0; i < s.numel(); ++i) p[i] = d(g);
  return t;
}

inline HostTensor floats(Shape s, const std::vector<float>& v) {
  return testing::make_tensor<float>(DType::kFloat, s, v);
}

inline std::vector<double> values(const HostTensor& t) {
  std::vector<double> v(static_cast<size_t>(t.shape().numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<float>()[i];
  return v;
}

// Builder for Attrs: A().i("group", 2).is("pads", {1, 1, 0, 0}).
struct A {
  Attrs a;
  A& i(const std::string& n, int64_t v) {
    a.set(n, attr_int(v));
    return *this;
  }
  A& f(const std::string& n, float v) {
    a.set(n, attr_float(v));
    return *this;
  }
  A& s(const std::string& n, const std::string& v) {
    a.set(n, attr_string(v));
    return *this;
  }
  A& is(const std::string& n, std::vector<int64_t> v) {
    a.set(n, attr_ints(std::move(v)));
    return *this;
  }
  A& fs(const std::string& n, std::vector<float> v) {
    a.set(n, attr_floats(std::move(v)));
    return *this;
  }
  operator Attrs() const { return a; }  // NOLINT
};

inline void expect_close(const HostTensor& got, const Shape& shape, const std::vector<double>& want,
                         double tol = 1e-4) {
  ASSERT_EQ(got.shape().to_string(), shape.to_string());
  ASSERT_EQ(static_cast<size_t>(got.shape().numel()), want.size());
  const float* g = got.data<float>();
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = std::fabs(g[i] - want[i]);
    if (!(err <= tol * (1.0 + std::fabs(want[i])))) {
      if (++bad <= 5) ADD_FAILURE() << "element " << i << ": got " << g[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(bad, 0u) << "mismatches";
}

// Runs with 1 and 2 threads; returns the 1-thread outputs after checking the 2-thread ones agree.
inline std::vector<HostTensor> run_both(const std::string& op, int opset,
                                        const std::vector<const HostTensor*>& in, size_t outs,
                                        const Attrs& attrs) {
  auto r1 = testing::run_kernel(registry(), op, opset, in, outs, attrs, 1);
  EXPECT_TRUE(r1.ok()) << r1.status().to_string();
  if (!r1.ok()) return {};
  auto r2 = testing::run_kernel(registry(), op, opset, in, outs, attrs, 2);
  EXPECT_TRUE(r2.ok()) << r2.status().to_string();
  if (r2.ok()) {
    for (size_t i = 0; i < outs; ++i) {
      if (r1.value()[i].shape().numel() == 0) continue;
      expect_close(r2.value()[i], r1.value()[i].shape(), values(r1.value()[i]), 1e-5);
    }
  }
  return std::move(r1).value();
}

inline Status run_status(const std::string& op, int opset, const std::vector<const HostTensor*>& in,
                         size_t outs, const Attrs& attrs) {
  auto r = testing::run_kernel(registry(), op, opset, in, outs, attrs, 1);
  return r.ok() ? Status::ok_status() : r.status();
}

}  // namespace sod2::rt::linalg_test

namespace sod2::rt::linalg_test {

// Runs a kernel made by a factory variant (the epilogue ones) the way run_kernel does.
inline Expected<std::vector<HostTensor>> run_made(Expected<std::unique_ptr<Kernel>> made,
                                                  const std::vector<const HostTensor*>& inputs,
                                                  size_t outs, int threads) {
  if (!made.ok()) return made.status();
  std::vector<Tensor> views;
  for (const HostTensor* t : inputs) views.push_back(t ? t->view() : Tensor{});
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) ptrs.push_back(inputs[i] ? &views[i] : nullptr);
  testing::HeapAllocator alloc(outs);
  ThreadPool pool(threads);
  KernelContext ctx(ptrs, &alloc, &pool);
  SOD2_RETURN_IF_ERROR(made.value()->run(ctx));
  return std::move(alloc.outputs);
}

}  // namespace sod2::rt::linalg_test

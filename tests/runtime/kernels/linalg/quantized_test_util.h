// What the quantized kernel tests share: random 8-bit tensors, scalars, a sod2-domain kernel
// (QFusedConv, QAdd...) run on host tensors, a byte-for-byte comparison of two results, and the
// VNNI paths restored after a test turns them off.
#pragma once

#include <algorithm>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernels/linalg/int8_vnni.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {

template <class T>
inline HostTensor random_q(DType dt, Shape s, uint32_t seed, int lo = -128, int hi = 255) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(std::max<int>(lo, std::numeric_limits<T>::min()),
                                       std::min<int>(hi, std::numeric_limits<T>::max()));
  std::vector<T> v(static_cast<size_t>(s.numel()));
  for (T& x : v) x = static_cast<T>(d(g));
  return testing::make_tensor(dt, s, v);
}

template <class T>
inline HostTensor scalar(DType dt, T v) {
  return testing::make_tensor(dt, Shape{}, std::vector<T>{v});
}

inline Expected<std::vector<HostTensor>> run_sod2(const std::string& op,
                                                  const std::vector<const HostTensor*>& in,
                                                  const Attrs& attrs, int threads) {
  return testing::run_kernel(registry(), op, 1, in, 1, attrs, threads, "sod2");
}

// Turns the VNNI paths back on when it goes out of scope, however the test ends: tests that run
// the other paths on a VNNI CPU (quant::set_vnni_enabled(false)) leave the process as it was.
struct VnniRestore {
  VnniRestore() = default;
  VnniRestore(const VnniRestore&) = delete;
  VnniRestore& operator=(const VnniRestore&) = delete;
  ~VnniRestore() { quant::set_vnni_enabled(true); }
};

// `got` has `want`'s shape, type and bytes; a failure names the first differing byte.
inline void expect_same_bytes(const HostTensor& got, const HostTensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  const auto diff = std::mismatch(got.bytes().begin(), got.bytes().end(), want.bytes().begin());
  EXPECT_EQ(diff.first - got.bytes().begin(), got.bytes().end() - got.bytes().begin())
      << "the first differing byte";
}

}  // namespace sod2::rt::linalg_test

// igemm_serial and igemm_rows (runtime/kernels/linalg/int8_gemm.h) against the definition, on
// whatever this machine runs: on arm64 with the dot product instructions, the SDOT kernel. Built
// by cross_test.sh with the arm64 cross compiler and run under qemu-aarch64 (whose CPU has them):
// the host's unit tests cannot reach arm64 code. Exits 1 naming the first mismatch.
#include <cstdint>
#include <cstdio>
#include <random>
#include <type_traits>
#include <vector>

#include "runtime/kernels/linalg/int8_gemm.h"

namespace {

struct Case {
  int64_t m, n, k, ldw, ldx;
  int32_t x_zero;
};

bool check(const Case& t, std::mt19937& g) {
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> w(static_cast<size_t>(t.m * t.ldw)), x(static_cast<size_t>(t.k * t.ldx));
  for (auto& v : w) v = static_cast<int8_t>(byte(g));
  for (auto& v : x) v = static_cast<int8_t>(byte(g));
  const int64_t ldc = t.n + 3;
  std::vector<int32_t> c(static_cast<size_t>(t.m * ldc), 0x5a5a5a5a);
  sod2::rt::quant::igemm_serial(t.m, t.n, t.k, w.data(), t.ldw, x.data(), t.ldx, t.x_zero, c.data(),
                                ldc);
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < t.n; ++j) {
      uint32_t want = 0;  // modulo 2^32, as ONNX's int32 sums
      for (int64_t kk = 0; kk < t.k; ++kk)
        want += static_cast<uint32_t>(int32_t{w[static_cast<size_t>(i * t.ldw + kk)]} *
                                      (int32_t{x[static_cast<size_t>(kk * t.ldx + j)]} - t.x_zero));
      const int32_t got = c[static_cast<size_t>(i * ldc + j)];
      if (static_cast<uint32_t>(got) != want) {
        std::printf("FAIL m=%lld n=%lld k=%lld x_zero=%d: c[%lld][%lld] = %d, want %d\n",
                    static_cast<long long>(t.m), static_cast<long long>(t.n),
                    static_cast<long long>(t.k), t.x_zero, static_cast<long long>(i),
                    static_cast<long long>(j), got, static_cast<int32_t>(want));
        return false;
      }
    }
    // The columns past n are the caller's.
    for (int64_t j = t.n; j < ldc; ++j)
      if (c[static_cast<size_t>(i * ldc + j)] != 0x5a5a5a5a) {
        std::printf("FAIL m=%lld n=%lld k=%lld: wrote past column n\n", static_cast<long long>(t.m),
                    static_cast<long long>(t.n), static_cast<long long>(t.k));
        return false;
      }
  }
  return true;
}

// igemm_rows: (A - a_zero) . B with A uint8 or int8 activations (m x k) and B int8 (k x n).
template <class TA>
bool check_rows(const Case& t, std::mt19937& g) {
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<TA> a(static_cast<size_t>(t.m * t.ldw));
  std::vector<int8_t> b(static_cast<size_t>(t.k * t.ldx));
  for (auto& v : a) v = static_cast<TA>(byte(g));
  for (auto& v : b) v = static_cast<int8_t>(byte(g));
  // The zero point in A's type's range: uint8 0..255.
  const int32_t a_zero = std::is_same_v<TA, uint8_t> ? t.x_zero + 128 : t.x_zero;
  const int64_t ldc = t.n + 1;
  std::vector<int32_t> c(static_cast<size_t>(t.m * ldc), 0x5a5a5a5a);
  sod2::rt::quant::igemm_rows(t.m, t.n, t.k, a.data(), t.ldw, a_zero, b.data(), t.ldx, c.data(),
                              ldc);
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.n; ++j) {
      uint32_t want = 0;
      for (int64_t kk = 0; kk < t.k; ++kk)
        want += static_cast<uint32_t>((int32_t{a[static_cast<size_t>(i * t.ldw + kk)]} - a_zero) *
                                      int32_t{b[static_cast<size_t>(kk * t.ldx + j)]});
      if (static_cast<uint32_t>(c[static_cast<size_t>(i * ldc + j)]) != want) {
        std::printf("FAIL igemm_rows (%s A) m=%lld n=%lld k=%lld a_zero=%d: c[%lld][%lld]\n",
                    std::is_same_v<TA, uint8_t> ? "uint8" : "int8", static_cast<long long>(t.m),
                    static_cast<long long>(t.n), static_cast<long long>(t.k), a_zero,
                    static_cast<long long>(i), static_cast<long long>(j));
        return false;
      }
    }
  return true;
}

}  // namespace

int main() {
  std::mt19937 g(7);
  std::vector<Case> cases = {
      {1, 1, 1, 1, 1, 0},
      {8, 8, 4, 4, 8, -128},
      {9, 17, 13, 15, 20, 127},
      {16, 64, 288, 288, 64, 3},
      {24, 49, 576, 580, 49, -7},
      {7, 100, 3, 3, 100, 1},
      {40, 33, 147, 147, 40, 0},
      {3, 5, 0, 1, 5, 9},
      // K past 2^17 of extreme products: the sums wrap modulo 2^32.
      {2, 9, 140000, 140000, 9, -128},
  };
  std::uniform_int_distribution<int> dim(1, 40), kd(1, 300), zp(-128, 127);
  for (int i = 0; i < 60; ++i) {
    const int64_t m = dim(g), n = dim(g) * 2, k = kd(g);
    cases.push_back({m, n, k, k + i % 3, n + i % 5, zp(g)});
  }
  for (const Case& t : cases)
    if (!check(t, g) || !check_rows<uint8_t>(t, g) || !check_rows<int8_t>(t, g)) return 1;
  std::printf("PASS igemm_serial and igemm_rows (%s): %zu cases each equal the definition\n",
              sod2::rt::quant::igemm_backend_name(), cases.size());
  return 0;
}

// The random streams of numpy's legacy RandomState, which ONNX's reference implementation and
// test generators use: MT19937 seeded like np.random.seed(int), uniform doubles from 53 random
// bits (random_sample), normals by the polar method with the second value cached (gauss), and
// binomial(1, p) by inversion. A seeded node therefore draws what `np.random.seed(s)` followed by
// the same calls would, and the same values every run.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>

namespace sod2::rt::math {

class NumpyRandom {
 public:
  explicit NumpyRandom(uint32_t seed) : gen_(seed) {}

  // random_sample(): [0, 1).
  double uniform() {
    const uint32_t a = gen_() >> 5, b = gen_() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

  // standard_normal() of the legacy generator.
  double gauss() {
    if (has_gauss_) {
      has_gauss_ = false;
      return gauss_;
    }
    double x1, x2, r2;
    do {
      x1 = 2.0 * uniform() - 1.0;
      x2 = 2.0 * uniform() - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    gauss_ = f * x1;
    has_gauss_ = true;
    return f * x2;
  }

  // binomial(1, p) for p in [0, 1]: numpy inverts on the smaller of p and 1 - p, and p = 0 draws
  // nothing.
  bool bernoulli(double p) {
    if (p == 0.0) return false;
    if (p <= 0.5) return uniform() > 1.0 - p;
    return !(uniform() > p);
  }

 private:
  std::mt19937 gen_;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

// Seeds for nodes without a seed attribute: a fresh stream per kernel and run (the spec leaves
// unseeded draws to the implementation), cheap and without locks.
class FreshSeeds {
 public:
  explicit FreshSeeds(const void* owner)
      : base_(static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count() ^
                                    static_cast<int64_t>(reinterpret_cast<uintptr_t>(owner)))) {}
  uint32_t next() { return base_ + 0x9E3779B9u * runs_.fetch_add(1, std::memory_order_relaxed); }

 private:
  uint32_t base_;
  std::atomic<uint32_t> runs_{0};
};

}  // namespace sod2::rt::math

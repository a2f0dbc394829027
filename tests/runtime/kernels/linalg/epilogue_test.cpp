// The fused epilogue (epilogue.h) on tiles of a channel-blocked output, a position's block of
// channels per row: the same bits as on any other tile layout, for every activation, bias count
// and residual placement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/linalg/epilogue.h"

namespace sod2::rt {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

TEST(Epilogue, BlockedTilesGetTheSameValuesAsStridedOnes) {
  const Activation all[] = {Activation::kNone,      Activation::kRelu,    Activation::kLeakyRelu,
                            Activation::kClip,      Activation::kSigmoid, Activation::kHardSigmoid,
                            Activation::kHardSwish, Activation::kTanh,    Activation::kSilu};
  const int64_t rows = 37, channels = 64;
  const std::vector<float> bias0 = random_values(channels, 1, -1, 1);
  const std::vector<float> bias1 = random_values(channels, 2, -1, 1);
  for (const int64_t cols : {16, 8}) {
    const std::vector<float> y0 = random_values(static_cast<size_t>(rows * cols), 3, -6, 6);
    const std::vector<float> res = random_values(y0.size(), 4, -2, 2);
    for (const Activation a : all) {
      for (int biases = 0; biases <= 2; ++biases) {
        for (int residual = 0; residual <= 2; ++residual) {
          EpilogueRun e;
          e.activation = a;
          e.alpha = a == Activation::kClip ? -0.5f : 0.2f;
          e.beta = a == Activation::kClip ? 3.f : 0.5f;
          if (biases >= 1) e.bias[0] = bias0.data();
          if (biases >= 2) e.bias[1] = bias1.data();
          e.residual_before_activation = residual == 1;
          if (residual > 0) e.residual = res.data();  // only its presence matters to apply()
          if (e.empty()) continue;
          // The blocked tile: rows of exactly `cols` floats.
          std::vector<float> blocked = y0;
          e.apply(blocked.data(), residual ? res.data() : nullptr, rows, cols, cols, 16, false);
          // The same values one float apart from row to row.
          const int64_t ld = cols + 1;
          std::vector<float> strided(static_cast<size_t>(rows * ld), 0.f);
          std::vector<float> strided_res(strided.size(), 0.f);
          for (int64_t r = 0; r < rows; ++r) {
            std::memcpy(&strided[static_cast<size_t>(r * ld)], &y0[static_cast<size_t>(r * cols)],
                        static_cast<size_t>(cols) * sizeof(float));
            std::memcpy(&strided_res[static_cast<size_t>(r * ld)],
                        &res[static_cast<size_t>(r * cols)],
                        static_cast<size_t>(cols) * sizeof(float));
          }
          e.apply(strided.data(), residual ? strided_res.data() : nullptr, rows, cols, ld, 16,
                  false);
          // (Equal up to the rounding of a multiply-add the compiler may fuse in one loop and
          // not the other.)
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
              const float want = strided[static_cast<size_t>(r * ld + c)];
              ASSERT_NEAR(blocked[static_cast<size_t>(r * cols + c)], want,
                          1e-6f * std::max(1.f, std::abs(want)))
                  << "activation " << static_cast<int>(a) << ", " << biases << " biases, residual "
                  << residual << ", " << cols << " columns, at " << r << ", " << c;
            }
        }
      }
    }
  }
}

}  // namespace
}  // namespace sod2::rt

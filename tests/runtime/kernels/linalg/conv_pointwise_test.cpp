// The pointwise paths on NCHW against the definition: for few input channels
// (conv_pointwise.cpp) every tile shape it has (whole tiles, fewer output channels than a tile, a
// last vector of positions that is partly outside the plane), and for one position per image
// (conv_single_position.cpp) rows in fours and alone, input channels in whole and part vectors;
// groups and images, every activation with each residual placement, at each SIMD level and on
// one and two threads.
#include <cmath>
#include <span>

#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/simd.h"
#include "tests/runtime/kernels/linalg/conv_reference.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

double activate(Activation a, double v) {
  switch (a) {
    case Activation::kNone: return v;
    case Activation::kRelu: return std::max(0.0, v);
    case Activation::kLeakyRelu: return v < 0 ? 0.1 * v : v;
    case Activation::kClip: return std::min(2.0, std::max(-0.5, v));
    case Activation::kSigmoid: return 1 / (1 + std::exp(-v));
    case Activation::kHardSigmoid: return std::min(1.0, std::max(0.0, 0.2 * v + 0.5));
    case Activation::kHardSwish: return v * std::min(1.0, std::max(0.0, v / 6 + 0.5));
    case Activation::kTanh: return std::tanh(v);
    case Activation::kSilu: return v / (1 + std::exp(-v));
    case Activation::kGeluErf: return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  }
  return v;
}

struct Case {
  Shape xs, ws;
  int64_t group;
};

void check(const Case& c, Activation act, int residual, int threads) {
  SCOPED_TRACE("X " + c.xs.to_string() + " W " + c.ws.to_string() + " group " +
               std::to_string(c.group) + ", activation " + std::to_string(static_cast<int>(act)) +
               ", residual " + std::to_string(residual) + ", threads " + std::to_string(threads));
  const ConvP p{c.group, {}, {}, {}, {}};
  const HostTensor x = rand_tensor(c.xs, 31), w = rand_tensor(c.ws, 32);
  const HostTensor b = rand_tensor({c.ws[0]}, 33), fb = rand_tensor({c.ws[0]}, 34);
  Shape out;
  std::vector<double> want = ref_conv(x, w, &b, p, &out);
  const HostTensor res = rand_tensor(out, 35);
  const int64_t plane = out.numel() / (out[0] * out[1]);
  for (size_t i = 0; i < want.size(); ++i) {
    double v = want[i] + fb.data<float>()[(i / plane) % out[1]];
    if (residual == 1) v += res.data<float>()[i];
    v = activate(act, v);
    if (residual == 2) v += res.data<float>()[i];
    want[i] = v;
  }
  Epilogue e;
  e.bias_input = 3;
  e.activation = act;
  e.alpha = act == Activation::kClip          ? -0.5f
            : act == Activation::kHardSigmoid ? 0.2f
            : act == Activation::kGeluErf     ? 1.41421354f
                                              : 0.1f;
  e.beta = act == Activation::kClip ? 2.f : act == Activation::kGeluErf ? 1.f : 0.5f;
  std::vector<const HostTensor*> in = {&x, &w, &b, &fb};
  if (residual > 0) {
    e.residual_input = 4;
    e.residual_before_activation = residual == 1;
    in.push_back(&res);
  }
  const NodeInfo node = testing::node_info("Conv", 11, in, 1, conv_attrs(p));
  auto got = run_made(make_conv_kernel(node, e), in, 1, threads);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_close(got.value()[0], out, want);
}

// Every case with every activation and residual placement, at each SIMD level, on one and two
// threads.
void check_all(std::span<const Case> cases, std::span<const Activation> acts) {
  for (int level : {2, 1, 0}) {
    SCOPED_TRACE("simd level " + std::to_string(level));
    simd::force_simd_level(level);
    for (const Case& c : cases)
      for (Activation a : acts)
        for (int residual : {0, 1, 2})
          for (int threads : {1, 2}) check(c, a, residual, threads);
  }
  simd::force_simd_level(-1);
}

TEST(ConvPointwise, EveryTileShapeAndEpilogueMatchesTheDefinition) {
  const Case cases[] = {
      // 135 positions: two whole tiles of 4 vectors at 16 lanes, a whole vector and a part one;
      // 13 output channels: tiles of 6 (4) and a remainder.
      {{1, 16, 9, 15}, {13, 16, 1, 1}, 1},
      // Two groups of three input channels, two images, 49 positions (no whole tile).
      {{2, 6, 7, 7}, {10, 3, 1, 1}, 2},
      // One output channel.
      {{1, 48, 3, 5}, {1, 48, 1, 1}, 1},
      {{1, 48, 20, 20}, {24, 48, 1, 1}, 1},
      // 1-D and 3-D.
      {{1, 3, 70}, {5, 3, 1}, 1},
      {{1, 4, 3, 5, 7}, {7, 4, 1, 1, 1}, 1},
  };
  const Activation acts[] = {Activation::kNone,      Activation::kRelu,    Activation::kLeakyRelu,
                             Activation::kClip,      Activation::kSigmoid, Activation::kHardSigmoid,
                             Activation::kHardSwish, Activation::kTanh,    Activation::kSilu,
                             Activation::kGeluErf};
  check_all(cases, acts);
}

TEST(ConvPointwise, SinglePositionsMatchTheDefinition) {
  const Case cases[] = {
      {{2, 40, 1, 1}, {38, 20, 1, 1}, 2},     // 19 rows per group: fours and three alone
      {{1, 720, 1, 1}, {184, 720, 1, 1}, 1},  // over two threads' worth of weights
      {{1, 184, 1, 1}, {720, 184, 1, 1}, 1}, {{3, 5, 1}, {7, 5, 1}, 1},
      {{1, 48, 1, 1}, {1, 48, 1, 1}, 1},
  };
  const Activation acts[] = {Activation::kNone, Activation::kRelu, Activation::kHardSigmoid,
                             Activation::kSilu};
  check_all(cases, acts);
}

TEST(ConvPointwise, TakesOnlyPointwiseConvsWithFewInputChannels) {
  auto shape = [](int64_t c, int64_t group, int64_t k, int64_t stride, int64_t pad) {
    ConvShape s;
    s.n = 1;
    s.c = c;
    s.m = 8;
    s.group = group;
    for (int a = 0; a < 3; ++a) {
      s.win.in[a] = s.win.out[a] = a == 0 ? 1 : 10;
      s.win.k[a] = a == 0 ? 1 : k;
      s.win.stride[a] = a == 0 ? 1 : stride;
      s.win.dil[a] = 1;
      s.win.pad_begin[a] = s.win.pad_end[a] = a == 0 ? 0 : pad;
    }
    s.win.spatial = 2;
    return s;
  };
  EXPECT_TRUE(pointwise_narrow_applies(shape(16, 1, 1, 1, 0)));
  EXPECT_TRUE(pointwise_narrow_applies(shape(96, 2, 1, 1, 0)));  // 48 per group
  EXPECT_FALSE(pointwise_narrow_applies(shape(49, 1, 1, 1, 0)));
  EXPECT_FALSE(pointwise_narrow_applies(shape(16, 1, 3, 1, 1)));
  EXPECT_FALSE(pointwise_narrow_applies(shape(16, 1, 1, 2, 0)));
  EXPECT_FALSE(pointwise_narrow_applies(shape(16, 1, 1, 1, 1)));
}

// Which convs between blocked tensors the blocked pointwise path takes (and repacks weights for
// at load): 1x1 windows that keep the positions, one group, whole blocks, weights up to 1 MB. A
// strided 1x1 conv stays with oneDNN, whose weights are reordered at load for it.
TEST(ConvPointwiseBlocked, TakesUnitWindowsOfOneGroupAndSmallWeights) {
  const int b = simd::lanes(simd::simd_level());
  if (b < 8) GTEST_SKIP() << "no channel-blocked values at this SIMD level";
  WindowAttrs unit;
  WindowAttrs strided;
  strided.strides = {2, 2};
  WindowAttrs explicit_unit;
  explicit_unit.strides = {1, 1};
  explicit_unit.pads = {0, 0, 0, 0};
  WindowAttrs padded;
  padded.pads = {1, 1, 1, 1};
  const std::vector<int64_t> w = {3 * b, 2 * b, 1, 1};
  EXPECT_TRUE(pointwise_blocked_takes(unit, w, 1, b));
  EXPECT_TRUE(pointwise_blocked_takes(explicit_unit, w, 1, b));
  EXPECT_FALSE(pointwise_blocked_takes(strided, w, 1, b));
  EXPECT_FALSE(pointwise_blocked_takes(padded, w, 1, b));
  EXPECT_FALSE(pointwise_blocked_takes(unit, w, 2, b));
  EXPECT_FALSE(pointwise_blocked_takes(unit, std::vector<int64_t>{3 * b, 2 * b, 3, 3}, 1, b));
  // Channels that end in a narrow block, on either side (kernel.h).
  EXPECT_TRUE(pointwise_blocked_takes(unit, std::vector<int64_t>{3 * b + 1, 2 * b, 1, 1}, 1, b));
  EXPECT_TRUE(pointwise_blocked_takes(unit, std::vector<int64_t>{3 * b, 5, 1, 1}, 1, b));
  EXPECT_FALSE(pointwise_blocked_takes(unit, w, 1, b / 2));
  EXPECT_TRUE(pointwise_blocked_takes(unit, std::vector<int64_t>{512, 512, 1, 1}, 1, b));
  EXPECT_FALSE(pointwise_blocked_takes(unit, std::vector<int64_t>{1024, 512, 1, 1}, 1, b));
}

}  // namespace
}  // namespace sod2::rt::linalg_test

// The channel-lane depthwise path (conv_depthwise_lanes.cpp) and the channel transposes it
// shares with the blocked convolutions (channel_blocks.cpp).
#include <cmath>

#include "runtime/kernels/linalg/channel_blocks.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/simd.h"
#include "tests/runtime/kernels/linalg/conv_reference.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

// Every block width, every channel count up to it, and position counts around whole tiles, with
// planes further apart than they are long.
TEST(ChannelBlocks, InterleaveAndBackAtEveryBlockChannelCountAndTail) {
  for (int block : {4, 8, 16})
    for (int channels = 1; channels <= block; ++channels)
      for (int64_t count : {0, 1, 3, 7, 15, 16, 17, 31, 33, 49}) {
        SCOPED_TRACE("block " + std::to_string(block) + " channels " + std::to_string(channels) +
                     " count " + std::to_string(count));
        const int64_t stride = count + 5;
        std::vector<float> x(static_cast<size_t>(channels * stride));
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 0.5f;
        std::vector<float> blocked(static_cast<size_t>(count * block), -1.f);
        block_positions(block, channels, x.data(), stride, count, blocked.data());
        for (int64_t p = 0; p < count; ++p)
          for (int j = 0; j < block; ++j)
            ASSERT_EQ(blocked[p * block + j], j < channels ? x[j * stride + p] : 0.f)
                << "position " << p << " lane " << j;
        std::vector<float> back(x.size(), -1.f);
        unblock_positions(block, channels, blocked.data(), count, stride, back.data());
        for (int j = 0; j < channels; ++j)
          for (int64_t p = 0; p < stride; ++p)
            ASSERT_EQ(back[j * stride + p], p < count ? x[j * stride + p] : -1.f)
                << "channel " << j << " position " << p << " (past count: left alone)";
      }
}

// The same into rows of a padded buffer (row_len positions, row_stride floats apart), from floats
// and from 8-bit planes centred on their zero point: the lanes past the channels and the
// buffer's padding between rows untouched or zero as they should be.
TEST(ChannelBlocks, InterleaveIntoRowsFromFloatsAndBytes) {
  for (int block : {4, 8, 16})
    for (int channels : {1, block / 2 + 1, block})
      for (int64_t row_len : {1, 3, 7, 14, 17})
        for (int64_t rows : {1, 2, 5}) {
          SCOPED_TRACE("block " + std::to_string(block) + " channels " + std::to_string(channels) +
                       " row " + std::to_string(row_len) + " x " + std::to_string(rows));
          const int64_t count = row_len * rows, stride = count + 3;
          const int64_t row_stride = (row_len + 2) * block;  // two positions of padding a row
          std::vector<float> x(static_cast<size_t>(channels * stride));
          std::vector<uint8_t> x8(x.size());
          for (size_t i = 0; i < x.size(); ++i) {
            x[i] = static_cast<float>(i) + 0.25f;
            x8[i] = static_cast<uint8_t>(i * 7 % 256);
          }
          std::vector<float> out(static_cast<size_t>(rows * row_stride), -1.f),
              out8(out.size(), -1.f);
          block_positions_rows(block, channels, x.data(), stride, count, row_len, row_stride,
                               out.data());
          block_positions_8bit_rows(block, channels, x8.data(), false, 100, stride, count, row_len,
                                    row_stride, out8.data());
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < row_len + 2; ++c)
              for (int j = 0; j < block; ++j) {
                const size_t at = static_cast<size_t>(r * row_stride + c * block + j);
                const int64_t p = r * row_len + c;
                const bool inside = c < row_len;
                const float want = !inside ? -1.f : j < channels ? x[j * stride + p] : 0.f;
                const float want8 = !inside        ? -1.f
                                    : j < channels ? static_cast<float>(x8[j * stride + p]) - 100.f
                                                   : 0.f;
                ASSERT_EQ(out[at], want) << "row " << r << " column " << c << " lane " << j;
                ASSERT_EQ(out8[at], want8) << "row " << r << " column " << c << " lane " << j;
              }
        }
}

struct Case {
  Shape xs;
  std::vector<int64_t> k;
  ConvP p;
};

// Narrow planes (4-wide outputs: served at every lane width, and output blocks run across row
// ends) and wide ones (bands) at every channel count around the lane width (whole groups, a partial
// last group, fewer channels than lanes), strides 1-3, dilations, asymmetric and large pads,
// non-square and even kernels, 1-D, batches.
std::vector<Case> cases() {
  std::vector<Case> out;
  for (int64_t c : {1, 5, 16, 17, 40})
    for (int64_t k : {3, 5, 7})
      for (int64_t s : {1, 2})
        out.push_back(
            {{2, c, 7 * s, 4 * s}, {k, k}, {c, {s, s}, {}, {k / 2, k / 2}, {k / 2, k / 2}}});
  out.push_back({{1, 24, 14, 9}, {3, 3}, {24, {1, 1}, {}, {0, 0}, {0, 0}}});
  out.push_back({{1, 24, 11, 13}, {5, 5}, {24, {1, 2}, {}, {0, 2}, {3, 1}}});
  out.push_back({{3, 20, 6, 7}, {3, 3}, {20, {1, 2}, {}, {4, 3}, {5, 4}}});
  out.push_back({{1, 33, 17, 20}, {3, 3}, {33, {3, 3}, {}, {1, 1}, {1, 1}}});
  out.push_back({{2, 18, 12, 9}, {2, 4}, {18, {2, 2}, {}, {1, 2}, {0, 1}}});
  out.push_back({{1, 32, 12, 12}, {3, 3}, {32, {1, 1}, {2, 2}, {2, 2}, {2, 2}}});
  out.push_back({{1, 19, 13, 11}, {5, 5}, {19, {1, 2}, {3, 1}, {6, 2}, {6, 2}}});
  out.push_back({{1, 16, 3, 4}, {7, 7}, {16, {1, 1}, {}, {3, 3}, {3, 3}}});  // kernel > input
  // Planes wide enough to run in several bands of rows (16 lanes: 3 or more), with padding in
  // the first and last band only, dilated rows.
  out.push_back({{1, 17, 60, 100}, {3, 3}, {17, {2, 2}, {}, {1, 1}, {1, 1}}});
  out.push_back({{2, 9, 40, 150}, {5, 5}, {9, {1, 1}, {}, {2, 2}, {2, 2}}});
  out.push_back({{1, 16, 45, 120}, {7, 7}, {16, {1, 1}, {2, 1}, {3, 3}, {2, 4}}});
  out.push_back({{2, 21, 13}, {5}, {21, {1}, {}, {2}, {2}}});  // 1-D
  out.push_back({{1, 16, 30}, {4}, {16, {3}, {2}, {3}, {0}}});
  return out;
}

Shape weight_shape(const Case& c) {
  Shape ws{c.xs[1], 1};
  for (int64_t k : c.k) ws.push_back(k);
  return ws;
}

// Whether the Conv kernel hands this case to the lane path at the current SIMD level.
bool served(const Case& c) {
  const HostTensor x = rand_tensor(c.xs, 1), w = rand_tensor(weight_shape(c), 2);
  const Tensor xv = x.view(), wv = w.view();
  auto attrs = read_window_attrs(conv_attrs(c.p), "Conv");
  EXPECT_TRUE(attrs.ok());
  auto s = conv_shape(&xv, &wv, nullptr, attrs.value(), c.p.group, "Conv");
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() && depthwise_lanes_applies(s.value());
}

// At each SIMD level this CPU has (16, 8 or 4 lanes), through the Conv kernel at 1 and 2
// threads, with and without bias.
TEST(DepthwiseLanes, MatchesTheDefinition) {
  for (int level : {2, 1, 0}) {
    simd::force_simd_level(level);
    if (static_cast<int>(simd::simd_level()) != level) continue;
    SCOPED_TRACE("simd level " + std::to_string(level));
    int taken = 0;
    uint32_t seed = 500;
    for (const Case& c : cases()) {
      SCOPED_TRACE("X " + c.xs.to_string());
      taken += served(c);
      const HostTensor x = rand_tensor(c.xs, ++seed), w = rand_tensor(weight_shape(c), ++seed),
                       b = rand_tensor({c.xs[1]}, ++seed);
      const bool bias = seed % 2 == 0;
      Shape out;
      const auto want = ref_conv(x, w, bias ? &b : nullptr, c.p, &out);
      auto got = run_both("Conv", 11, {&x, &w, bias ? &b : nullptr}, 1, conv_attrs(c.p));
      ASSERT_EQ(got.size(), 1u);
      expect_close(got[0], out, want);
    }
    // The 4-wide grid at every lane width; most of the rest where vectors are wider.
    EXPECT_GE(taken, level == 2 ? 41 : 33);
  }
  simd::force_simd_level(-1);
}

TEST(DepthwiseLanes, LeavesWideStrideOneThreeTapRowsAndMultipliedConvsToTheRowPath) {
  EXPECT_FALSE(served({{1, 16, 112, 112}, {3, 3}, {16, {1, 1}, {}, {1, 1}, {1, 1}}}));
  // Two outputs per input channel.
  const HostTensor x = rand_tensor({1, 8, 7, 7}, 1), w = rand_tensor({16, 1, 3, 3}, 2);
  const Tensor xv = x.view(), wv = w.view();
  const ConvP p{8, {1, 1}, {}, {1, 1}, {1, 1}};
  auto s =
      conv_shape(&xv, &wv, nullptr, read_window_attrs(conv_attrs(p), "Conv").value(), 8, "Conv");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(depthwise_lanes_applies(s.value()));
}

// The bias and the activations written on vectors (Sigmoid and SiLU included) ride on the
// accumulators, per lane; a residual or Tanh runs per plane after the transpose back.
TEST(DepthwiseLanes, EpiloguesOnTheAccumulatorsAndPerPlane) {
  struct Variant {
    Activation act;
    bool residual;
  };
  const Case c{{2, 20, 14, 14}, {5, 5}, {20, {2, 2}, {}, {2, 2}, {2, 2}}};
  ASSERT_TRUE(served(c));
  const HostTensor x = rand_tensor(c.xs, 21), w = rand_tensor(weight_shape(c), 22);
  const HostTensor b = rand_tensor({20}, 23);
  for (const Variant& v :
       {Variant{Activation::kRelu, false}, Variant{Activation::kHardSwish, false},
        Variant{Activation::kSigmoid, false}, Variant{Activation::kSilu, false},
        Variant{Activation::kSilu, true}, Variant{Activation::kTanh, false},
        Variant{Activation::kRelu, true}, Variant{Activation::kNone, true}}) {
    SCOPED_TRACE("activation " + std::to_string(static_cast<int>(v.act)) + " residual " +
                 std::to_string(v.residual));
    Shape out;
    auto want = ref_conv(x, w, &b, c.p, &out);
    const HostTensor res = rand_tensor(out, 24);
    for (size_t i = 0; i < want.size(); ++i) {
      double t = want[i] + (v.residual ? res.data<float>()[i] : 0.0);
      if (v.act == Activation::kRelu) t = std::max(0.0, t);
      if (v.act == Activation::kHardSwish) t = t * std::min(1.0, std::max(0.0, t / 6 + 0.5));
      if (v.act == Activation::kSigmoid) t = 1.0 / (1.0 + std::exp(-t));
      if (v.act == Activation::kSilu) t = t / (1.0 + std::exp(-t));
      if (v.act == Activation::kTanh) t = std::tanh(t);
      want[i] = t;
    }
    Epilogue e;
    e.activation = v.act;
    if (v.residual) e.residual_input = 3;
    std::vector<const HostTensor*> in = {&x, &w, &b};
    if (v.residual) in.push_back(&res);
    const NodeInfo node = testing::node_info("Conv", 11, in, 1, conv_attrs(c.p));
    for (int threads : {1, 3}) {
      auto got = run_made(make_conv_kernel(node, e), in, 1, threads);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(got.value()[0], out, want);
    }
  }
}

}  // namespace
}  // namespace sod2::rt::linalg_test

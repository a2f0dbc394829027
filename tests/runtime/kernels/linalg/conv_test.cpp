#include <algorithm>

#include "runtime/kernels/linalg/conv_live_taps.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/simd.h"
#include "tests/runtime/kernels/linalg/conv_reference.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

void check_conv(Shape xs, Shape ws, bool bias, const ConvP& p, uint32_t seed) {
  SCOPED_TRACE("X " + xs.to_string() + " W " + ws.to_string() + " group " +
               std::to_string(p.group));
  const HostTensor x = rand_tensor(xs, seed), w = rand_tensor(ws, seed + 1),
                   b = rand_tensor({ws[0]}, seed + 2);
  Shape out;
  const auto want = ref_conv(x, w, bias ? &b : nullptr, p, &out);
  auto got = run_both("Conv", 11, {&x, &w, bias ? &b : nullptr}, 1, conv_attrs(p));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], out, want);
}

TEST(Conv, Basic2D) {
  check_conv({1, 3, 8, 8}, {4, 3, 3, 3}, true, {1, {}, {}, {1, 1}, {1, 1}}, 1);
  check_conv({2, 4, 9, 7}, {6, 4, 3, 2}, false, {1, {2, 1}, {1, 2}, {1, 0}, {2, 1}}, 2);
  check_conv({1, 32, 28, 28}, {48, 32, 3, 3}, true, {1, {}, {}, {1, 1}, {1, 1}}, 3);
  check_conv({1, 3, 30, 30}, {16, 3, 3, 3}, true, {1, {2, 2}, {}, {0, 0}, {1, 1}}, 4);
}

TEST(Conv, GroupedDepthwisePointwise) {
  check_conv({1, 4, 6, 6}, {6, 2, 3, 3}, true, {2, {}, {}, {1, 1}, {1, 1}}, 1);
  check_conv({2, 8, 10, 10}, {8, 1, 3, 3}, true, {8, {2, 2}, {}, {1, 1}, {1, 1}}, 2);
  check_conv({1, 8, 11, 9}, {16, 1, 3, 3}, false, {8, {1, 2}, {2, 1}, {2, 0}, {1, 3}}, 3);
  check_conv({1, 64, 28, 28}, {64, 1, 5, 5}, true, {64, {}, {}, {2, 2}, {2, 2}}, 4);
  check_conv({1, 16, 5, 5}, {8, 16, 1, 1}, true, {}, 5);
  check_conv({2, 64, 14, 14}, {96, 64, 1, 1}, false, {}, 6);
  check_conv({1, 8, 7, 7}, {8, 4, 1, 1}, true, {2, {2, 2}, {}, {}, {}}, 7);  // strided 1x1
}

// Every depthwise path (unrolled 3/5/7 with vertical stride 1/2, the generic loop) against the
// reference: odd sizes, widths below/above/between vector blocks, asymmetric and large pads,
// horizontal strides 1-3, dilations, channel multipliers.
void depthwise_cases() {
  uint32_t seed = 100;
  for (int64_t k : {3, 5, 7})
    for (int64_t st : {1, 2})
      for (int64_t w : {5, 13, 31, 57, 70}) {
        const int64_t h = w == 70 ? 9 : w + 2, pad = k / 2;
        check_conv({2, 3, h, w}, {3, 1, k, k}, true, {3, {st, st}, {}, {pad, pad}, {pad, pad}},
                   ++seed);
      }
  // No padding, asymmetric padding, padding larger than the kernel reach.
  check_conv({1, 4, 15, 23}, {4, 1, 3, 3}, false, {4, {2, 2}, {}, {0, 0}, {0, 0}}, ++seed);
  check_conv({1, 4, 15, 23}, {4, 1, 5, 5}, true, {4, {1, 1}, {}, {0, 2}, {3, 1}}, ++seed);
  check_conv({1, 2, 6, 7}, {2, 1, 3, 3}, true, {2, {1, 2}, {}, {4, 3}, {5, 4}}, ++seed);
  check_conv({1, 2, 9, 40}, {2, 1, 7, 7}, true, {2, {2, 1}, {}, {3, 3}, {2, 4}}, ++seed);
  // Horizontal stride 3, vertical stride 3, non-square and even kernels (generic loop).
  check_conv({1, 3, 17, 50}, {3, 1, 3, 3}, true, {3, {1, 3}, {}, {1, 1}, {1, 1}}, ++seed);
  check_conv({1, 3, 17, 50}, {3, 1, 3, 3}, true, {3, {3, 1}, {}, {1, 1}, {1, 1}}, ++seed);
  check_conv({2, 3, 12, 33}, {3, 1, 2, 4}, true, {3, {2, 2}, {}, {1, 2}, {0, 1}}, ++seed);
  check_conv({1, 3, 12, 19}, {3, 1, 1, 1}, true, {3, {2, 2}, {}, {}, {}}, ++seed);
  // Dilations (vertical dilation leaves the unrolled path; horizontal stays on it).
  check_conv({1, 3, 20, 37}, {3, 1, 3, 3}, true, {3, {1, 1}, {1, 2}, {1, 2}, {1, 2}}, ++seed);
  check_conv({1, 3, 20, 37}, {3, 1, 3, 3}, true, {3, {2, 2}, {2, 2}, {2, 2}, {2, 2}}, ++seed);
  check_conv({1, 3, 25, 29}, {3, 1, 5, 5}, false, {3, {1, 2}, {3, 1}, {6, 2}, {6, 2}}, ++seed);
  // Channel multipliers: one input channel to many outputs (Conv with C = 1 is depthwise too),
  // few planes so the outputs of one plane are split over threads.
  check_conv({1, 1, 41, 23}, {32, 1, 3, 3}, true, {1, {2, 2}, {}, {0, 0}, {0, 0}}, ++seed);
  check_conv({2, 3, 14, 14}, {6, 1, 5, 5}, true, {3, {1, 1}, {}, {2, 2}, {2, 2}}, ++seed);
  // Kernel taller than the input (every row window clipped).
  check_conv({1, 2, 3, 18}, {2, 1, 7, 7}, true, {2, {1, 1}, {}, {3, 3}, {3, 3}}, ++seed);
  // 1-D: long sequences with a wide kernel, strides and dilations.
  check_conv({2, 5, 375}, {5, 1, 15}, true, {5, {1}, {}, {7}, {7}}, ++seed);
  check_conv({1, 4, 101}, {8, 1, 4}, false, {4, {3}, {2}, {3}, {0}}, ++seed);
  check_conv({1, 3, 9}, {3, 1, 3}, true, {3, {2}, {}, {1}, {1}}, ++seed);
}

// At each SIMD level this CPU has (AVX-512: 16 lanes, AVX2: 8, baseline: 4), since block shapes
// and tails differ per level.
TEST(Conv, DepthwiseFastPaths) {
  for (int level : {2, 1, 0}) {
    SCOPED_TRACE("simd level " + std::to_string(level));
    simd::force_simd_level(level);
    depthwise_cases();
  }
  simd::force_simd_level(-1);
}

// The dense direct path (several input channels per group, kernel > 1x1, up to 1280 taps per
// output, rows filling 2/3 of their vectors) at every SIMD level: output-channel counts around
// the register block of 8, widths within / between / above vector blocks, strides, dilations,
// pads, groups, 1-D.
void direct_cases() {
  uint32_t seed = 300;
  for (int64_t m : {1, 8, 13})
    for (int64_t w : {12, 29, 46})
      for (int64_t st : {1, 2})
        check_conv({2, 5, 9, w}, {m, 5, 3, 3}, true, {1, {st, st}, {}, {1, 1}, {1, 1}}, ++seed);
  check_conv({1, 3, 31, 45}, {16, 3, 3, 3}, true, {1, {2, 2}, {}, {1, 1}, {1, 1}}, ++seed);
  check_conv({1, 6, 12, 23}, {9, 6, 5, 5}, false, {1, {1, 1}, {}, {2, 2}, {2, 2}}, ++seed);
  check_conv({1, 6, 12, 23}, {9, 6, 2, 4}, true, {1, {3, 2}, {}, {0, 3}, {1, 2}}, ++seed);
  check_conv({1, 4, 20, 30}, {7, 4, 3, 3}, true, {1, {1, 1}, {2, 3}, {2, 3}, {2, 3}}, ++seed);
  check_conv({2, 8, 11, 21}, {12, 4, 3, 3}, true, {2, {1, 2}, {}, {1, 1}, {1, 1}}, ++seed);
  check_conv({1, 4, 10, 14}, {6, 4, 3, 3}, true, {1, {}, {}, {5, 0}, {6, 0}}, ++seed);  // pads > k
  check_conv({1, 32, 14, 23}, {32, 32, 3, 3}, true, {1, {2, 2}, {}, {0, 0}, {0, 0}}, ++seed);
  check_conv({2, 6, 50}, {10, 6, 5}, true, {1, {1}, {}, {2}, {2}}, ++seed);  // 1-D
  check_conv({1, 6, 50}, {4, 3, 3}, false, {2, {2}, {2}, {1}, {3}}, ++seed);
  // Narrow rows with output channels in whole vectors: vectorised over channels instead.
  check_conv({2, 32, 30, 39}, {32, 32, 3, 3}, true, {1, {2, 2}, {}, {0, 0}, {0, 0}}, ++seed);
  check_conv({1, 6, 9, 7}, {16, 6, 3, 3}, true, {1, {}, {}, {1, 1}, {1, 1}}, ++seed);
  check_conv({1, 4, 8, 3}, {48, 4, 2, 2}, false, {1, {1, 1}, {2, 1}, {1, 0}, {0, 1}}, ++seed);
  check_conv({2, 8, 10, 10}, {32, 4, 3, 3}, true, {2, {2, 2}, {}, {1, 1}, {1, 1}}, ++seed);
  check_conv({1, 8, 9}, {16, 8, 3}, true, {1, {1}, {}, {1}, {1}}, ++seed);
  check_conv({1, 3, 13, 1}, {64, 3, 3, 1}, true, {1, {2, 1}, {}, {1, 0}, {1, 0}}, ++seed);
}

TEST(Conv, DirectPaths) {
  for (int level : {2, 1, 0}) {
    SCOPED_TRACE("simd level " + std::to_string(level));
    simd::force_simd_level(level);
    direct_cases();
  }
  simd::force_simd_level(-1);
  // Shapes that stay on im2col + GEMM: over 1280 taps per output, narrow outputs.
  check_conv({1, 160, 6, 7}, {8, 160, 3, 3}, true, {1, {}, {}, {1, 1}, {1, 1}}, 400);
  check_conv({1, 4, 5, 3}, {5, 4, 3, 3}, true, {1, {}, {}, {1, 1}, {1, 1}}, 401);
}

TEST(Epilogue, DirectPathWithResidual) {
  const ConvP p{1, {2, 2}, {}, {1, 1}, {1, 1}};
  const HostTensor x = rand_tensor({2, 6, 15, 40}, 21), w = rand_tensor({11, 6, 3, 3}, 22);
  const HostTensor b = rand_tensor({11}, 23), fb = rand_tensor({11}, 24);
  Shape out;
  auto want = ref_conv(x, w, &b, p, &out);
  const HostTensor res = rand_tensor(out, 25);
  const int64_t plane = out[2] * out[3];
  for (size_t i = 0; i < want.size(); ++i) {
    const double v = want[i] + fb.data<float>()[(i / plane) % out[1]] + res.data<float>()[i];
    want[i] = v > 0 ? v : 0.1 * v;
  }
  Epilogue e;
  e.bias_input = 3;
  e.residual_input = 4;
  e.activation = Activation::kLeakyRelu;
  e.alpha = 0.1f;
  const std::vector<const HostTensor*> in = {&x, &w, &b, &fb, &res};
  const NodeInfo node = testing::node_info("Conv", 11, in, 1, conv_attrs(p));
  for (int threads : {1, 2}) {
    auto got = run_made(make_conv_kernel(node, e), in, 1, threads);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_close(got.value()[0], out, want);
  }
}

TEST(Epilogue, DepthwisePathsWithResidual) {
  // Epilogue per row block on the unrolled path and per row on the generic one.
  struct Case {
    Shape xs, ws;
    ConvP p;
  };
  for (const Case& c : {Case{{2, 4, 19, 21}, {4, 1, 7, 7}, {4, {2, 2}, {}, {3, 3}, {3, 3}}},
                        Case{{1, 4, 9, 70}, {4, 1, 3, 3}, {4, {}, {}, {1, 1}, {1, 1}}},
                        Case{{1, 3, 40}, {6, 1, 15}, {3, {}, {}, {7}, {7}}}}) {
    SCOPED_TRACE(c.ws.to_string());
    const HostTensor x = rand_tensor(c.xs, 11), w = rand_tensor(c.ws, 12);
    const HostTensor b = rand_tensor({c.ws[0]}, 13);
    Shape out;
    auto want = ref_conv(x, w, &b, c.p, &out);
    const HostTensor res = rand_tensor(out, 14);
    for (size_t i = 0; i < want.size(); ++i) {
      const double v = want[i];
      want[i] = v * std::min(1.0, std::max(0.0, v / 6 + 0.5)) + res.data<float>()[i];
    }
    Epilogue e;
    e.residual_input = 3;
    e.residual_before_activation = false;
    e.activation = Activation::kHardSwish;
    const std::vector<const HostTensor*> in = {&x, &w, &b, &res};
    const NodeInfo node = testing::node_info("Conv", 11, in, 1, conv_attrs(c.p));
    for (int threads : {1, 2}) {
      auto got = run_made(make_conv_kernel(node, e), in, 1, threads);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(got.value()[0], out, want);
    }
  }
}

TEST(Conv, OneAndThreeD) {
  check_conv({2, 3, 20}, {4, 3, 5}, true, {1, {2}, {2}, {2}, {1}}, 1);
  check_conv({1, 6, 17}, {6, 1, 3}, true, {6, {1}, {}, {1}, {1}}, 2);  // 1-D depthwise
  check_conv({1, 2, 5, 6, 4}, {3, 2, 3, 3, 2}, true, {1, {1, 2, 1}, {}, {1, 1, 0}, {1, 0, 1}}, 3);
  check_conv({1, 4, 4, 5, 5}, {4, 1, 3, 3, 3}, false, {4, {}, {}, {1, 1, 1}, {1, 1, 1}}, 4);
}

// Taps that read only padding for every output are dropped (conv_live_taps.h): DeepLab's atrous
// rates wider than the map leave the centre tap alone.
TEST(Conv, TapsReadingOnlyPaddingAreDropped) {
  Window3 g;
  g.spatial = 2;
  g.in[1] = g.in[2] = 14;
  g.out[1] = g.out[2] = 14;
  g.k[1] = g.k[2] = 3;
  g.dil[1] = g.dil[2] = 36;
  g.pad_begin[1] = g.pad_begin[2] = g.pad_end[1] = g.pad_end[2] = 36;
  const LiveTaps live = live_taps(g);
  EXPECT_TRUE(live.trims);
  EXPECT_EQ(live.first[1], 1);
  EXPECT_EQ(live.count[1], 1);
  const Window3 t = trimmed_window(g, live);
  EXPECT_EQ(t.k[1] * t.k[2], 1);
  EXPECT_EQ(t.pad_begin[1] + t.pad_end[1] + t.pad_begin[2] + t.pad_end[2], 0);
  // Rate 12 on the same map reaches the image with every tap.
  g.dil[1] = g.dil[2] = g.pad_begin[1] = g.pad_begin[2] = g.pad_end[1] = g.pad_end[2] = 12;
  EXPECT_FALSE(live_taps(g).trims);
}

TEST(Conv, DroppedTapsKeepTheDefinitionsResult) {
  const std::vector<std::pair<std::pair<Shape, Shape>, ConvP>> cases = {
      // Only the centre tap lives (any path: GEMM, blocked, depthwise).
      {{{1, 4, 5, 5}, {6, 4, 3, 3}}, {1, {}, {6, 6}, {6, 6}, {6, 6}}},
      {{{2, 16, 6, 7}, {32, 16, 3, 3}}, {1, {}, {8, 8}, {8, 8}, {8, 8}}},
      {{{1, 8, 6, 6}, {8, 1, 3, 3}}, {8, {}, {9, 9}, {9, 9}, {9, 9}}},
      // The first tap dead above only, on one axis; strided; 1-D.
      {{{1, 3, 5, 9}, {4, 3, 3, 3}}, {1, {}, {3, 1}, {7, 1}, {1, 1}}},
      {{{1, 3, 9, 9}, {4, 3, 3, 3}}, {1, {2, 2}, {5, 5}, {10, 1}, {1, 10}}},
      {{{2, 4, 6}, {5, 4, 5}}, {1, {}, {4}, {9}, {9}}},
  };
  uint32_t seed = 700;
  for (const auto& [shapes, p] : cases) {
    const auto& [xs, ws] = shapes;
    SCOPED_TRACE("X " + xs.to_string() + " W " + ws.to_string());
    const HostTensor x = rand_tensor(xs, ++seed), w = rand_tensor(ws, ++seed),
                     b = rand_tensor({ws[0]}, ++seed);
    Shape out;
    const auto want = ref_conv(x, w, &b, p, &out);
    // W as an input that may change (trimmed into scratch each run) and as a constant (kept).
    for (bool constant : {false, true}) {
      SCOPED_TRACE(constant ? "constant W" : "W an input");
      const std::vector<const HostTensor*> in = {&x, &w, &b};
      NodeInfo node = testing::node_info("Conv", 11, in, 1, conv_attrs(p));
      node.input_constant = {false, constant, false};
      auto made = make_conv_kernel(node, Epilogue{});
      ASSERT_TRUE(made.ok());
      std::vector<Tensor> views = {x.view(), w.view(), b.view()};
      std::vector<const Tensor*> ptrs = {&views[0], &views[1], &views[2]};
      for (int threads : {1, 2}) {
        testing::HeapAllocator alloc(1);
        ThreadPool pool(threads);
        KernelContext ctx(ptrs, &alloc, &pool);
        ASSERT_TRUE(made.value()->run(ctx).ok());
        expect_close(alloc.outputs[0], out, want);
      }
    }
  }
}

TEST(Conv, AutoPad) {
  const HostTensor x = rand_tensor({1, 2, 6, 6}, 1), w = rand_tensor({3, 2, 3, 3}, 2);
  struct Case {
    const char* mode;
    std::vector<int64_t> pb, pe;
  };
  for (const Case& c : {Case{"SAME_UPPER", {0, 0}, {1, 1}}, Case{"SAME_LOWER", {1, 1}, {0, 0}},
                        Case{"VALID", {0, 0}, {0, 0}}}) {
    SCOPED_TRACE(c.mode);
    Shape out;
    const auto want = ref_conv(x, w, nullptr, {1, {2, 2}, {}, c.pb, c.pe}, &out);
    auto got = run_both("Conv", 11, {&x, &w}, 1, A().s("auto_pad", c.mode).is("strides", {2, 2}));
    ASSERT_EQ(got.size(), 1u);
    expect_close(got[0], out, want);
  }
}

TEST(Conv, ZeroSizedAndErrors) {
  const HostTensor x0(DType::kFloat, Shape{0, 3, 5, 5});
  const HostTensor w = rand_tensor({4, 3, 3, 3}, 1);
  auto got = run_both("Conv", 11, {&x0, &w}, 1, {});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape().to_string(), "[0,4,3,3]");
  // No input channels: the output is the bias.
  const HostTensor xc(DType::kFloat, Shape{1, 0, 4, 4}), wc(DType::kFloat, Shape{2, 0, 3, 3});
  const HostTensor b = floats({2}, {0.5f, -1.f});
  got = run_both("Conv", 11, {&xc, &wc, &b}, 1, {});
  ASSERT_EQ(got.size(), 1u);
  std::vector<double> want(4, 0.5);
  want.insert(want.end(), 4, -1.0);
  expect_close(got[0], Shape{1, 2, 2, 2}, want);

  const HostTensor x = rand_tensor({1, 6, 5, 5}, 2), wg = rand_tensor({4, 3, 3, 3}, 3);
  Status s = run_status("Conv", 11, {&x, &wg}, 1, A().i("group", 4));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[1,6,5,5]"), std::string::npos) << s.message();
  EXPECT_EQ(run_status("Conv", 11, {&x, &w}, 1, {}).code(), StatusCode::kInvalidArgument);
  const HostTensor big = rand_tensor({2, 6, 7, 7}, 4);
  EXPECT_EQ(run_status("Conv", 11, {&x, &big}, 1, {}).code(), StatusCode::kInvalidArgument);
  const HostTensor xi(DType::kInt32, Shape{1, 3, 5, 5});
  s = run_status("Conv", 11, {&xi, &w}, 1, {});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("int32"), std::string::npos) << s.message();
}

TEST(Epilogue, ConvPaths) {
  struct Case {
    Shape xs, ws;
    ConvP p;
  };
  for (const Case& c : {Case{{1, 8, 12, 12}, {16, 8, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
                        Case{{2, 8, 12, 12}, {8, 1, 3, 3}, {8, {}, {}, {1, 1}, {1, 1}}},
                        Case{{1, 8, 12, 12}, {16, 8, 1, 1}, {}},
                        // More output channels than positions: at 2 threads each takes a range
                        // of output channels (112 + 88), on the input as it is and through
                        // im2col (stride 2).
                        Case{{1, 128, 7, 7}, {200, 128, 1, 1}, {}},
                        Case{{1, 128, 13, 13}, {200, 128, 1, 1}, {1, {2, 2}, {}, {}, {}}}}) {
    SCOPED_TRACE(c.ws.to_string());
    const HostTensor x = rand_tensor(c.xs, 1), w = rand_tensor(c.ws, 2);
    const HostTensor b = rand_tensor({c.ws[0]}, 3), fb = rand_tensor({c.ws[0]}, 4);
    Shape out;
    auto want = ref_conv(x, w, &b, c.p, &out);
    const HostTensor res = rand_tensor(out, 5);
    const int64_t plane = out.numel() / (out[0] * out[1]);
    for (size_t i = 0; i < want.size(); ++i) {
      const double v = want[i] + fb.data<float>()[(i / plane) % out[1]] + res.data<float>()[i];
      want[i] = std::max(0.0, v);
    }
    Epilogue e;
    e.bias_input = 3;
    e.residual_input = 4;
    e.activation = Activation::kRelu;
    const std::vector<const HostTensor*> in = {&x, &w, &b, &fb, &res};
    const NodeInfo node = testing::node_info("Conv", 11, in, 1, conv_attrs(c.p));
    for (int threads : {1, 2}) {
      auto got = run_made(make_conv_kernel(node, e), in, 1, threads);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(got.value()[0], out, want);
    }
  }
}

// ConvTranspose from the definition: every input value scatters a kernel-sized patch.
std::vector<double> ref_conv_transpose(const HostTensor& x, const HostTensor& w,
                                       const HostTensor* b, int64_t group,
                                       const std::vector<int64_t>& s, const std::vector<int64_t>& d,
                                       const std::vector<int64_t>& pb,
                                       const std::vector<int64_t>& out_sp, Shape* out) {
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  const int ns = xs.rank() - 2;
  const int64_t N = xs[0], C = xs[1], mg = ws[1], M = mg * group, cg = C / group;
  int64_t in[2] = {1, 1}, k[2] = {1, 1}, o[2] = {1, 1}, st[2] = {1, 1}, dl[2] = {1, 1},
          p[2] = {0, 0};
  *out = Shape{N, M};
  for (int i = 0; i < ns; ++i) {
    const int j = 2 - ns + i;
    in[j] = xs[2 + i];
    k[j] = ws[2 + i];
    st[j] = s[i];
    dl[j] = d[i];
    p[j] = pb[i];
    o[j] = out_sp[i];
    out->push_back(o[j]);
  }
  std::vector<double> y(static_cast<size_t>(out->numel()), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t i = 0; i < o[0] * o[1]; ++i)
        y[static_cast<size_t>((n * M + m) * o[0] * o[1] + i)] = b ? b->data<float>()[m] : 0.0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t iy = 0; iy < in[0]; ++iy)
        for (int64_t ix = 0; ix < in[1]; ++ix) {
          const double xv = x.data<float>()[((n * C + c) * in[0] + iy) * in[1] + ix];
          const int64_t g = c / cg;
          for (int64_t m = 0; m < mg; ++m)
            for (int64_t ky = 0; ky < k[0]; ++ky)
              for (int64_t kx = 0; kx < k[1]; ++kx) {
                const int64_t oy = iy * st[0] - p[0] + ky * dl[0];
                const int64_t ox = ix * st[1] - p[1] + kx * dl[1];
                if (oy < 0 || oy >= o[0] || ox < 0 || ox >= o[1]) continue;
                const double wv = w.data<float>()[((c * mg + m) * k[0] + ky) * k[1] + kx];
                y[static_cast<size_t>(((n * M + g * mg + m) * o[0] + oy) * o[1] + ox)] += xv * wv;
              }
        }
  return y;
}

TEST(ConvTranspose, StridesPadsOutputPaddingGroups) {
  {
    const HostTensor x = rand_tensor({2, 4, 5, 6}, 1), w = rand_tensor({4, 3, 3, 3}, 2),
                     b = rand_tensor({3}, 3);
    Shape out;
    // out = 2*(in-1) + 1 + 3 - 1 - 1
    const auto want = ref_conv_transpose(x, w, &b, 1, {2, 2}, {1, 1}, {1, 1}, {10, 12}, &out);
    auto got =
        run_both("ConvTranspose", 11, {&x, &w, &b}, 1,
                 A().is("strides", {2, 2}).is("pads", {1, 1, 1, 1}).is("output_padding", {1, 1}));
    ASSERT_EQ(got.size(), 1u);
    expect_close(got[0], out, want);
  }
  {
    const HostTensor x = rand_tensor({1, 4, 4, 4}, 4), w = rand_tensor({4, 2, 3, 2}, 5);
    Shape out;
    // group 2, dilation 2 on H: out H = 1*(4-1) + (3-1)*2 + 1 - 0 - 1 = 7 ; W = 2*3 + 2 - 1 - 0 = 7
    const auto want = ref_conv_transpose(x, w, nullptr, 2, {1, 2}, {2, 1}, {0, 1}, {7, 7}, &out);
    auto got = run_both(
        "ConvTranspose", 11, {&x, &w}, 1,
        A().i("group", 2).is("strides", {1, 2}).is("dilations", {2, 1}).is("pads", {0, 1, 1, 0}));
    ASSERT_EQ(got.size(), 1u);
    expect_close(got[0], out, want);
  }
}

TEST(ConvTranspose, OutputShapeAutoPadAnd1D) {
  const HostTensor x = rand_tensor({1, 3, 4, 4}, 1), w = rand_tensor({3, 2, 3, 3}, 2);
  Shape out;
  // Full size 2*3+3 = 9; output_shape 8 -> total padding 1: begin 1, end 0 (NOTSET).
  auto want = ref_conv_transpose(x, w, nullptr, 1, {2, 2}, {1, 1}, {1, 1}, {8, 8}, &out);
  auto got = run_both("ConvTranspose", 11, {&x, &w}, 1,
                      A().is("strides", {2, 2}).is("output_shape", {8, 8}));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], out, want);
  // SAME_UPPER: output = in * stride = 8, total 1 -> begin 0, end 1.
  want = ref_conv_transpose(x, w, nullptr, 1, {2, 2}, {1, 1}, {0, 0}, {8, 8}, &out);
  got = run_both("ConvTranspose", 11, {&x, &w}, 1,
                 A().is("strides", {2, 2}).s("auto_pad", "SAME_UPPER"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], out, want);
  const HostTensor x1 = rand_tensor({2, 2, 7}, 3), w1 = rand_tensor({2, 3, 4}, 4);
  want = ref_conv_transpose(x1, w1, nullptr, 1, {3}, {1}, {1}, {3 * 6 + 4 - 2 + 1}, &out);
  got = run_both("ConvTranspose", 11, {&x1, &w1}, 1,
                 A().is("strides", {3}).is("pads", {1, 1}).is("output_padding", {1}));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], out, want);
  const HostTensor bad = rand_tensor({4, 2, 3, 3}, 5);
  EXPECT_EQ(run_status("ConvTranspose", 11, {&x, &bad}, 1, {}).code(),
            StatusCode::kInvalidArgument);
}

// Without input channels X and W are empty whatever their other dims: the columns' size,
// W's channels * kernel * X's positions, overflowed to nothing and the GEMM wrote past it.
TEST(ConvTranspose, HugeColumnsOfEmptyOperandsAreRefused) {
  const int64_t in = int64_t{1} << 30, k = int64_t{1} << 40;
  HostTensor x(DType::kFloat, Shape{1, 0, in});
  HostTensor w(DType::kFloat, Shape{0, 1, k});
  // Full output in - 1 + k; the pads leave one position.
  Status st = run_status("ConvTranspose", 11, {&x, &w}, 1, A().is("pads", {0, in + k - 2}));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
}

// W's channels times group (2^62 * 4) wrapped to 0 output channels, and the run succeeded.
TEST(ConvTranspose, OverflowingOutputChannelsAreRefused) {
  HostTensor x(DType::kFloat, Shape{1, 0, 3});
  HostTensor w(DType::kFloat, Shape{0, int64_t{1} << 62, 1});
  Status st = run_status("ConvTranspose", 11, {&x, &w}, 1, A().i("group", 4));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
}

// stride * (in - 1) overflowed int64; with output_shape the wrapped size was taken as valid.
TEST(ConvTranspose, OverflowingOutputSizeIsRefused) {
  const HostTensor x = rand_tensor({1, 1, 3}, 1), w = rand_tensor({1, 1, 1}, 2);
  Status st = run_status("ConvTranspose", 11, {&x, &w}, 1,
                         A().is("strides", {int64_t{1} << 62}).is("output_shape", {5}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  st = run_status("ConvTranspose", 11, {&x, &w}, 1,
                  A().is("strides", {int64_t{1} << 62}).s("auto_pad", "SAME_UPPER"));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
}

}  // namespace
}  // namespace sod2::rt::linalg_test

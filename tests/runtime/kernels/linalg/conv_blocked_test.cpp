// The blocked oneDNN convolution (conv_blocked.cpp): which shapes it serves, its results against
// the definition for every way it splits work over threads, its weight caches, and the Conv
// kernel through it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/kernels/linalg/conv_blocked.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "tests/runtime/kernels/linalg/conv_reference.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

// Runs `conv` once on x and w (no bias) with `threads` threads. Returns whether the blocked path
// served it; *y gets the output when it did.
Expected<bool> run_blocked(BlockedConv& conv, const HostTensor& x, const HostTensor& w,
                           const ConvP& p, int threads, HostTensor* y,
                           const EpilogueRun& e = EpilogueRun{}, bool winograd = true) {
  SOD2_ASSIGN_OR_RETURN(WindowAttrs attrs, read_window_attrs(conv_attrs(p), "Conv"));
  const Tensor xv = x.view(), wv = w.view();
  SOD2_ASSIGN_OR_RETURN(ConvShape s, conv_shape(&xv, &wv, nullptr, attrs, p.group, "Conv"));
  *y = HostTensor(DType::kFloat, s.out);
  std::vector<const Tensor*> none;
  testing::HeapAllocator alloc(0);
  ThreadPool pool(threads);
  KernelContext ctx(none, &alloc, &pool);
  ctx.set_winograd(winograd);
  return conv.run(ctx, s, x.data<float>(), w.data<float>(), y->data<float>(), e);
}

// Runs `conv` and expects the blocked path to serve it with the definition's result.
void expect_served_as_defined(BlockedConv& conv, const HostTensor& x, const HostTensor& w,
                              const ConvP& p, int threads) {
  HostTensor y;
  auto served = run_blocked(conv, x, w, p, threads, &y);
  ASSERT_TRUE(served.ok()) << served.status().to_string();
  ASSERT_TRUE(served.value());
  Shape out;
  expect_close(y, out, ref_conv(x, w, nullptr, p, &out));
}

struct Case {
  Shape xs, ws;
  ConvP p;
};

// Each exercises one way of splitting: whole images per thread, bands of rows (several sizes,
// the first and last padded), ranges of output channels (weights larger than the input, or
// fewer output rows than threads), 8-wide
// blocks, 1-D, strides, dilations and asymmetric padding; an input read as NCHW (fewer
// channels than a block, as an RGB stem); and channels that fill their last block only partly
// (MobileNet's 24 and 40), padded with zeros.
std::vector<Case> served_cases() {
  return {
      {{1, 32, 13, 17}, {48, 32, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      {{2, 16, 9, 10}, {32, 16, 3, 3}, {1, {2, 2}, {}, {0, 1}, {1, 0}}},
      {{3, 32, 5, 5}, {64, 32, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      {{1, 16, 20, 11}, {16, 16, 5, 5}, {1, {}, {2, 2}, {4, 4}, {4, 4}}},
      {{2, 16, 40}, {32, 16, 7}, {1, {3}, {}, {3}, {2}}},
      {{1, 8, 10, 10}, {24, 8, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      {{1, 16, 1, 30}, {16, 16, 1, 3}, {1, {}, {}, {0, 1}, {0, 1}}},
      {{1, 3, 23, 20}, {32, 3, 7, 7}, {1, {2, 2}, {}, {3, 3}, {3, 3}}},
      {{2, 3, 23, 20}, {32, 3, 7, 7}, {1, {2, 2}, {}, {3, 3}, {3, 3}}},
      {{1, 12, 8, 8}, {16, 12, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      // Groups whose channels fill whole blocks (RegNet's, ResNeXt's): 16 and 8 wide, by images
      // and by bands, strided.
      {{1, 32, 8, 8}, {32, 16, 3, 3}, {2, {}, {}, {1, 1}, {1, 1}}},
      {{3, 64, 9, 7}, {64, 16, 3, 3}, {4, {2, 2}, {}, {1, 1}, {1, 1}}},
      {{1, 48, 30, 9}, {48, 8, 3, 3}, {6, {}, {}, {1, 1}, {1, 1}}},
      {{1, 24, 9, 9}, {40, 24, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      {{2, 40, 11, 7}, {24, 40, 3, 3}, {1, {2, 2}, {}, {1, 1}, {1, 1}}},
      {{1, 24, 33, 30}, {56, 24, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      // Ranges of output channels of one image that read all of an NCHW X: blocked once for
      // them (padded, and whole).
      {{1, 24, 6, 6}, {64, 24, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      {{1, 32, 7, 7}, {64, 32, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      // Fewer output rows than threads (a 1-D conv is one; two rows on three threads): ranges
      // of output channels although the input outweighs the weights.
      {{1, 64, 99}, {64, 64, 3}, {1, {2}, {}, {1}, {1}}},
      {{1, 48, 2, 40}, {48, 48, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
  };
}

TEST(BlockedConv, ServesDenseConvsAndMatchesTheDefinitionOnAnyThreadCount) {
  if (!BlockedConv::available()) GTEST_SKIP() << "this build's GEMM library is not oneDNN";
  for (const Case& c : served_cases()) {
    SCOPED_TRACE("X " + c.xs.to_string() + " W " + c.ws.to_string());
    const HostTensor x = rand_tensor(c.xs, 1), w = rand_tensor(c.ws, 2);
    Shape out;
    const std::vector<double> want = ref_conv(x, w, nullptr, c.p, &out);
    HostTensor first;
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      BlockedConv conv(true);
      HostTensor y;
      auto served = run_blocked(conv, x, w, c.p, threads, &y);
      ASSERT_TRUE(served.ok()) << served.status().to_string();
      ASSERT_TRUE(served.value());
      expect_close(y, out, want);
      // Thread counts agree to rounding; a 3x3 conv may run as Winograd F(2x2, 3x3) in one split
      // and directly in another (or on another grid of tiles), which rounds differently.
      const bool winograd_shape = c.ws.rank() == 4 && c.ws[2] == 3 && c.ws[3] == 3 &&
                                  c.p.group == 1 && c.p.strides.empty() && c.p.dil.empty();
      if (threads == 1)
        first = std::move(y);
      else
        expect_close(y, out, values(first), winograd_shape ? 1e-5 : 1e-6);
    }
  }
}

// A 3x3 conv on a batch large enough for its transformed weights (16 * C * M floats) and
// scratchpads (0.2-2 MB a thread) against its N * M * 40 * 40 outputs runs as Winograd
// F(2x2, 3x3) on every split, within rounding of the definition, its weights packed once; the
// session's switch turns it off, and a small image never takes it. 128 -> 128 channels are more
// than oneDNN's Winograd conv takes at once on CPUs of 1 MB of L2 per core: there it runs on
// ranges of the output channels (a batch of 8 leaves room for a whole-image scratchpad where a
// CPU's caches let oneDNN take them all).
TEST(BlockedConv, LargeThreeByThreeConvsRunAsWinogradWithinRounding) {
  if (!BlockedConv::available()) GTEST_SKIP() << "this build's GEMM library is not oneDNN";
  if (BlockedConv::block_width() != 16) GTEST_SKIP() << "oneDNN's Winograd convs need AVX-512";
  const ConvP p{1, {}, {}, {1, 1}, {1, 1}};
  struct Size {
    int64_t images, channels, size;
  };
  for (const Size& c : std::vector<Size>{{8, 32, 40}, {1, 32, 5}, {8, 128, 40}}) {
    const int64_t channels = c.channels, size = c.size;
    const HostTensor w = rand_tensor({channels, channels, 3, 3}, 2);
    const HostTensor x = rand_tensor({c.images, channels, size, size}, 1);
    Shape out;
    const std::vector<double> want = ref_conv(x, w, nullptr, p, &out);
    for (int threads : {1, 2}) {
      for (const bool winograd : {true, false}) {
        SCOPED_TRACE(std::to_string(channels) + " channels, " + std::to_string(size) + "x" +
                     std::to_string(size) + ", " + std::to_string(threads) + " threads, winograd " +
                     (winograd ? "on" : "off"));
        BlockedConv conv(true);
        for (int run = 0; run < 2; ++run) {
          HostTensor y;
          auto served = run_blocked(conv, x, w, p, threads, &y, EpilogueRun{}, winograd);
          ASSERT_TRUE(served.ok()) << served.status().to_string();
          ASSERT_TRUE(served.value());
          expect_close(y, out, want);
        }
        const int64_t reorders = conv.weight_reorders();
        HostTensor y;
        ASSERT_TRUE(run_blocked(conv, x, w, p, threads, &y, EpilogueRun{}, winograd).ok());
        EXPECT_EQ(conv.weight_reorders(), reorders);
        if (winograd && size > 5)
          EXPECT_GT(conv.winograd_parts(), 0);
        else
          EXPECT_EQ(conv.winograd_parts(), 0);
      }
    }
  }
}

TEST(BlockedConv, BandsWhollyInThePaddingReadZeros) {
  if (!BlockedConv::available()) GTEST_SKIP() << "this build's GEMM library is not oneDNN";
  // Padding wider than the kernel, above the image, below it, and an RGB input: with the image
  // split into bands over 2 or 3 threads, some bands read nothing of the image.
  const std::vector<Case> cases = {
      {{1, 16, 2, 2}, {16, 16, 3, 3}, {1, {}, {}, {8, 1}, {8, 1}}},
      {{1, 16, 2, 2}, {16, 16, 3, 3}, {1, {}, {}, {1, 1}, {8, 1}}},
      {{1, 3, 2, 5}, {16, 3, 3, 3}, {1, {}, {}, {6, 1}, {2, 1}}},
  };
  for (const Case& c : cases) {
    for (int threads : {2, 3}) {
      SCOPED_TRACE("X " + c.xs.to_string() + ", " + std::to_string(threads) + " threads");
      const HostTensor x = rand_tensor(c.xs, 30), w = rand_tensor(c.ws, 31);
      BlockedConv conv(true);
      ASSERT_NO_FATAL_FAILURE(expect_served_as_defined(conv, x, w, c.p, threads));
    }
  }
}

TEST(BlockedConv, LeavesWhatItDoesNotServeToTheOtherPaths) {
  if (!BlockedConv::available()) GTEST_SKIP() << "this build's GEMM library is not oneDNN";
  const std::vector<Case> others = {
      // Output channels whose padding to whole blocks (of 8 or 16) would add more than half their
      // work, 1x1 kernels (a GEMM on the input as it is), groups narrower than a block, depthwise
      // (paths of its own), 3-D, and an image wholly in the padding of the one band it makes.
      {{1, 16, 8, 8}, {4, 16, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      {{1, 16, 8, 8}, {32, 16, 1, 1}, {}},
      {{1, 32, 8, 8}, {32, 4, 3, 3}, {8, {}, {}, {1, 1}, {1, 1}}},
      {{1, 32, 8, 8}, {32, 1, 3, 3}, {32, {}, {}, {1, 1}, {1, 1}}},
      {{1, 16, 4, 4, 4}, {16, 16, 3, 3, 3}, {1, {}, {}, {1, 1, 1}, {1, 1, 1}}},
      {{2, 16, 1, 3}, {16, 16, 2, 1}, {1, {4, 1}, {}, {2, 0}, {0, 0}}},
  };
  for (const Case& c : others) {
    SCOPED_TRACE("X " + c.xs.to_string() + " W " + c.ws.to_string());
    const HostTensor x = rand_tensor(c.xs, 3), w = rand_tensor(c.ws, 4);
    BlockedConv conv(true);
    HostTensor y;
    auto served = run_blocked(conv, x, w, c.p, 3, &y);
    ASSERT_TRUE(served.ok()) << served.status().to_string();
    EXPECT_FALSE(served.value());
    // The Conv kernel still computes it.
    Shape out;
    const std::vector<double> want = ref_conv(x, w, nullptr, c.p, &out);
    auto got = run_both("Conv", 11, {&x, &w}, 1, conv_attrs(c.p));
    ASSERT_EQ(got.size(), 1u);
    expect_close(got[0], out, want);
  }
}

TEST(BlockedConv, EpilogueWithResidualBeforeAndAfterTheActivation) {
  if (!BlockedConv::available()) GTEST_SKIP() << "this build's GEMM library is not oneDNN";
  const ConvP p{1, {}, {}, {1, 1}, {1, 1}};
  for (const Shape& xs : {Shape{1, 16, 11, 9}, Shape{2, 16, 11, 9}, Shape{3, 16, 11, 9}}) {
    SCOPED_TRACE("X " + xs.to_string());
    const HostTensor x = rand_tensor(xs, 5), w = rand_tensor({32, 16, 3, 3}, 6);
    const HostTensor b = rand_tensor({32}, 7), fb = rand_tensor({32}, 8);
    Shape out;
    const std::vector<double> conv = ref_conv(x, w, &b, p, &out);
    const HostTensor res = rand_tensor(out, 9);
    const int64_t plane = out[2] * out[3];
    for (bool before : {true, false}) {
      SCOPED_TRACE(before ? "residual before the activation" : "residual after it");
      std::vector<double> want(conv.size());
      for (size_t i = 0; i < conv.size(); ++i) {
        double v = conv[i] + fb.data<float>()[(i / plane) % out[1]];
        if (before) v += res.data<float>()[i];
        v = v > 0 ? v : 0.1 * v;
        if (!before) v += res.data<float>()[i];
        want[i] = v;
      }
      Epilogue e;
      e.bias_input = 3;
      e.residual_input = 4;
      e.residual_before_activation = before;
      e.activation = Activation::kLeakyRelu;
      e.alpha = 0.1f;
      const std::vector<const HostTensor*> in = {&x, &w, &b, &fb, &res};
      NodeInfo node = testing::node_info("Conv", 11, in, 1, conv_attrs(p));
      node.input_constant = {false, true, true, true, false};
      for (int threads : {1, 2, 3}) {
        auto got = run_made(make_conv_kernel(node, e), in, 1, threads);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        expect_close(got.value()[0], out, want);
      }
    }
  }
}

TEST(BlockedConv, WeightsThatChangeBetweenRunsAreReorderedAgain) {
  if (!BlockedConv::available()) GTEST_SKIP() << "this build's GEMM library is not oneDNN";
  const ConvP p{1, {}, {}, {1, 1}, {1, 1}};
  const HostTensor x = rand_tensor({1, 16, 8, 8}, 10);
  HostTensor w = rand_tensor({32, 16, 3, 3}, 11);
  const HostTensor w2 = rand_tensor({32, 16, 3, 3}, 12);
  BlockedConv conv(false);  // not a program constant: the same address may hold new values
  HostTensor y;
  ASSERT_TRUE(run_blocked(conv, x, w, p, 2, &y).value());
  std::memcpy(w.data<float>(), w2.data<float>(), static_cast<size_t>(w.shape().numel()) * 4);
  ASSERT_TRUE(run_blocked(conv, x, w, p, 2, &y).value());
  Shape out;
  expect_close(y, out, ref_conv(x, w2, nullptr, p, &out));
  // A constant is reordered once, but another tensor in its place is another constant.
  BlockedConv constant(true);
  ASSERT_TRUE(run_blocked(constant, x, w2, p, 2, &y).value());
  const HostTensor w3 = rand_tensor({32, 16, 3, 3}, 13);
  ASSERT_TRUE(run_blocked(constant, x, w3, p, 2, &y).value());
  expect_close(y, out, ref_conv(x, w3, nullptr, p, &out));
}

TEST(BlockedConv, ConstantWeightsAreReorderedOnceAtLoadForEveryShapeAndSplit) {
  if (!BlockedConv::available()) GTEST_SKIP() << "this build's GEMM library is not oneDNN";
  struct Load {
    Shape ws;
    ConvP p;
    std::vector<Shape> inputs;
  };
  // Bands of rows, whole images, ranges of output channels (sliced from the one reordering),
  // 1-D, strided, an RGB stem read as NCHW, and groups.
  const std::vector<Load> loads = {
      {{64, 32, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}, {{1, 32, 5, 5}, {1, 32, 30, 9}, {2, 32, 7, 7}}},
      {{32, 16, 5}, {1, {2}, {}, {2}, {2}}, {{1, 16, 50}, {3, 16, 9}}},
      {{32, 3, 7, 7}, {1, {2, 2}, {}, {3, 3}, {3, 3}}, {{1, 3, 40, 30}, {2, 3, 17, 17}}},
      {{64, 16, 3, 3}, {4, {}, {}, {1, 1}, {1, 1}}, {{1, 64, 9, 9}, {2, 64, 5, 12}}},
  };
  for (const Load& l : loads) {
    SCOPED_TRACE("W " + l.ws.to_string());
    const HostTensor w = rand_tensor(l.ws, 20);
    BlockedConv conv(true);
    auto attrs = read_window_attrs(conv_attrs(l.p), "Conv");
    ASSERT_TRUE(attrs.ok());
    conv.prepare(w.view(), attrs.value(), l.p.group);
    EXPECT_EQ(conv.weight_reorders(), 1);
    for (const Shape& xs : l.inputs) {
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE("X " + xs.to_string() + ", " + std::to_string(threads) + " threads");
        const HostTensor x = rand_tensor(xs, 21);
        ASSERT_NO_FATAL_FAILURE(expect_served_as_defined(conv, x, w, l.p, threads));
      }
    }
    EXPECT_EQ(conv.weight_reorders(), 1);
  }
}

TEST(BlockedConv, ManySizesOfOneConvPastItsCaches) {
  if (!BlockedConv::available()) GTEST_SKIP() << "this build's GEMM library is not oneDNN";
  // Dynamic spatial dims: every size makes primitives of its own, more than the cache keeps.
  const ConvP p{1, {}, {}, {1, 1}, {1, 1}};
  const HostTensor w = rand_tensor({16, 16, 3, 3}, 14);
  BlockedConv conv(true);
  for (int64_t h = 1; h <= 24; ++h) {
    SCOPED_TRACE("height " + std::to_string(h));
    const HostTensor x = rand_tensor({1, 16, h, 5}, 15 + static_cast<uint32_t>(h));
    ASSERT_NO_FATAL_FAILURE(expect_served_as_defined(conv, x, w, p, 3));
  }
}

}  // namespace
}  // namespace sod2::rt::linalg_test

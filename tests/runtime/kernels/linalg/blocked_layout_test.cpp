// Kernels on channel-blocked values (kernel.h, BlockedIo): what each offers, and that with any
// combination of its tensors held blocked it computes what it computes on NCHW tensors (convs,
// depthwise convs, pools, global pools, Pad, BatchNorm, Resize, Concat; Shape and Size read
// them), also where the blocked convolution declines the
// shape and the Conv kernel converts around its NCHW paths.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/kernels/linalg/conv_blocked.h"
#include "tests/runtime/blocked_kernel_harness.h"
#include "tests/runtime/kernels/linalg/conv_reference.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

int block_here() { return BlockedConv::block_width(); }

// Concat is a data kernel: both families.
const KernelRegistry& kernels() {
  static const KernelRegistry r = [] {
    KernelRegistry k;
    register_linalg_kernels(k);
    register_data_kernels(k);
    return k;
  }();
  return r;
}

using testing::Held;

// Runs the node's kernel once with the blocks of this CPU's blocked path
// (tests/runtime/blocked_kernel_harness.h).
Expected<HostTensor> run_held(const NodeInfo& info, const std::vector<const HostTensor*>& inputs,
                              uint64_t constants, Held held, int threads,
                              BlockedIo* offered = nullptr) {
  return testing::run_held(kernels(), info, inputs, constants, block_here(), held, threads,
                           offered);
}

NodeInfo info_for(const std::string& op, int opset, const std::vector<const HostTensor*>& in,
                  Attrs attrs, size_t outputs = 1, const std::string& domain = "") {
  NodeInfo n = testing::node_info(op, opset, in, outputs, std::move(attrs), domain);
  n.input_constant.assign(in.size(), false);
  for (size_t i = 1; i < in.size() && i < 3; ++i) n.input_constant[i] = in[i] != nullptr;
  return n;
}

// Every way `io` allows to hold X and output 0 (tied slots follow output 0): X alone, Y alone,
// both.
std::vector<Held> combinations(const BlockedIo& io) {
  const bool x_tied = (io.tied & 1) != 0, reads = (io.inputs & 1) != 0;
  std::vector<Held> out;
  if (reads && !x_tied) out.push_back(Held{1, false});
  if (io.output && !x_tied) out.push_back(Held{io.tied, true});
  if (io.output && reads) out.push_back(Held{1 | io.tied, true});
  return out;
}

struct ConvCase {
  std::string name;
  Shape xs, ws;
  ConvP p;
  bool residual_relu = false;  // FusedConv: y = act(conv + residual)
  std::string act = "Relu";
};

std::vector<ConvCase> conv_cases(int block) {
  const int64_t b = block, b2 = 2 * block;
  return {
      {"3x3", {1, b, 13, 11}, {b2, b, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}},
      {"3x3 stride 2, batch 3", {3, b2, 15, 15}, {b2, b2, 3, 3}, {1, {2, 2}, {}, {1, 1}, {1, 1}}},
      {"1x1", {2, b2, 7, 9}, {3 * b, b2, 1, 1}, {}},
      {"1x1 stride 2 (gathered)", {1, b2, 14, 13}, {b, b2, 1, 1}, {1, {2, 2}, {}, {}, {}}},
      {"7x7 stride 2 stem", {1, 3, 23, 20}, {b, 3, 7, 7}, {1, {2, 2}, {}, {3, 3}, {3, 3}}},
      // Two blocks: with Y held, one image splits by output channels over two threads.
      {"7x7 stride 2 stem to 2 blocks",
       {1, 3, 23, 20},
       {b2, 3, 7, 7},
       {1, {2, 2}, {}, {3, 3}, {3, 3}},
       true},
      {"depthwise 3x3", {2, b2, 9, 9}, {b2, 1, 3, 3}, {b2, {}, {}, {1, 1}, {1, 1}}},
      // Tall enough for the lanes path to work in bands of rows.
      {"depthwise 3x3 in bands", {1, b, 90, 70}, {b, 1, 3, 3}, {b, {}, {}, {1, 1}, {1, 1}}},
      {"depthwise 5x5 stride 2", {1, b, 15, 15}, {b, 1, 5, 5}, {b, {2, 2}, {}, {2, 2}, {2, 2}}},
      // A held X is read in place: windows inside by rows of blocks, border ones tap by tap.
      {"depthwise 3x3 dilation 2, 21 wide",
       {2, b2, 11, 21},
       {b2, 1, 3, 3},
       {b2, {}, {2, 2}, {2, 2}, {2, 2}}},
      {"depthwise 3x3 stride 2, no padding", {1, b, 9, 12}, {b, 1, 3, 3}, {b, {2, 2}, {}, {}, {}}},
      {"grouped 3x3", {1, b2, 8, 8}, {b2, b, 3, 3}, {2, {}, {}, {1, 1}, {1, 1}}},
      // Channels that fill their last block only partly, on one side: the blocked path pads its
      // own buffers (MobileNet's 24-channel projections and the convs that read them).
      {"3x3 from 1.5 blocks",
       {2, b + b / 2, 9, 7},
       {b, b + b / 2, 3, 3},
       {1, {}, {}, {1, 1}, {1, 1}}},
      {"1x1 to 1.5 blocks", {2, 3 * b, 7, 9}, {b + b / 2, 3 * b, 1, 1}, {}},
      // More padding than that: converted around the NCHW paths.
      {"1x1 classifier", {1, b2, 5, 6}, {b + 4, b2, 1, 1}, {}},
      // One position per channel (a squeeze-excitation's): the same bytes in either layout.
      {"1x1 on one position", {2, b2, 1, 1}, {b2, b2, 1, 1}, {}},
      {"3x3 to one position", {1, b, 3, 3}, {b2, b, 3, 3}, {}},
      {"3x3 + residual + Relu", {1, b, 9, 10}, {b, b, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}}, true},
      // Weights that outweigh what a band of rows reads and writes (GoogLeNet's 64 -> 192): with
      // X and Y held, one image splits by output channels (at 16 channels a block).
      {"3x3 64 -> 192 + residual + Relu, split by channels",
       {1, 4 * b, 20, 12},
       {12 * b, 4 * b, 3, 3},
       {1, {}, {}, {1, 1}, {1, 1}},
       true},
      {"3x3 + residual + Relu, batch 3",
       {3, b, 7, 6},
       {b, b, 3, 3},
       {1, {}, {}, {1, 1}, {1, 1}},
       true},
      // Pointwise between held tensors (conv_pointwise_blocked.cpp): 63 positions (whole tiles
      // and single ones), an odd number of output blocks, the epilogue in registers or after the
      // store (Silu), and weights too large for that path (oneDNN's then).
      {"1x1 + residual + Relu", {2, b, 7, 9}, {3 * b, b, 1, 1}, {}, true},
      {"1x1 + residual + HardSwish", {1, b2, 5, 11}, {b2, b2, 1, 1}, {}, true, "HardSwish"},
      {"1x1 + residual + Silu", {1, b2, 5, 5}, {b, b2, 1, 1}, {}, true, "Silu"},
      {"1x1, 1 MB of weights and more", {1, 32 * b, 3, 4}, {32 * b, 32 * b, 1, 1}, {}},
      // Held tensors whose last block is narrow (kernel.h): the depthwise lanes and the pointwise
      // path read and write it in place, the others convert around their paths.
      {"depthwise 3x3 on 1.5 blocks",
       {2, b + b / 2, 9, 9},
       {b + b / 2, 1, 3, 3},
       {b + b / 2, {}, {}, {1, 1}, {1, 1}}},
      {"depthwise 5x5 stride 2 on 2.25 blocks, in bands",
       {1, 2 * b + b / 4, 60, 50},
       {2 * b + b / 4, 1, 5, 5},
       {2 * b + b / 4, {2, 2}, {}, {2, 2}, {2, 2}}},
      {"1x1 1.5 blocks to 2.5 blocks + residual + HardSwish",
       {2, b + b / 2, 7, 9},
       {2 * b + b / 2, b + b / 2, 1, 1},
       {},
       true,
       "HardSwish"},
      {"1x1 3 lanes to 1.5 blocks + residual + Tanh",
       {1, 3, 5, 5},
       {b + b / 2, 3, 1, 1},
       {},
       true,
       "Tanh"},
  };
}

void expect_same_as_plain(const ConvCase& c, int threads) {
  const HostTensor x = rand_tensor(c.xs, 1), w = rand_tensor(c.ws, 2);
  const HostTensor bias = rand_tensor(Shape{c.ws[0]}, 3);
  Shape out;
  (void)ref_conv(x, w, nullptr, c.p, &out);
  const HostTensor res = rand_tensor(out, 4);
  Attrs attrs = conv_attrs(c.p);
  std::vector<const HostTensor*> in = {&x, &w, &bias};
  std::string op = "Conv", domain;
  if (c.residual_relu) {
    op = "FusedConv";
    domain = "sod2";
    in.push_back(&res);
    attrs = A{attrs}.i("residual_input", 3).s("activation", c.act);
  }
  const NodeInfo info = info_for(op, c.residual_relu ? 1 : 11, in, attrs, 1, domain);
  BlockedIo io;
  auto plain = run_held(info, in, 0b110, Held{}, threads, &io);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  ASSERT_TRUE(io.output || io.inputs) << "the conv offers nothing blocked";
  const std::vector<Held> all = combinations(io);
  ASSERT_FALSE(all.empty());
  for (const Held& h : all) {
    SCOPED_TRACE("held inputs " + std::to_string(h.inputs) + " output " + std::to_string(h.output));
    auto got = run_held(info, in, 0b110, h, threads);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_close(*got, plain->shape(), values(*plain), 1e-5);
  }
}

TEST(BlockedLayout, ConvsOnHeldTensorsComputeWhatTheyComputeOnNchw) {
  if (block_here() == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  for (const ConvCase& c : conv_cases(block_here()))
    for (int threads : {1, 2}) {
      SCOPED_TRACE(c.name + ", " + std::to_string(threads) + " threads");
      expect_same_as_plain(c, threads);
    }
}

// oneDNN applies the epilogue of a conv writing a held Y in place (bias, residual, ReLU): NaNs in
// X or in the residual give what the epilogue pass gives on the NCHW paths, bit for bit.
TEST(BlockedLayout, FusedEpilogueKeepsNanAndZeroSigns) {
  const int b = block_here();
  if (b == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  HostTensor x = rand_tensor({1, b, 6, 7}, 21);
  const HostTensor w = rand_tensor({2 * b, b, 3, 3}, 22);
  HostTensor bias = rand_tensor(Shape{2 * b}, 23);
  HostTensor res = rand_tensor({1, 2 * b, 6, 7}, 24);
  x.data<float>()[5] = std::nanf("");
  res.data<float>()[100] = std::nanf("");
  res.data<float>()[101] = -std::numeric_limits<float>::infinity();
  bias.data<float>()[1] = -0.f;
  for (const bool before : {true, false}) {
    SCOPED_TRACE(before ? "residual before the ReLU" : "residual after it");
    const std::vector<const HostTensor*> in = {&x, &w, &bias, &res};
    const NodeInfo info = info_for("FusedConv", 1, in,
                                   A{conv_attrs({1, {}, {}, {1, 1}, {1, 1}})}
                                       .i("residual_input", 3)
                                       .i("residual_before_activation", before ? 1 : 0)
                                       .s("activation", "Relu"),
                                   1, "sod2");
    auto plain = run_held(info, in, 0b110, Held{}, 2);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    auto got = run_held(info, in, 0b110, Held{0b1001, true}, 2);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(std::memcmp(got->data<float>(), plain->data<float>(),
                          static_cast<size_t>(plain->shape().numel()) * sizeof(float)),
              0);
  }
}

// The blocked convolution declining every shape: the Conv kernel converts the held tensors
// around its NCHW paths, with the same results.
TEST(BlockedLayout, ConvsStillComputeTheSameWhereTheBlockedPathDeclines) {
  if (block_here() == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  struct Restore {
    ~Restore() { BlockedConv::set_declines_for_testing(false); }
  } restore;
  BlockedConv::set_declines_for_testing(true);
  for (const ConvCase& c : conv_cases(block_here())) {
    SCOPED_TRACE(c.name);
    expect_same_as_plain(c, 2);
  }
}

TEST(BlockedLayout, WhatConvsOffer) {
  const int b = block_here();
  if (b == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  auto offered = [&](Shape xs, Shape ws, ConvP p) {
    const HostTensor x = rand_tensor(xs, 1), w = rand_tensor(ws, 2);
    BlockedIo io;
    auto r =
        run_held(info_for("Conv", 11, {&x, &w}, conv_attrs(p)), {&x, &w}, 0b10, Held{}, 1, &io);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return io;
  };
  // A 3x3 conv: X and Y apart.
  BlockedIo io = offered({1, b, 6, 6}, {b, b, 3, 3}, {1, {}, {}, {1, 1}, {1, 1}});
  EXPECT_EQ(io.inputs, 1u);
  EXPECT_TRUE(io.output);
  EXPECT_EQ(io.tied, 0u);
  // A pointwise conv: both or neither.
  io = offered({1, b, 6, 6}, {2 * b, b, 1, 1}, {});
  EXPECT_EQ(io.tied, 1u);
  // An RGB stem: Y only.
  io = offered({1, 3, 9, 9}, {b, 3, 3, 3}, {});
  EXPECT_EQ(io.inputs, 0u);
  EXPECT_TRUE(io.output);
  EXPECT_EQ(io.channels, b);
  // Output channels that do not fill blocks (a classifier): a 3x3 conv X only. A pointwise conv
  // also writes Y narrow on its own path, X and Y apart, as oneDNN reads X blocked either way.
  io = offered({1, b, 6, 6}, {b + 2, b, 3, 3}, {});
  EXPECT_EQ(io.inputs, 1u);
  EXPECT_FALSE(io.output);
  io = offered({1, 2 * b, 6, 6}, {b + 4, 2 * b, 1, 1}, {});
  EXPECT_EQ(io.inputs, 1u);
  EXPECT_EQ(io.tied, 0u);
  EXPECT_TRUE(io.output);
  EXPECT_TRUE(io.narrow_output);
  EXPECT_EQ(io.narrow_inputs, 1u);
  EXPECT_EQ(io.channels, b + 4);
  // Input channels that do not fill blocks (GoogLeNet's 24-channel reductions): a 3x3 conv Y
  // only, not narrow; a pointwise conv both sides, tied, narrow ones too.
  io = offered({1, b + b / 2, 6, 6}, {b, b + b / 2, 3, 3}, {});
  EXPECT_EQ(io.inputs, 0u);
  EXPECT_TRUE(io.output);
  EXPECT_FALSE(io.narrow_output);
  io = offered({1, b + b / 2, 6, 6}, {b, b + b / 2, 1, 1}, {});
  EXPECT_TRUE(io.output);
  EXPECT_EQ(io.tied, 1u);
  EXPECT_EQ(io.narrow_inputs, 1u);
  // A depthwise conv of any channel count: X and Y apart, narrow too.
  io = offered({1, b + 3, 6, 6}, {b + 3, 1, 3, 3}, {b + 3, {}, {}, {1, 1}, {1, 1}});
  EXPECT_EQ(io.inputs, 1u);
  EXPECT_EQ(io.tied, 0u);
  EXPECT_TRUE(io.narrow_output);
  EXPECT_EQ(io.narrow_inputs, 1u);
  // A pointwise conv whose weights are too large for its own path: oneDNN's whole blocks only.
  io = offered({1, 512, 2, 2}, {516, 512, 1, 1}, {});
  EXPECT_FALSE(io.output);
  EXPECT_FALSE(io.narrow_output);
  // Groups narrower than a block: nothing (held, they would leave the blocked path).
  io = offered({1, 2 * b, 8, 8}, {2 * b, b / 2, 3, 3}, {4, {}, {}, {1, 1}, {1, 1}});
  EXPECT_EQ(io.inputs, 0u);
  EXPECT_FALSE(io.output);
  // Weights that are not constants: nothing (their shape is unknown before the run).
  const HostTensor x = rand_tensor({1, b, 6, 6}, 1), w = rand_tensor({b, b, 3, 3}, 2);
  io = BlockedIo{};
  ASSERT_TRUE(run_held(info_for("Conv", 11, {&x, &w}, Attrs{}), {&x, &w}, 0, Held{}, 1, &io).ok());
  EXPECT_FALSE(io.output);
}

TEST(BlockedLayout, PoolsOnHeldTensorsComputeWhatTheyComputeOnNchw) {
  const int b = block_here();
  if (b == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  struct PoolCase {
    std::string op;
    Attrs attrs;
    double tol;
  };
  const std::vector<PoolCase> cases = {
      {"MaxPool", A().is("kernel_shape", {3, 3}).is("strides", {2, 2}).is("pads", {1, 1, 1, 1}), 0},
      {"MaxPool", A().is("kernel_shape", {2, 3}).is("dilations", {2, 1}).i("ceil_mode", 1), 0},
      // Pads as wide as the kernel: windows wholly in the padding give 0.
      {"MaxPool", A().is("kernel_shape", {2, 2}).is("pads", {2, 2, 2, 2}), 0},
      {"AveragePool", A().is("kernel_shape", {3, 3}).is("pads", {1, 1, 1, 1}), 1e-6},
      {"AveragePool",
       A().is("kernel_shape", {3, 3}).is("pads", {1, 1, 1, 1}).i("count_include_pad", 1), 1e-6},
      {"AveragePool", A().is("kernel_shape", {5, 5}).is("strides", {3, 3}).i("ceil_mode", 1), 1e-6},
      // An inception branch's; and taps two columns apart.
      {"MaxPool", A().is("kernel_shape", {3, 3}).is("pads", {1, 1, 1, 1}), 0},
      {"MaxPool", A().is("kernel_shape", {3, 3}).is("dilations", {1, 2}).is("pads", {1, 2, 1, 2}),
       0},
  };
  for (const PoolCase& c : cases)
    for (const Shape& xs : {Shape{1, b, 11, 9}, Shape{3, 2 * b, 7, 8}, Shape{1, b, 5, 23}})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(c.op + " X " + xs.to_string());
        const HostTensor x = rand_tensor(xs, 5);
        const NodeInfo info = info_for(c.op, 19, {&x}, c.attrs);
        BlockedIo io;
        auto plain = run_held(info, {&x}, 0, Held{}, threads, &io);
        ASSERT_TRUE(plain.ok()) << plain.status().to_string();
        EXPECT_EQ(io.inputs, 1u);
        EXPECT_EQ(io.tied, 1u);
        ASSERT_TRUE(io.output);
        auto got = run_held(info, {&x}, 0, Held{1, true}, threads);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        if (c.tol == 0) {
          ASSERT_EQ(std::memcmp(got->data<float>(), plain->data<float>(),
                                static_cast<size_t>(plain->shape().numel()) * sizeof(float)),
                    0);
        } else {
          expect_close(*got, plain->shape(), values(*plain), c.tol);
        }
      }
  // With an Indices output the pool stays NCHW.
  const HostTensor x = rand_tensor({1, b, 4, 4}, 5);
  BlockedIo io;
  ASSERT_TRUE(run_held(info_for("MaxPool", 12, {&x}, A().is("kernel_shape", {2, 2}), 2), {&x}, 0,
                       Held{}, 1, &io)
                  .ok());
  EXPECT_FALSE(io.output);
  EXPECT_EQ(io.inputs, 0u);
}

// A kernel that reads X (slot 0) held, narrow last block included, and writes output 0 as NCHW:
// what it offers, and its output from a plain X and from a held one.
void read_held_x(const NodeInfo& info, const HostTensor& x, int threads, HostTensor* plain,
                 HostTensor* got) {
  BlockedIo io;
  auto from_plain = run_held(info, {&x}, 0, Held{}, threads, &io);
  ASSERT_TRUE(from_plain.ok());
  EXPECT_EQ(io.inputs, 1u);
  EXPECT_EQ(io.narrow_inputs, 1u);
  EXPECT_FALSE(io.output);
  auto from_held = run_held(info, {&x}, 0, Held{1, false}, threads);
  ASSERT_TRUE(from_held.ok()) << from_held.status().to_string();
  *plain = std::move(*from_plain);
  *got = std::move(*from_held);
}

TEST(BlockedLayout, GlobalPoolsReadHeldTensors) {
  const int b = block_here();
  if (b == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  for (const std::string op : {"GlobalAveragePool", "GlobalMaxPool"})
    for (const int64_t channels : {2 * b, 2 * b + 5}) {  // whole blocks; a narrow last one
      SCOPED_TRACE(op + ", " + std::to_string(channels) + " channels");
      const HostTensor x = rand_tensor({2, channels, 7, 5}, 6);
      // (Its [N, C, 1, 1] output is the same bytes either way: it offers none.)
      HostTensor plain, got;
      ASSERT_NO_FATAL_FAILURE(read_held_x(info_for(op, 1, {&x}, Attrs{}), x, 2, &plain, &got));
      expect_close(got, plain.shape(), values(plain), 1e-6);
    }
}

// Pad of H and W by constants, and DenseNet's BatchNormalization -> ReLU: X and Y held alike,
// whole or narrow last blocks, the same values as on NCHW.
TEST(BlockedLayout, PadAndBatchNormKeepTheLayout) {
  const int b = block_here();
  if (b == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  for (const int64_t channels : {2 * b, b + 3}) {
    SCOPED_TRACE(std::to_string(channels) + " channels");
    const HostTensor x = rand_tensor({2, channels, 5, 6}, 7);
    const HostTensor pads =
        testing::make_tensor<int64_t>(DType::kInt64, Shape{8}, {0, 0, 1, 2, 0, 0, 2, 1});
    const HostTensor value = floats(Shape{}, {0.5f});
    const NodeInfo pad = info_for("Pad", 13, {&x, &pads, &value}, Attrs{});
    BlockedIo io;
    auto plain = run_held(pad, {&x, &pads, &value}, 0b110, Held{}, 2, &io);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    EXPECT_EQ(io.tied, 1u);
    EXPECT_TRUE(io.narrow_output);
    auto got = run_held(pad, {&x, &pads, &value}, 0b110, Held{1, true}, 2);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_close(*got, plain->shape(), values(*plain), 0.0);

    const HostTensor scale = rand_tensor({channels}, 8), bias = rand_tensor({channels}, 9);
    const HostTensor mean = rand_tensor({channels}, 10),
                     var = rand_tensor({channels}, 11, 0.5f, 2.f);
    for (const char* act : {"Relu", "Sigmoid"}) {
      SCOPED_TRACE(act);
      NodeInfo bn = info_for("FusedBatchNormalization", 1, {&x, &scale, &bias, &mean, &var},
                             A().s("activation", act), 1, "sod2");
      const std::vector<const HostTensor*> in = {&x, &scale, &bias, &mean, &var};
      plain = run_held(bn, in, 0b11110, Held{}, 2, &io);
      ASSERT_TRUE(plain.ok()) << plain.status().to_string();
      EXPECT_EQ(io.tied, 1u);
      got = run_held(bn, in, 0b11110, Held{1, true}, 2);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(*got, plain->shape(), values(*plain), 0.0);
    }
  }
  // Pads on the channels, or a mode other than constant: NCHW only.
  const HostTensor x = rand_tensor({1, b, 4, 4}, 12);
  const HostTensor on_c =
      testing::make_tensor<int64_t>(DType::kInt64, Shape{8}, {0, 1, 0, 0, 0, 0, 0, 0});
  BlockedIo io;
  ASSERT_TRUE(
      run_held(info_for("Pad", 13, {&x, &on_c}, Attrs{}), {&x, &on_c}, 0b10, Held{}, 1, &io).ok());
  EXPECT_FALSE(io.output);
  const HostTensor spatial =
      testing::make_tensor<int64_t>(DType::kInt64, Shape{8}, {0, 0, 1, 1, 0, 0, 1, 1});
  ASSERT_TRUE(run_held(info_for("Pad", 13, {&x, &spatial}, A().s("mode", "reflect")),
                       {&x, &spatial}, 0b10, Held{}, 1, &io)
                  .ok());
  EXPECT_FALSE(io.output);
}

// Resize of H and W (a feature pyramid's upsample): X and Y held alike, whole or narrow last
// blocks, several images, every mode; where N or C change, or a crop box fills with a value,
// through NCHW. The same values as on NCHW.
TEST(BlockedLayout, ResizeKeepsTheLayout) {
  const int b = block_here();
  if (b == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  struct ResizeCase {
    const char* what;
    Attrs attrs;
    std::vector<float> scales;   // empty: sizes
    std::vector<int64_t> sizes;  // -1: X's dim
    int opset = 13;
  };
  const std::vector<ResizeCase> cases = {
      {"nearest x2",
       A().s("mode", "nearest")
           .s("coordinate_transformation_mode", "asymmetric")
           .s("nearest_mode", "floor"),
       {1.f, 1.f, 2.f, 2.f},
       {}},
      {"linear to a size", A().s("mode", "linear"), {}, {-1, -1, 9, 4}},
      {"cubic, align_corners",
       A().s("mode", "cubic").s("coordinate_transformation_mode", "align_corners"),
       {1.f, 1.f, 1.5f, 0.75f},
       {}},
      {"Resize-18 on axes 2 and 3",
       A().s("mode", "linear").is("axes", {2, 3}),
       {2.f, 0.5f},
       {},
       18},
      {"C resized", A().s("mode", "nearest"), {}, {-1, -2, 7, 5}},
      {"N resized", A().s("mode", "linear"), {2.f, 1.f, 1.f, 2.f}, {}},
      {"crop box",
       A().s("mode", "linear")
           .s("coordinate_transformation_mode", "tf_crop_and_resize")
           .f("extrapolation_value", 0.25f),
       {},
       {-1, -1, 6, 7}},
  };
  for (const int64_t channels : {int64_t{2} * b, int64_t{b} + 3, int64_t{3}}) {
    const HostTensor x = rand_tensor({2, channels, 5, 6}, 13);
    for (const ResizeCase& c : cases) {
      SCOPED_TRACE(std::string(c.what) + ", " + std::to_string(channels) + " channels");
      const HostTensor roi = floats(Shape{8}, {0.f, 0.f, -0.2f, 0.1f, 1.f, 1.f, 0.9f, 1.3f});
      const HostTensor none = floats(Shape{0}, {});
      const HostTensor scales = floats(Shape{static_cast<int64_t>(c.scales.size())}, c.scales);
      std::vector<int64_t> size_values;
      for (size_t i = 0; i < c.sizes.size(); ++i)
        size_values.push_back(c.sizes[i] == -1   ? x.shape()[static_cast<int>(i)]
                              : c.sizes[i] == -2 ? channels + 1
                                                 : c.sizes[i]);
      const HostTensor sizes = testing::make_tensor<int64_t>(
          DType::kInt64, Shape{static_cast<int64_t>(size_values.size())}, size_values);
      const bool crop = std::string(c.what) == "crop box";
      std::vector<const HostTensor*> in = {&x, crop ? &roi : &none, &scales};
      if (!c.sizes.empty()) in = {&x, crop ? &roi : &none, &none, &sizes};
      const NodeInfo info = info_for("Resize", c.opset, in, c.attrs);
      BlockedIo io;
      auto plain = run_held(info, in, 0, Held{}, 2, &io);
      ASSERT_TRUE(plain.ok()) << plain.status().to_string();
      EXPECT_EQ(io.tied, 1u);
      EXPECT_EQ(io.narrow_inputs, 1u);
      EXPECT_TRUE(io.narrow_output);
      auto got = run_held(info, in, 0, Held{1, true}, 2);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(*got, plain->shape(), values(*plain), 1e-6);
    }
  }
}

// Shape and Size read a held value's shape, which is its NCHW shape.
TEST(BlockedLayout, ShapeAndSizeReadHeldValues) {
  const int b = block_here();
  if (b == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  const HostTensor x = rand_tensor({2, b + 3, 5, 6}, 14);
  for (const std::string op : {"Shape", "Size"}) {
    SCOPED_TRACE(op);
    HostTensor plain, got;
    ASSERT_NO_FATAL_FAILURE(read_held_x(info_for(op, 15, {&x}, Attrs{}), x, 1, &plain, &got));
    ASSERT_EQ(got.shape(), plain.shape());
    EXPECT_EQ(std::memcmp(got.data<int64_t>(), plain.data<int64_t>(),
                          static_cast<size_t>(plain.shape().numel()) * sizeof(int64_t)),
              0);
  }
}

TEST(BlockedLayout, ConcatAlongChannelsKeepsTheLayout) {
  const int b = block_here();
  if (b == 0) GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  const HostTensor x = rand_tensor({2, b, 5, 6}, 7), y = rand_tensor({2, 3 * b, 5, 6}, 8);
  const NodeInfo info = info_for("Concat", 13, {&x, &y}, A().i("axis", 1));
  BlockedIo io;
  auto plain = run_held(info, {&x, &y}, 0, Held{}, 2, &io);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(io.inputs, 3u);
  EXPECT_EQ(io.tied, 3u);
  auto got = run_held(info, {&x, &y}, 0, Held{3, true}, 2);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(std::memcmp(got->data<float>(), plain->data<float>(),
                        static_cast<size_t>(plain->shape().numel()) * sizeof(float)),
            0);
  // Along another axis it offers nothing.
  io = BlockedIo{};
  ASSERT_TRUE(
      run_held(info_for("Concat", 13, {&x, &x}, A().i("axis", 2)), {&x, &x}, 0, Held{}, 1, &io)
          .ok());
  EXPECT_EQ(io.inputs, 0u);
  EXPECT_FALSE(io.output);
}

}  // namespace
}  // namespace sod2::rt::linalg_test

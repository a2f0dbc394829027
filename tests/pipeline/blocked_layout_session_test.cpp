// Values held channel-blocked between kernels (kernel.h, BlockedIo), end to end: a small
// ResNet/Inception-like net with dynamic spatial dims, compiled and run with the layout chosen
// (SessionOptions::channel_blocked) and without. The session holds the inside of the net blocked
// and the graph's outputs NCHW, and both give the same outputs at several bindings.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "../onnx/proto_builder.h"
#include "core/onnx/onnx_import.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2 {
namespace {

using testing::add_float_initializer;
using testing::add_input;
using testing::add_int_attr;
using testing::add_node;
using testing::add_output;

void add_ints_attr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void add_weights(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                 uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(gen);
  add_float_initializer(g, name, dims, v);
}

onnx::NodeProto* conv(onnx::GraphProto* g, const std::string& x, const std::string& y, int64_t c,
                      int64_t m, int64_t k, int64_t stride, int64_t group, uint32_t seed) {
  add_weights(g, y + ".w", {m, c / group, k, k}, seed);
  add_weights(g, y + ".b", {m}, seed + 100);
  auto* n = add_node(g, "Conv", {x, y + ".w", y + ".b"}, {y}, y);
  add_ints_attr(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  add_ints_attr(n, "strides", {stride, stride});
  add_int_attr(n, "group", group);
  return n;
}

// x[n, 3, h, w] -> stem 3x3/2 -> Relu -> MaxPool 3x3/2 -> [conv 3x3 -> Relu -> conv 3x3 + pool
// -> Relu] -> depthwise 3x3 -> squeeze-excitation (GlobalAveragePool, 1x1 to 4, Relu, 1x1 to
// 16, Sigmoid, Mul) -> 1x1 to 32 and, beside it, 3x3 to 16 -> Concat (48) -> 1x1 stride 2 ->
// GlobalAveragePool -> y; the block's sum is a second output ("mid"); from the Concat, 1x1 to
// 24 channels (a block and a half) -> 3x3 to 32 -> GlobalAveragePool -> y2; from "mid", a block
// of 40 and 24 channels -> y3.
Model small_net() {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"n", 3, "h", "w"});
  conv(g, "x", "stem", 3, 16, 3, 2, 1, 1);
  add_node(g, "Relu", {"stem"}, {"stem_r"});
  auto* pool = add_node(g, "MaxPool", {"stem_r"}, {"pool"}, "pool");
  add_ints_attr(pool, "kernel_shape", {3, 3});
  add_ints_attr(pool, "strides", {2, 2});
  add_ints_attr(pool, "pads", {1, 1, 1, 1});
  conv(g, "pool", "c1", 16, 16, 3, 1, 1, 2);
  add_node(g, "Relu", {"c1"}, {"c1_r"});
  conv(g, "c1_r", "c2", 16, 16, 3, 1, 1, 3);
  add_node(g, "Add", {"c2", "pool"}, {"sum"});
  add_node(g, "Relu", {"sum"}, {"mid"});
  conv(g, "mid", "dw", 16, 16, 3, 1, 16, 4);
  add_node(g, "GlobalAveragePool", {"dw"}, {"squeezed"}, "se_gap");
  conv(g, "squeezed", "fc1", 16, 4, 1, 1, 1, 8);
  add_node(g, "Relu", {"fc1"}, {"fc1_r"});
  conv(g, "fc1_r", "fc2", 4, 16, 1, 1, 1, 9);
  add_node(g, "Sigmoid", {"fc2"}, {"s"});
  add_node(g, "Mul", {"dw", "s"}, {"dws"}, "se_mul");
  conv(g, "dws", "wide", 16, 32, 1, 1, 1, 5);
  conv(g, "dws", "side", 16, 16, 3, 1, 1, 6);
  auto* cat = add_node(g, "Concat", {"wide", "side"}, {"cat"}, "cat");
  add_int_attr(cat, "axis", 1);
  conv(g, "cat", "down", 48, 32, 1, 2, 1, 7);
  add_node(g, "GlobalAveragePool", {"down"}, {"y"}, "gap");
  conv(g, "cat", "narrow", 48, 24, 1, 1, 1, 10);
  conv(g, "narrow", "widen", 24, 32, 3, 1, 1, 11);
  add_node(g, "GlobalAveragePool", {"widen"}, {"y2"}, "gap2");
  // A MobileNetV3-like block of channels that fill no whole block (40, 24): expansion, depthwise,
  // squeeze-excitation, projection and a residual pointwise conv -> GlobalAveragePool -> y3.
  conv(g, "mid", "ex", 16, 40, 1, 1, 1, 12);
  add_node(g, "Relu", {"ex"}, {"ex_r"});
  conv(g, "ex_r", "dw40", 40, 40, 3, 1, 40, 13);
  add_node(g, "GlobalAveragePool", {"dw40"}, {"sq40"}, "se40_gap");
  conv(g, "sq40", "f40", 40, 40, 1, 1, 1, 14);
  add_node(g, "Sigmoid", {"f40"}, {"s40"});
  add_node(g, "Mul", {"dw40", "s40"}, {"dw40s"}, "se40_mul");
  conv(g, "dw40s", "pj", 40, 24, 1, 1, 1, 15);
  conv(g, "pj", "pj2", 24, 24, 1, 1, 1, 16);
  add_node(g, "Add", {"pj2", "pj"}, {"res24"});
  add_node(g, "GlobalAveragePool", {"res24"}, {"y3"}, "gap3");
  // A feature pyramid's top-down step: "widen" down to "deep" (stride 2), upsampled back to the
  // size of "widen" read by Shape, added to it -> GlobalAveragePool -> y4.
  conv(g, "widen", "deep", 32, 32, 3, 2, 1, 17);
  add_node(g, "Shape", {"widen"}, {"widen_size"}, "widen_shape");
  auto* up = add_node(g, "Resize", {"deep", "", "", "widen_size"}, {"up"}, "up");
  auto* mode = up->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("nearest");
  add_node(g, "Add", {"up", "widen"}, {"fpn"});
  add_node(g, "GlobalAveragePool", {"fpn"}, {"y4"}, "gap4");
  add_output(g, "y", {"n", 32, 1, 1});
  add_output(g, "mid", {"n", 16, "h4", "w4"});
  add_output(g, "y2", {"n", 32, 1, 1});
  add_output(g, "y3", {"n", 24, 1, 1});
  add_output(g, "y4", {"n", 32, 1, 1});
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "blocked layout net");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

int32_t value_id(const rt::Session& s, const std::string& name) {
  const auto& values = s.program().graphs[0].values;
  for (size_t v = 0; v < values.size(); ++v)
    if (values[v].name == name) return static_cast<int32_t>(v);
  return -1;
}

TEST(BlockedLayoutSession, HoldsTheInsideBlockedAndComputesWhatNchwComputes) {
  const Model model = small_net();
  pipeline::CompileOptions options;
  options.rdp.ranges["n"] = {1, 4, 1};
  options.rdp.ranges["h"] = {8, 96, 1};
  options.rdp.ranges["w"] = {8, 96, 1};
  auto program = pipeline::compile_program(model, options);
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  rt::SessionOptions plain_options;
  plain_options.threads = 2;
  plain_options.channel_blocked = false;
  rt::SessionOptions blocked_options = plain_options;
  blocked_options.channel_blocked = true;
  auto plain = rt::Session::create(*program, rt::KernelRegistry::standard(), plain_options);
  auto blocked = rt::Session::create(*program, rt::KernelRegistry::standard(), blocked_options);
  ASSERT_TRUE(plain.ok() && blocked.ok());
  EXPECT_EQ((*plain)->channel_block(), 0);
  if (rt::KernelRegistry::standard().channel_block() == 0)
    GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  const rt::Session& b = **blocked;
  EXPECT_EQ(b.channel_block(), rt::KernelRegistry::standard().channel_block());
  // The graph's outputs stay NCHW, and so does what is tied to one: "mid" is the residual
  // conv's output, so its residual "pool" is plain, and through the pool the stem's result.
  // The rest, read only by kernels that take it blocked, is held blocked: the excitation's
  // convs on one position take narrow blocks of 4 channels (the same bytes as NCHW there), so
  // its scale "s" is held as well, and the Mul that applies it follows its operands. A tensor of 24
  // channels ("narrow") is NCHW, as the 3x3 conv that reads it takes whole blocks only, though the
  // convs on each side of it are blocked. In the block of 40 and 24 channels every tensor between
  // kernels that take a narrow last block is held blocked, from the expansion's result (its X is
  // "mid") to the residual sum.
  auto held = [&](const char* name) {
    const int32_t v = value_id(b, name);
    EXPECT_GE(v, 0) << name;
    return v >= 0 && b.value_blocked(static_cast<size_t>(v));
  };
  for (const char* name : {"x", "y", "mid", "pool", "stem_r", "y2"})
    EXPECT_FALSE(held(name)) << name;
  // The upsample (a Resize to the size Shape reads off a held value) and the sum keep the
  // pyramid blocked.
  for (const char* name : {"c1_r", "dw", "s", "dws", "wide", "side", "cat", "down", "widen", "dw40",
                           "dw40s", "pj", "res24", "deep", "up", "fpn"})
    EXPECT_TRUE(held(name)) << name;
  // At 16 channels per block (AVX-512). With 8 (AVX2), 24 and 40 channels fill whole blocks:
  // "narrow" is held, and the expansion, whose oneDNN path then writes blocks, ties "ex_r" to
  // its NCHW input "mid".
  if (b.channel_block() == 16) {
    EXPECT_FALSE(held("narrow"));
    EXPECT_TRUE(held("ex_r"));
  }
  for (const char* name : {"sq40", "s40", "y3"}) EXPECT_FALSE(held(name)) << name;

  for (const auto& [n, h, w] :
       {std::tuple{1, 32, 32}, std::tuple{2, 23, 17}, std::tuple{3, 57, 41}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w));
    rt::HostTensor x(rt::DType::kFloat, rt::Shape{n, 3, h, w});
    std::mt19937 gen(static_cast<uint32_t>(h * w));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int64_t i = 0; i < x.shape().numel(); ++i) x.data<float>()[i] = u(gen);
    const rt::Tensor in = x.view();
    auto want = (*plain)->run(std::span<const rt::Tensor>(&in, 1));
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    std::vector<rt::HostTensor> expected;
    for (const rt::Tensor& t : *want) {
      expected.emplace_back(t.dtype, t.shape);
      rt::copy_elements(t, expected.back().view());
    }
    auto got = (*blocked)->run(std::span<const rt::Tensor>(&in, 1));
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(got->size(), expected.size());
    for (size_t o = 0; o < expected.size(); ++o) {
      ASSERT_EQ((*got)[o].shape, expected[o].shape());
      const float* g = (*got)[o].as<float>();
      const float* e = expected[o].data<float>();
      for (int64_t i = 0; i < expected[o].shape().numel(); ++i)
        ASSERT_NEAR(g[i], e[i], 1e-4 * (1 + std::fabs(e[i]))) << "output " << o << " at " << i;
    }
  }
}

}  // namespace
}  // namespace sod2

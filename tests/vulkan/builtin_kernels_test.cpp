// The hand-written Vulkan kernels (runtime/vulkan/kernels) against the CPU kernels of the
// standard registry, on random inputs: shapes must match exactly and values within
// rtol 1e-3 / atol 1e-4. Runs on whatever Vulkan device there is (lavapipe on CI) with the
// validation layer on; skipped without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_registry.h"
#include "runtime/threads/thread_pool.h"
#include "runtime/vulkan/kernels/builtin_kernels.h"
#include "runtime/vulkan/vulkan_backend.h"
#include "runtime/vulkan/vulkan_context.h"
#include "tests/vulkan/vulkan_kernel_harness.h"

namespace sod2::rt::vk {
namespace {

using testing::ArenaAllocator;
using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::HeapAllocator;

constexpr float kRtol = 1e-3f, kAtol = 1e-4f;

// One node to run both ways: input shapes (empty optional = omitted input) and attributes.
struct Case {
  Case(std::string o, std::vector<std::optional<Shape>> in, Attrs a = {})
      : op(std::move(o)), inputs(std::move(in)), attrs(std::move(a)) {}
  std::string op;
  std::vector<std::optional<Shape>> inputs;
  Attrs attrs;
  std::string domain;
  int opset = 13;
  size_t num_outputs = 1;
  float scale = 1.f;  // inputs are uniform in [-scale, scale]
};

class VulkanBuiltinKernelsTest : public testing::VulkanKernelTest {
 protected:
  static NodeInfo node_of(const Case& c) {
    NodeInfo n;
    n.name = c.op + "_test";
    n.op_type = c.op;
    n.domain = c.domain;
    n.opset = c.opset;
    n.attrs = c.attrs;
    for (const auto& s : c.inputs) {
      n.input_dtypes.push_back(s ? DType::kFloat : DType::kUndefined);
      n.input_present.push_back(s.has_value());
    }
    n.output_dtypes.assign(c.num_outputs, DType::kFloat);
    n.num_outputs = c.num_outputs;
    return n;
  }

  // Runs `c` on the CPU and on Vulkan and compares; inputs in the arena when `in_arena`.
  // `on_device`: the shader must take the run (else the CPU kernel must).
  void check(const Case& c, const std::string& label, bool in_arena, uint32_t seed,
             bool on_device = true) {
    SCOPED_TRACE(label);
    const NodeInfo node = node_of(c);
    const KernelRegistry& reg = KernelRegistry::standard();
    Expected<std::unique_ptr<Kernel>> cpu = reg.create(node);
    ASSERT_TRUE(cpu.ok()) << cpu.status().message();
    Expected<std::unique_ptr<Kernel>> cpu2 = reg.create(node);
    ASSERT_TRUE(cpu2.ok());
    std::string why;
    Expected<std::unique_ptr<Kernel>> vk =
        make_builtin_kernel(*backend_, node, std::move(*cpu2), &why);
    ASSERT_TRUE(vk.ok()) << vk.status().message();
    ASSERT_TRUE(*vk) << "not taken: " << why;

    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<HostTensor> host;
    host.reserve(c.inputs.size());
    for (const auto& s : c.inputs) {
      host.emplace_back(DType::kFloat, s ? *s : Shape{});
      if (s)
        for (int64_t i = 0; i < s->numel(); ++i) host.back().data<float>()[i] = c.scale * dist(rng);
    }
    ThreadPool pool(1);

    HeapAllocator heap(c.num_outputs);
    std::vector<Tensor> cpu_views;
    std::vector<const Tensor*> cpu_in;
    for (size_t i = 0; i < host.size(); ++i) cpu_views.push_back(host[i].view());
    for (size_t i = 0; i < host.size(); ++i)
      cpu_in.push_back(c.inputs[i] ? &cpu_views[i] : nullptr);
    KernelContext cpu_ctx(cpu_in, &heap, &pool);
    const Status cs = (*cpu)->run(cpu_ctx);
    ASSERT_TRUE(cs.ok()) << cs.message();

    ArenaAllocator arena(backend_->arena_memory());
    std::vector<Tensor> vk_views = cpu_views;
    if (in_arena) {
      for (size_t i = 0; i < host.size(); ++i) {
        if (!c.inputs[i]) continue;
        Expected<void*> p = arena.allocate(std::max<size_t>(host[i].bytes().size(), 4));
        ASSERT_TRUE(p.ok()) << p.status().message();
        std::memcpy(*p, host[i].bytes().data(), host[i].bytes().size());
        vk_views[i].data = *p;
      }
    }
    std::vector<const Tensor*> vk_in;
    for (size_t i = 0; i < host.size(); ++i) vk_in.push_back(c.inputs[i] ? &vk_views[i] : nullptr);
    KernelContext vk_ctx(vk_in, &arena, &pool);
    backend_->reset_counters();
    EXPECT_TRUE(backend_->begin_run().ok());
    const Status vs = (*vk)->run(vk_ctx);
    ASSERT_TRUE(vs.ok()) << vs.message();
    const Status ss = backend_->sync();
    ASSERT_TRUE(ss.ok()) << ss.message();
    EXPECT_EQ(backend_->counters().runtime_fallbacks, on_device ? 0 : 1);
    EXPECT_EQ(backend_->counters().dispatches, on_device ? 1 : 0);

    const Tensor& want = heap.views[0];
    const Tensor* got = arena.view(0);
    ASSERT_NE(got, nullptr);
    ASSERT_EQ(got->shape, want.shape) << got->shape.to_string() << " vs " << want.shape.to_string();
    int bad = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      const float w = want.as<float>()[i], g = got->as<float>()[i];
      const float err = std::fabs(w - g);
      if (std::isfinite(err)) max_err_ = std::max(max_err_, err);
      if (!(err <= kAtol + kRtol * std::fabs(w)) && bad++ < 5)
        ADD_FAILURE() << "element " << i << ": vulkan " << g << ", cpu " << w;
    }
    EXPECT_EQ(bad, 0) << bad << " of " << want.numel() << " elements differ";
    ++cases_;
  }

  void check_all(const std::vector<std::pair<std::string, Case>>& cases) {
    uint32_t seed = 1;
    for (const auto& [label, c] : cases) {
      check(c, label, seed % 2 == 0, seed);
      ++seed;
    }
    std::printf("%d cases, max abs error %g\n", cases_, static_cast<double>(max_err_));
  }

  int cases_ = 0;
  float max_err_ = 0.f;
};

using Cases = std::vector<std::pair<std::string, Case>>;

Case matmul(Shape a, Shape b) { return {"MatMul", {a, b}, {}}; }

TEST_F(VulkanBuiltinKernelsTest, MatMul) {
  Cases cases = {
      {"1d x 1d", matmul({4}, {4})},
      {"1d x 2d", matmul({3}, {3, 5})},
      {"2d x 1d", matmul({2, 3}, {3})},
      {"1x1", matmul({1, 1}, {1, 1})},
      {"17x33x9", matmul({17, 33}, {33, 9})},
      {"tile edges", matmul({65, 70}, {70, 66})},
      {"64 cube", matmul({64, 64}, {64, 64})},
      {"batched", matmul({3, 17, 8}, {3, 8, 9})},
      {"batched 1d b", matmul({3, 5, 8}, {8})},
      {"broadcast", matmul({2, 1, 5, 7}, {3, 7, 4})},
      {"shared a", matmul({5, 7}, {2, 3, 7, 4})},
      {"3 batch dims", matmul({2, 1, 3, 5, 7}, {1, 4, 1, 7, 6})},
      {"mergeable 4", matmul({2, 2, 2, 2, 3, 4}, {2, 2, 2, 2, 4, 5})},
      {"k = 0", matmul({3, 0}, {0, 4})},
  };
  check_all(cases);
}

TEST_F(VulkanBuiltinKernelsTest, MatMulBeyondShaderRunsOnCpu) {
  if (!backend_) GTEST_SKIP();
  // Four batch dims that do not merge (each operand broadcasts alternate ones).
  check(matmul({2, 1, 3, 1, 4, 5}, {1, 2, 1, 3, 5, 6}), "4 batch dims", false, 7,
        /*on_device=*/false);
}

Case gemm(Shape a, Shape b, std::optional<Shape> c, int ta, int tb, float alpha = 1.f,
          float beta = 1.f) {
  Case k{"Gemm", {a, b}, {}};
  if (c) k.inputs.push_back(c);
  k.attrs.set("transA", attr_int(ta));
  k.attrs.set("transB", attr_int(tb));
  k.attrs.set("alpha", attr_float(alpha));
  k.attrs.set("beta", attr_float(beta));
  return k;
}

TEST_F(VulkanBuiltinKernelsTest, Gemm) {
  Cases cases = {
      {"plain", gemm({5, 7}, {7, 3}, std::nullopt, 0, 0)},
      {"transA", gemm({7, 5}, {7, 3}, std::nullopt, 1, 0)},
      {"transB", gemm({5, 7}, {3, 7}, std::nullopt, 0, 1)},
      {"both", gemm({7, 5}, {3, 7}, Shape{5, 3}, 1, 1, 0.5f, 2.f)},
      {"C [n]", gemm({17, 33}, {33, 9}, Shape{9}, 0, 0)},
      {"C [m,1]", gemm({5, 7}, {7, 3}, Shape{5, 1}, 0, 0, 1.f, -1.f)},
      {"C [1,n]", gemm({5, 7}, {7, 3}, Shape{1, 3}, 0, 0, 2.f, 0.5f)},
      {"C [1]", gemm({5, 7}, {7, 3}, Shape{1}, 0, 0)},
      {"C scalar", gemm({5, 7}, {7, 3}, Shape{}, 0, 0)},
      {"beta 0", gemm({5, 7}, {7, 3}, Shape{5, 3}, 0, 0, 1.f, 0.f)},
      {"large", gemm({70, 130}, {100, 130}, Shape{100}, 0, 1)},
  };
  check_all(cases);
}

// The epilogue attributes of a fused node: activation with its parameters.
struct Act {
  const char* name;
  float alpha, beta;
};
const Act kActs[] = {{"", 0, 0},
                     {"Relu", 0, 0},
                     {"LeakyRelu", 0.1f, 0},
                     {"Clip", -0.5f, 0.5f},
                     {"Sigmoid", 0, 0},
                     {"HardSigmoid", 0.2f, 0.5f},
                     {"HardSwish", 0, 0},
                     {"Tanh", 0, 0},
                     {"Silu", 0, 0}};

void set_epilogue(Case& c, const Act& a, int bias, int residual, int before) {
  c.domain = "sod2";
  if (a.name[0]) c.attrs.set("activation", attr_string(a.name));
  if (a.alpha != 0.f) c.attrs.set("alpha", attr_float(a.alpha));
  if (a.beta != 0.f) c.attrs.set("beta", attr_float(a.beta));
  if (bias >= 0) c.attrs.set("bias_input", attr_int(bias));
  if (residual >= 0) c.attrs.set("residual_input", attr_int(residual));
  c.attrs.set("residual_before_activation", attr_int(before));
}

TEST_F(VulkanBuiltinKernelsTest, FusedGemmAndMatMul) {
  Cases cases;
  int i = 0;
  for (const Act& a : kActs) {
    // Gemm with C at slot 2, the epilogue's bias at 3 and residual at 4 (scaled so the
    // activations see values on both sides of their knees).
    Case g{"FusedGemm", {Shape{9, 13}, Shape{13, 11}, Shape{11}, Shape{11}, Shape{9, 11}}, {}};
    set_epilogue(g, a, 3, 4, i % 2);
    g.attrs.set("gemm_alpha", attr_float(1.5f));
    g.attrs.set("gemm_beta", attr_float(0.5f));
    cases.push_back({std::string("FusedGemm ") + a.name, g});
    // Gemm without C: the bias at slot 2.
    Case g2{"FusedGemm", {Shape{20, 6}, Shape{5, 6}, Shape{5}}, {}};
    g2.attrs.set("transB", attr_int(1));
    set_epilogue(g2, a, 2, -1, 1);
    cases.push_back({std::string("FusedGemm no C ") + a.name, g2});
    Case m{"FusedMatMul", {Shape{2, 7, 10}, Shape{10, 12}, Shape{12}, Shape{2, 7, 12}}, {}};
    set_epilogue(m, a, 2, 3, (i + 1) % 2);
    cases.push_back({std::string("FusedMatMul ") + a.name, m});
    ++i;
  }
  // Silu where its sigmoid saturates: products of inputs up to +-15 over K = 10 reach the
  // hundreds, past e^x's float range on both sides.
  for (int before : {1, 0}) {
    Case big{"FusedMatMul", {Shape{16, 10}, Shape{10, 12}, Shape{12}, Shape{16, 12}}, {}};
    set_epilogue(big, {"Silu", 0, 0}, 2, 3, before);
    big.scale = 15.f;
    cases.push_back({"FusedMatMul Silu large |x| before " + std::to_string(before), big});
  }
  Case r{"FusedMatMul", {Shape{3, 4, 5}, Shape{3, 5, 6}, Shape{3, 4, 6}}, {}};
  set_epilogue(r, kActs[1], -1, 2, 0);
  cases.push_back({"FusedMatMul residual only", r});
  check_all(cases);
}

Case conv(Shape x, Shape w, bool bias, int group = 1) {
  Case c{"Conv", {x, w}, {}};
  if (bias) c.inputs.push_back(Shape{w[0]});
  c.attrs.set("group", attr_int(group));
  c.opset = 11;
  return c;
}

TEST_F(VulkanBuiltinKernelsTest, Conv) {
  Cases cases;
  cases.push_back({"1d pads", conv({2, 3, 10}, {4, 3, 3}, true)});
  cases.back().second.attrs.set("pads", attr_ints({1, 1}));
  cases.push_back({"2d", conv({1, 3, 9, 9}, {5, 3, 3, 3}, true)});
  cases.push_back({"2d no bias", conv({2, 4, 6, 5}, {7, 4, 2, 3}, false)});
  cases.push_back({"1x1", conv({1, 16, 7, 7}, {9, 16, 1, 1}, true)});
  cases.push_back({"depthwise", conv({1, 6, 8, 8}, {6, 1, 3, 3}, true, 6)});
  cases.back().second.attrs.set("pads", attr_ints({1, 1, 1, 1}));
  cases.push_back({"depthwise x2", conv({2, 4, 8, 7}, {8, 1, 3, 3}, true, 4)});
  cases.push_back({"group 2", conv({2, 4, 7, 7}, {6, 2, 3, 3}, true, 2)});
  cases.push_back({"dilation 2", conv({1, 3, 11, 10}, {4, 3, 3, 3}, true)});
  cases.back().second.attrs.set("dilations", attr_ints({2, 2}));
  cases.push_back({"stride 2 pads", conv({1, 3, 11, 10}, {5, 3, 3, 3}, false)});
  cases.back().second.attrs.set("strides", attr_ints({2, 2}));
  cases.back().second.attrs.set("pads", attr_ints({1, 2, 0, 1}));
  cases.push_back({"same upper", conv({1, 2, 9, 8}, {3, 2, 4, 3}, true)});
  cases.back().second.attrs.set("auto_pad", attr_string("SAME_UPPER"));
  cases.back().second.attrs.set("strides", attr_ints({2, 2}));
  cases.push_back({"same lower", conv({1, 2, 9, 8}, {3, 2, 4, 3}, true)});
  cases.back().second.attrs.set("auto_pad", attr_string("SAME_LOWER"));
  cases.push_back({"3d", conv({1, 2, 5, 6, 7}, {3, 2, 3, 3, 3}, true)});
  cases.back().second.attrs.set("pads", attr_ints({1, 1, 1, 1, 1, 1}));
  cases.back().second.attrs.set("strides", attr_ints({1, 2, 1}));
  cases.push_back({"3d group dil", conv({2, 4, 6, 6, 6}, {4, 2, 2, 2, 2}, false, 2)});
  cases.back().second.attrs.set("dilations", attr_ints({2, 1, 2}));
  cases.push_back({"wide", conv({1, 8, 40, 40}, {10, 8, 3, 3}, true)});
  cases.back().second.attrs.set("pads", attr_ints({1, 1, 1, 1}));
  check_all(cases);
}

TEST_F(VulkanBuiltinKernelsTest, FusedConv) {
  Cases cases;
  int i = 0;
  for (const Act& a : kActs) {
    // Conv's B at slot 2, the epilogue's bias at 3 and the residual at 4: both biases apply.
    Case c = conv({2, 4, 6, 6}, {6, 2, 3, 3}, true, 2);
    c.op = "FusedConv";
    c.inputs.push_back(Shape{6});
    c.inputs.push_back(Shape{2, 6, 6, 6});
    c.attrs.set("pads", attr_ints({1, 1, 1, 1}));
    set_epilogue(c, a, 3, 4, i % 2);
    cases.push_back({std::string("FusedConv ") + a.name, c});
    // No B: the epilogue's bias at slot 2.
    Case d = conv({1, 3, 5, 7}, {5, 3, 3, 1}, false);
    d.op = "FusedConv";
    d.inputs.push_back(Shape{5});
    set_epilogue(d, a, 2, -1, 1);
    cases.push_back({std::string("FusedConv no B ") + a.name, d});
    ++i;
  }
  check_all(cases);
}

Case pool(const char* op, Shape x, std::vector<int64_t> k) {
  Case c{op, {x}, {}};
  c.attrs.set("kernel_shape", attr_ints(std::move(k)));
  c.opset = 12;
  return c;
}

TEST_F(VulkanBuiltinKernelsTest, Pools) {
  Cases cases;
  cases.push_back({"max 3x3 s2 p1", pool("MaxPool", {2, 3, 9, 10}, {3, 3})});
  cases.back().second.attrs.set("strides", attr_ints({2, 2}));
  cases.back().second.attrs.set("pads", attr_ints({1, 1, 1, 1}));
  cases.push_back({"max ceil", pool("MaxPool", {1, 2, 10, 11}, {3, 2})});
  cases.back().second.attrs.set("strides", attr_ints({2, 2}));
  cases.back().second.attrs.set("ceil_mode", attr_int(1));
  cases.push_back({"max dilation", pool("MaxPool", {1, 2, 10, 11}, {2, 3})});
  cases.back().second.attrs.set("dilations", attr_ints({2, 2}));
  cases.push_back({"max 1d", pool("MaxPool", {2, 3, 17}, {4})});
  cases.back().second.attrs.set("strides", attr_ints({3}));
  cases.push_back({"max 3d", pool("MaxPool", {1, 2, 5, 6, 7}, {2, 2, 2})});
  cases.back().second.attrs.set("strides", attr_ints({2, 2, 2}));
  cases.back().second.attrs.set("pads", attr_ints({0, 1, 1, 1, 1, 0}));
  cases.push_back({"max same upper", pool("MaxPool", {1, 3, 7, 7}, {3, 3})});
  cases.back().second.attrs.set("auto_pad", attr_string("SAME_UPPER"));
  cases.back().second.attrs.set("strides", attr_ints({2, 2}));
  for (int include : {0, 1}) {
    const std::string tag = include ? " include pad" : "";
    cases.push_back({"avg pads" + tag, pool("AveragePool", {2, 3, 9, 10}, {3, 3})});
    cases.back().second.attrs.set("strides", attr_ints({2, 2}));
    cases.back().second.attrs.set("pads", attr_ints({1, 1, 1, 1}));
    cases.back().second.attrs.set("count_include_pad", attr_int(include));
    cases.push_back({"avg ceil" + tag, pool("AveragePool", {1, 2, 10, 11}, {3, 3})});
    cases.back().second.attrs.set("strides", attr_ints({2, 2}));
    cases.back().second.attrs.set("pads", attr_ints({1, 0, 1, 0}));
    cases.back().second.attrs.set("ceil_mode", attr_int(1));
    cases.back().second.attrs.set("count_include_pad", attr_int(include));
    cases.push_back({"avg 1d" + tag, pool("AveragePool", {2, 3, 17}, {5})});
    cases.back().second.attrs.set("pads", attr_ints({2, 2}));
    cases.back().second.attrs.set("count_include_pad", attr_int(include));
    cases.push_back({"avg 3d" + tag, pool("AveragePool", {1, 2, 5, 6, 7}, {3, 3, 3})});
    cases.back().second.attrs.set("pads", attr_ints({1, 1, 1, 1, 1, 1}));
    cases.back().second.attrs.set("strides", attr_ints({2, 2, 2}));
    cases.back().second.attrs.set("count_include_pad", attr_int(include));
  }
  cases.push_back({"global avg", {"GlobalAveragePool", {Shape{2, 3, 5, 7}}, {}}});
  cases.push_back({"global avg big", {"GlobalAveragePool", {Shape{1, 4, 56, 56}}, {}}});
  cases.push_back({"global max 3d", {"GlobalMaxPool", {Shape{2, 3, 4, 4, 4}}, {}}});
  cases.push_back({"global max rank 2", {"GlobalMaxPool", {Shape{3, 4}}, {}}});
  cases.push_back({"global avg 1d", {"GlobalAveragePool", {Shape{2, 5, 9}}, {}}});
  check_all(cases);
}

TEST_F(VulkanBuiltinKernelsTest, NotTaken) {
  const KernelRegistry& reg = KernelRegistry::standard();
  auto why_of = [&](const Case& c, DType t) {
    NodeInfo node = node_of(c);
    for (DType& d : node.input_dtypes)
      if (d != DType::kUndefined) d = t;
    Expected<std::unique_ptr<Kernel>> cpu = reg.create(node);
    EXPECT_TRUE(cpu.ok()) << cpu.status().message();
    std::string why;
    Expected<std::unique_ptr<Kernel>> k =
        make_builtin_kernel(*backend_, node, cpu.ok() ? std::move(*cpu) : nullptr, &why);
    EXPECT_TRUE(k.ok()) << k.status().message();
    EXPECT_TRUE(k.ok() && !*k);
    return why;
  };
  EXPECT_EQ(why_of(matmul({2, 3}, {3, 4}), DType::kInt32), "MatMul: only float32 is on Vulkan");
  Case indices = pool("MaxPool", {1, 2, 4, 4}, {2, 2});
  indices.num_outputs = 2;
  EXPECT_EQ(why_of(indices, DType::kFloat), "MaxPool: the Indices output is not on Vulkan");
  EXPECT_EQ(why_of({"Relu", {Shape{3}}, {}}, DType::kFloat), "Relu: no hand-written shader");
}

}  // namespace
}  // namespace sod2::rt::vk

// The Vulkan reductions and normalisations (runtime/vulkan/kernels/reduction_kernels.cpp)
// against the CPU kernels of the standard registry, on random inputs: shapes must match exactly
// and values within rtol 1e-3 / atol 1e-4. Runs on whatever Vulkan device there is (lavapipe on
// CI) with the validation layer on; skipped without one.
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
#include "runtime/vulkan/kernels/reduction_kernels.h"
#include "runtime/vulkan/vulkan_backend.h"
#include "runtime/vulkan/vulkan_context.h"
#include "tests/vulkan/vulkan_kernel_harness.h"

namespace sod2::rt::vk {
namespace {

using testing::ArenaAllocator;
using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::HeapAllocator;

constexpr float kRtol = 1e-3f, kAtol = 1e-4f;

// One node to run both ways: float input shapes (nullopt = omitted), attributes, and Reduce's
// axes as an int64 input in slot 1 (host memory, like a constant).
struct Case {
  Case(std::string o, std::vector<std::optional<Shape>> in, Attrs a = {})
      : op(std::move(o)), inputs(std::move(in)), attrs(std::move(a)) {}
  std::string op;
  std::vector<std::optional<Shape>> inputs;
  Attrs attrs;
  int opset = 13;
  std::optional<std::vector<int64_t>> axes_input;
  bool alias_output = false;  // output 0 gets input 0's bytes
};

// What the Vulkan run should do with it.
enum class Expect { kDevice, kCpuFallback };

class VulkanReductionKernelsTest : public testing::VulkanKernelTest {
 protected:
  void TearDown() override {
    VulkanKernelTest::TearDown();
    if (!context_) return;
    if (cases_ > 0) std::printf("%d cases, max abs error %g\n", cases_, double{max_err_});
  }

  static NodeInfo node_of(const Case& c) {
    NodeInfo n;
    n.name = c.op + "_test";
    n.op_type = c.op;
    n.opset = c.opset;
    n.attrs = c.attrs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      n.input_dtypes.push_back(c.inputs[i] ? DType::kFloat : DType::kUndefined);
      n.input_present.push_back(c.inputs[i].has_value());
      if (i == 0 && c.axes_input) {
        n.input_dtypes.push_back(DType::kInt64);
        n.input_present.push_back(true);
      }
    }
    n.output_dtypes.assign(1, DType::kFloat);
    n.num_outputs = 1;
    return n;
  }

  void check(const Case& c, const std::string& label, bool in_arena, uint32_t seed,
             Expect expect = Expect::kDevice) {
    SCOPED_TRACE(label);
    const NodeInfo node = node_of(c);
    const KernelRegistry& reg = KernelRegistry::standard();
    Expected<std::unique_ptr<Kernel>> cpu = reg.create(node);
    ASSERT_TRUE(cpu.ok()) << cpu.status().message();
    Expected<std::unique_ptr<Kernel>> cpu2 = reg.create(node);
    ASSERT_TRUE(cpu2.ok());
    std::string why;
    std::unique_ptr<Kernel> fallback = std::move(*cpu2);
    Expected<std::unique_ptr<Kernel>> vk = make_reduction_kernel(*backend_, node, fallback, &why);
    ASSERT_TRUE(vk.ok()) << vk.status().message();
    ASSERT_TRUE(*vk) << "not taken: " << why;
    EXPECT_EQ(fallback, nullptr) << "a taken node keeps its CPU kernel for fallback";

    // Inputs in slot order (the axes after X).
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<HostTensor> host;
    std::vector<bool> present;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const auto& s = c.inputs[i];
      host.emplace_back(DType::kFloat, s ? *s : Shape{});
      present.push_back(s.has_value());
      if (s)
        for (int64_t j = 0; j < s->numel(); ++j) host.back().data<float>()[j] = 2.f * dist(rng);
      if (i == 0 && c.axes_input) {
        host.emplace_back(DType::kInt64, Shape{static_cast<int64_t>(c.axes_input->size())});
        std::copy(c.axes_input->begin(), c.axes_input->end(), host.back().data<int64_t>());
        present.push_back(true);
      }
    }
    ThreadPool pool(1);

    HeapAllocator heap(1);
    std::vector<Tensor> cpu_views;
    std::vector<const Tensor*> cpu_in;
    for (HostTensor& h : host) cpu_views.push_back(h.view());
    for (size_t i = 0; i < host.size(); ++i) cpu_in.push_back(present[i] ? &cpu_views[i] : nullptr);
    KernelContext cpu_ctx(cpu_in, &heap, &pool);
    const Status cs = (*cpu)->run(cpu_ctx);
    ASSERT_TRUE(cs.ok()) << cs.message();

    // Float inputs go to the arena when `in_arena` (X always when the output aliases it); the
    // axes stay on the host.
    ArenaAllocator arena(backend_->arena_memory());
    std::vector<Tensor> vk_views = cpu_views;
    for (size_t i = 0; i < host.size(); ++i) {
      const bool to_arena = (in_arena || (i == 0 && c.alias_output)) && present[i] &&
                            host[i].view().dtype == DType::kFloat;
      if (!to_arena) continue;
      Expected<void*> p = arena.allocate(std::max<size_t>(host[i].bytes().size(), 4));
      ASSERT_TRUE(p.ok()) << p.status().message();
      std::memcpy(*p, host[i].bytes().data(), host[i].bytes().size());
      vk_views[i].data = *p;
    }
    if (c.alias_output) {
      arena.alias = vk_views[0].data;
      arena.alias_bytes = vk_views[0].bytes();
    }
    std::vector<const Tensor*> vk_in;
    for (size_t i = 0; i < host.size(); ++i) vk_in.push_back(present[i] ? &vk_views[i] : nullptr);
    KernelContext vk_ctx(vk_in, &arena, &pool);
    backend_->reset_counters();
    EXPECT_TRUE(backend_->begin_run().ok());
    const Status vs = (*vk)->run(vk_ctx);
    ASSERT_TRUE(vs.ok()) << vs.message();
    const Status ss = backend_->sync();
    ASSERT_TRUE(ss.ok()) << ss.message();
    const bool on_device = expect == Expect::kDevice;
    EXPECT_EQ(backend_->counters().runtime_fallbacks, on_device ? 0 : 1);
    EXPECT_EQ(backend_->counters().dispatches, on_device ? 1 : 0);

    const Tensor& want = heap.views[0];
    const Tensor* got = arena.view(0);
    ASSERT_NE(got, nullptr);
    ASSERT_EQ(got->shape, want.shape) << got->shape.to_string() << " vs " << want.shape.to_string();
    int bad = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      const float w = want.as<float>()[i], g = got->as<float>()[i];
      if (std::isnan(w) && std::isnan(g)) continue;
      if (std::isinf(w) && g == w) continue;
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
  }

  // make_reduction_kernel must decline `c`, saying `why`, and leave the CPU kernel alone.
  void check_declined(const NodeInfo& node, const std::string& want_why) {
    SCOPED_TRACE(node.op_type);
    std::unique_ptr<Kernel> cpu = std::make_unique<NoopKernel>();
    std::string why;
    Expected<std::unique_ptr<Kernel>> vk = make_reduction_kernel(*backend_, node, cpu, &why);
    ASSERT_TRUE(vk.ok()) << vk.status().message();
    EXPECT_EQ(*vk, nullptr);
    EXPECT_NE(cpu, nullptr);
    EXPECT_EQ(why, want_why);
  }

  class NoopKernel final : public Kernel {
   public:
    Status run(KernelContext&) override { return Status::ok_status(); }
  };

  int cases_ = 0;
  float max_err_ = 0.f;
};

using Cases = std::vector<std::pair<std::string, Case>>;

const char* const kReduceOps[] = {"ReduceSum", "ReduceMean", "ReduceMax",
                                  "ReduceMin", "ReduceProd", "ReduceSumSquare",
                                  "ReduceL1",  "ReduceL2",   "ReduceLogSumExp"};

// Reduce with axes as the attribute (opset 13; ReduceSum's attribute form is opset 11).
Case reduce_attr(const std::string& op, Shape x, std::vector<int64_t> axes, int keepdims) {
  Case c{op, {x}, {}};
  c.opset = op == "ReduceSum" ? 11 : 13;
  c.attrs.set("axes", attr_ints(std::move(axes)));
  c.attrs.set("keepdims", attr_int(keepdims));
  return c;
}

// Reduce with axes as an input (opset 18).
Case reduce_input(const std::string& op, Shape x, std::vector<int64_t> axes, int keepdims) {
  Case c{op, {x}, {}};
  c.opset = 18;
  c.axes_input = std::move(axes);
  c.attrs.set("keepdims", attr_int(keepdims));
  return c;
}

TEST_F(VulkanReductionKernelsTest, ReduceAxesAndSizes) {
  if (!backend_) GTEST_SKIP();
  Cases cases;
  int k = 0;
  for (const char* op : kReduceOps) {
    for (int64_t n : {1, 7, 300, 2049}) {
      const std::string tag = std::string(op) + " n=" + std::to_string(n);
      // Alternate the two ways axes arrive and keepdims.
      auto make = [&](Shape x, std::vector<int64_t> axes) {
        ++k;
        return k % 2 ? reduce_attr(op, x, axes, k % 3 != 0) : reduce_input(op, x, axes, k % 3 != 0);
      };
      cases.push_back({tag + " last", make({5, n}, {1})});
      cases.push_back({tag + " first", make({n, 6}, {0})});
      cases.push_back({tag + " middle", make({3, n, 5}, {1})});
      cases.push_back({tag + " negative", make({2, 3, n}, {-1})});
      cases.push_back({tag + " two contiguous", make({2, n, 3, 4}, {1, 2})});
      cases.push_back({tag + " leading pair", make({n, 3, 4}, {-3, 1})});
    }
  }
  check_all(cases);
}

TEST_F(VulkanReductionKernelsTest, ReduceKeepdimsAndAllAxes) {
  if (!backend_) GTEST_SKIP();
  Cases cases;
  for (const char* op : kReduceOps) {
    for (int keep : {0, 1}) {
      const std::string tag = std::string(op) + " keepdims=" + std::to_string(keep);
      cases.push_back({tag + " middle", reduce_attr(op, {4, 9, 3}, {1}, keep)});
      cases.push_back({tag + " all (no axes)", reduce_attr(op, {4, 9, 3}, {}, keep)});
      cases.push_back({tag + " all listed", reduce_input(op, {4, 9, 3}, {0, 1, 2}, keep)});
      cases.push_back({tag + " empty axes input", reduce_input(op, {40, 30}, {}, keep)});
      // Unit dims between reduced ones still leave one block.
      cases.push_back({tag + " around unit", reduce_attr(op, {3, 8, 1, 9, 2}, {1, 3}, keep)});
      cases.push_back({tag + " unit axis", reduce_input(op, {3, 1, 5}, {1}, keep)});
    }
    Case no_axes = reduce_input(op, {6, 70}, {}, 1);
    no_axes.axes_input.reset();  // the optional input omitted
    cases.push_back({std::string(op) + " axes omitted", no_axes});
  }
  check_all(cases);
}

TEST_F(VulkanReductionKernelsTest, ReduceNoopWithEmptyAxesCopies) {
  if (!backend_) GTEST_SKIP();
  Cases cases;
  for (const char* op : {"ReduceL1", "ReduceSumSquare", "ReduceLogSumExp"}) {
    Case c = reduce_input(op, {4, 33}, {}, 0);
    c.attrs.set("noop_with_empty_axes", attr_int(1));
    cases.push_back({op, c});
    c.alias_output = true;
    cases.push_back({std::string(op) + " in place", c});
  }
  check_all(cases);
}

TEST_F(VulkanReductionKernelsTest, ReduceOutputOverlappingInput) {
  if (!backend_) GTEST_SKIP();
  Cases cases;
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceLogSumExp"}) {
    for (int64_t n : {7, 300}) {
      Case c = reduce_attr(op, {n, 50}, {0}, 1);
      c.alias_output = true;
      cases.push_back({std::string(op) + " first n=" + std::to_string(n), c});
      Case r = reduce_attr(op, {50, n}, {1}, 0);
      r.alias_output = true;
      cases.push_back({std::string(op) + " last n=" + std::to_string(n), r});
    }
  }
  check_all(cases);
}

TEST_F(VulkanReductionKernelsTest, ReduceManyOutputs) {
  if (!backend_) GTEST_SKIP();
  // Past one grid row of workgroups in both of the shader's modes.
  check(reduce_attr("ReduceMean", {70000, 64}, {1}, 1), "a workgroup per row", true, 3);
  check(reduce_attr("ReduceMax", {2, 8400000}, {0}, 0), "an invocation per output", true, 4);
}

TEST_F(VulkanReductionKernelsTest, ReduceInterleavedAxesRunOnCpu) {
  if (!backend_) GTEST_SKIP();
  check(reduce_attr("ReduceSum", {3, 4, 5}, {0, 2}, 1), "attr", true, 5, Expect::kCpuFallback);
  check(reduce_input("ReduceL2", {3, 4, 5, 2}, {-1, 1}, 0), "input", false, 6,
        Expect::kCpuFallback);
}

Case softmax(const std::string& op, Shape x, std::optional<int64_t> axis, int opset) {
  Case c{op, {x}, {}};
  c.opset = opset;
  if (axis) c.attrs.set("axis", attr_int(*axis));
  return c;
}

TEST_F(VulkanReductionKernelsTest, Softmax) {
  if (!backend_) GTEST_SKIP();
  Cases cases;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int opset : {11, 13}) {
      const std::string tag = std::string(op) + " opset " + std::to_string(opset);
      for (int64_t n : {1, 7, 300, 2049}) {
        const std::string t = tag + " n=" + std::to_string(n);
        cases.push_back({t + " last", softmax(op, {4, n}, -1, opset)});
        cases.push_back({t + " default axis", softmax(op, {3, n, 2}, std::nullopt, opset)});
        cases.push_back({t + " middle", softmax(op, {2, n, 5}, 1, opset)});
        cases.push_back({t + " first", softmax(op, {n, 3}, 0, opset)});
        cases.push_back({t + " negative", softmax(op, {3, 2, n, 2}, -2, opset)});
      }
      cases.push_back({tag + " rank 1", softmax(op, {33}, 0, opset)});
      Case in_place = softmax(op, {5, 300, 3}, 1, opset);
      in_place.alias_output = true;
      cases.push_back({tag + " in place", in_place});
      Case in_place_short = softmax(op, {5, 7, 3}, -1, opset);
      in_place_short.alias_output = true;
      cases.push_back({tag + " in place short", in_place_short});
    }
    cases.push_back({std::string(op) + " opset 11 axis == rank", softmax(op, {3, 4}, 2, 11)});
  }
  check_all(cases);
}

TEST_F(VulkanReductionKernelsTest, SoftmaxManyRows) {
  if (!backend_) GTEST_SKIP();
  check(softmax("Softmax", {70000, 64}, -1, 13), "a workgroup per row", true, 7);
  check(softmax("LogSoftmax", {8400000, 2}, -1, 13), "an invocation per row", true, 8);
}

Case layer_norm(Shape x, int64_t axis, bool bias, bool scalar_params = false) {
  const int64_t r = x.rank();
  const int64_t a = axis < 0 ? axis + r : axis;
  Shape p;
  if (scalar_params) {
    p = Shape{1};
  } else {
    for (int64_t i = a; i < r; ++i) p.push_back(x[static_cast<int>(i)]);
  }
  Case c{"LayerNormalization", {x, p}, {}};
  if (bias) c.inputs.push_back(p);
  c.opset = 17;
  c.attrs.set("axis", attr_int(axis));
  c.attrs.set("epsilon", attr_float(1e-5f));
  return c;
}

TEST_F(VulkanReductionKernelsTest, LayerNormalization) {
  if (!backend_) GTEST_SKIP();
  Cases cases;
  for (bool bias : {false, true}) {
    const std::string tag = bias ? "bias" : "no bias";
    for (int64_t n : {1, 7, 300, 2049}) {
      const std::string t = tag + " n=" + std::to_string(n);
      cases.push_back({t + " axis -1", layer_norm({3, 4, n}, -1, bias)});
      cases.push_back({t + " axis -2", layer_norm({5, 3, n}, -2, bias)});
      cases.push_back({t + " axis 0", layer_norm({n, 2}, 0, bias)});
    }
    cases.push_back({tag + " scalar params", layer_norm({6, 50}, 1, bias, true)});
    Case in_place = layer_norm({9, 500}, -1, bias);
    in_place.alias_output = true;
    cases.push_back({tag + " in place", in_place});
    Case in_place_short = layer_norm({200, 9}, -1, bias);
    in_place_short.alias_output = true;
    cases.push_back({tag + " in place short", in_place_short});
  }
  // Default axis (-1) and epsilon.
  Case d{"LayerNormalization", {Shape{4, 100}, Shape{100}, Shape{100}}, {}};
  d.opset = 17;
  cases.push_back({"defaults", d});
  Case eps = layer_norm({4, 16}, -1, true);
  eps.attrs.set("epsilon", attr_float(0.5f));
  cases.push_back({"large epsilon", eps});
  check_all(cases);
}

TEST_F(VulkanReductionKernelsTest, DeclinedNodes) {
  if (!backend_) GTEST_SKIP();
  NodeInfo n;
  n.op_type = "Relu";
  n.input_dtypes = {DType::kFloat};
  n.output_dtypes = {DType::kFloat};
  n.num_outputs = 1;
  n.opset = 13;
  check_declined(n, "Relu: no hand-written shader");

  n.op_type = "Softmax";
  n.domain = "com.microsoft";
  check_declined(n, "Softmax: no hand-written shader");
  n.domain.clear();

  n.input_dtypes = {DType::kDouble};
  n.output_dtypes = {DType::kDouble};
  check_declined(n, "Softmax: only float32 is on Vulkan");

  n.op_type = "ReduceMean";
  n.input_dtypes = {DType::kInt32, DType::kInt64};
  n.output_dtypes = {DType::kInt32};
  check_declined(n, "ReduceMean: only float32 is on Vulkan");

  n.op_type = "LayerNormalization";
  n.opset = 17;
  n.input_dtypes = {DType::kFloat, DType::kFloat, DType::kFloat};
  n.output_dtypes = {DType::kFloat, DType::kFloat, DType::kFloat};
  n.num_outputs = 3;
  check_declined(n, "LayerNormalization: the Mean and InvStdDev outputs are not on Vulkan");
}

}  // namespace
}  // namespace sod2::rt::vk

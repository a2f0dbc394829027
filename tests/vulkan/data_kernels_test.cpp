// The float32 data-movement kernels on Vulkan (runtime/vulkan/kernels/data_kernels.cpp) against
// the CPU kernels of the standard registry: same shapes, bit-identical values (they only move
// data), the same errors, and the nodes they do not take left to the CPU. Runs on whatever
// Vulkan device there is (lavapipe on CI) with the validation layer on; skipped without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_registry.h"
#include "runtime/threads/thread_pool.h"
#include "runtime/vulkan/kernels/data_kernels.h"
#include "runtime/vulkan/vulkan_backend.h"
#include "runtime/vulkan/vulkan_context.h"
#include "tests/vulkan/vulkan_kernel_harness.h"

namespace sod2::rt::vk {
namespace {

using testing::ArenaAllocator;
using testing::attr_int;
using testing::attr_ints;
using testing::HeapAllocator;

// An input: float data (random), int values (int64 or int32), or omitted.
struct In {
  Shape shape;
  DType dtype = DType::kFloat;
  std::vector<int64_t> values;  // for int inputs
  bool present = true;
};
In data(Shape s) {
  In in;
  in.shape = s;
  return in;
}
In i64s(std::vector<int64_t> v) {
  return {Shape{static_cast<int64_t>(v.size())}, DType::kInt64, v};
}
In i32s(std::vector<int64_t> v) {
  return {Shape{static_cast<int64_t>(v.size())}, DType::kInt32, v};
}
In idx(Shape s, std::vector<int64_t> v, DType t = DType::kInt64) { return {s, t, std::move(v)}; }
In none() { return {Shape{}, DType::kUndefined, {}, false}; }

struct Case {
  std::string label;
  std::string op;
  std::vector<In> inputs;
  Attrs attrs;
  int opset = 13;
};

Case make(std::string label, std::string op, std::vector<In> in, int opset = 13) {
  Case c;
  c.label = std::move(label);
  c.op = std::move(op);
  c.inputs = std::move(in);
  c.opset = opset;
  return c;
}
Case with(Case c, const std::string& name, AttrValue v) {
  c.attrs.set(name, std::move(v));
  return c;
}

class VulkanDataKernelsTest : public testing::VulkanKernelTest {
 protected:
  static NodeInfo node_of(const Case& c) {
    NodeInfo n;
    n.name = c.op + "_test";
    n.op_type = c.op;
    n.opset = c.opset;
    n.attrs = c.attrs;
    for (const In& in : c.inputs) {
      n.input_dtypes.push_back(in.present ? in.dtype : DType::kUndefined);
      n.input_present.push_back(in.present);
    }
    n.output_dtypes = {DType::kFloat};
    n.num_outputs = 1;
    return n;
  }

  static HostTensor host_input(const In& in, std::mt19937& rng) {
    HostTensor t(in.dtype == DType::kUndefined ? DType::kFloat : in.dtype, in.shape);
    if (!in.present) return t;
    if (in.dtype == DType::kFloat) {
      std::uniform_real_distribution<float> d(-1.f, 1.f);
      for (int64_t i = 0; i < in.shape.numel(); ++i) t.data<float>()[i] = d(rng);
    } else {
      for (size_t i = 0; i < in.values.size(); ++i) {
        if (in.dtype == DType::kInt64)
          t.data<int64_t>()[i] = in.values[i];
        else
          t.data<int32_t>()[i] = static_cast<int32_t>(in.values[i]);
      }
    }
    return t;
  }

  // Runs `c` on the CPU and on Vulkan. Inputs go to the arena when `in_arena` (else the backend
  // stages them); `alias_input` >= 0 puts the Vulkan output over that input's bytes. An error
  // on the CPU must be the same error on Vulkan; otherwise the outputs must be bit-identical,
  // with no run handed to the CPU and `dispatches` recorded (-1: one if the output is not empty).
  void check(const Case& c, bool in_arena, uint32_t seed, int alias_input = -1,
             int dispatches = -1) {
    SCOPED_TRACE(c.label);
    const NodeInfo node = node_of(c);
    const KernelRegistry& reg = KernelRegistry::standard();
    Expected<std::unique_ptr<Kernel>> cpu = reg.create(node);
    ASSERT_TRUE(cpu.ok()) << cpu.status().message();
    Expected<std::unique_ptr<Kernel>> fallback = reg.create(node);
    ASSERT_TRUE(fallback.ok());
    std::string why;
    Expected<std::unique_ptr<Kernel>> vk = make_data_kernel(*backend_, node, *fallback, &why);
    ASSERT_TRUE(vk.ok()) << vk.status().message();
    ASSERT_TRUE(*vk) << "not taken: " << why;
    EXPECT_EQ(*fallback, nullptr) << "the CPU kernel must move into the Vulkan kernel";

    std::mt19937 rng(seed);
    std::vector<HostTensor> host;
    for (const In& in : c.inputs) host.push_back(host_input(in, rng));
    ThreadPool pool(1);

    HeapAllocator heap(1);
    std::vector<Tensor> cpu_views;
    std::vector<const Tensor*> cpu_in;
    for (const HostTensor& h : host) cpu_views.push_back(h.view());
    for (size_t i = 0; i < host.size(); ++i)
      cpu_in.push_back(c.inputs[i].present ? &cpu_views[i] : nullptr);
    KernelContext cpu_ctx(cpu_in, &heap, &pool);
    const Status cs = (*cpu)->run(cpu_ctx);

    ArenaAllocator arena(backend_->arena_memory());
    std::vector<Tensor> vk_views = cpu_views;
    for (size_t i = 0; i < host.size(); ++i) {
      if (!c.inputs[i].present || (!in_arena && static_cast<int>(i) != alias_input)) continue;
      // An input the output lies over has room for the output too.
      const size_t room = static_cast<int>(i) == alias_input ? size_t{1} << 16 : 4;
      const size_t bytes = std::max(host[i].bytes().size(), room);
      Expected<void*> p = arena.allocate(bytes);
      ASSERT_TRUE(p.ok()) << p.status().message();
      std::memcpy(*p, host[i].bytes().data(), host[i].bytes().size());
      vk_views[i].data = *p;
      if (static_cast<int>(i) == alias_input) {
        arena.alias = *p;
        arena.alias_bytes = bytes;
      }
    }
    std::vector<const Tensor*> vk_in;
    for (size_t i = 0; i < host.size(); ++i)
      vk_in.push_back(c.inputs[i].present ? &vk_views[i] : nullptr);
    KernelContext vk_ctx(vk_in, &arena, &pool);
    backend_->reset_counters();
    EXPECT_TRUE(backend_->begin_run().ok());
    const Status vs = (*vk)->run(vk_ctx);
    const Status ss = backend_->sync();
    ASSERT_TRUE(ss.ok()) << ss.message();
    if (!cs.ok()) {
      EXPECT_FALSE(vs.ok()) << "the CPU failed with: " << cs.message();
      EXPECT_EQ(vs.message(), cs.message());
      EXPECT_EQ(vs.code(), cs.code());
      return;
    }
    ASSERT_TRUE(vs.ok()) << vs.message();
    EXPECT_EQ(backend_->counters().runtime_fallbacks, 0);
    const Tensor& want = heap.views[0];
    if (dispatches < 0) dispatches = want.numel() > 0 ? 1 : 0;
    EXPECT_EQ(backend_->counters().dispatches, dispatches);

    const Tensor* got = arena.view(0);
    ASSERT_NE(got, nullptr);
    ASSERT_EQ(got->shape, want.shape) << got->shape.to_string() << " vs " << want.shape.to_string();
    ASSERT_EQ(got->dtype, DType::kFloat);
    int bad = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      uint32_t w, g;
      std::memcpy(&w, want.as<float>() + i, 4);
      std::memcpy(&g, got->as<float>() + i, 4);
      if (w != g && bad++ < 5)
        ADD_FAILURE() << "element " << i << ": vulkan " << got->as<float>()[i] << ", cpu "
                      << want.as<float>()[i];
    }
    EXPECT_EQ(bad, 0) << bad << " of " << want.numel() << " elements differ";
  }

  void check_all(const std::vector<Case>& cases) {
    uint32_t seed = 1;
    for (const Case& c : cases) {
      check(c, seed % 2 == 0, seed);
      ++seed;
    }
  }

  // The factory declines `c`, says why, and leaves the CPU kernel with the caller.
  void check_not_taken(const Case& c, const std::string& why_part) {
    SCOPED_TRACE(c.label);
    NodeInfo node = node_of(c);
    if (!c.inputs.empty() && c.inputs[0].dtype != DType::kFloat)
      node.output_dtypes = {c.inputs[0].dtype};
    std::unique_ptr<Kernel> cpu;
    if (node.domain.empty()) {
      Expected<std::unique_ptr<Kernel>> k = KernelRegistry::standard().create(node);
      ASSERT_TRUE(k.ok()) << k.status().message();
      cpu = std::move(*k);
    }
    Kernel* before = cpu.get();
    std::string why;
    Expected<std::unique_ptr<Kernel>> vk = make_data_kernel(*backend_, node, cpu, &why);
    ASSERT_TRUE(vk.ok()) << vk.status().message();
    EXPECT_EQ(*vk, nullptr);
    EXPECT_EQ(cpu.get(), before);
    EXPECT_NE(why.find(why_part), std::string::npos) << why;
  }
};

Case transpose(Shape s, std::vector<int64_t> perm) {
  Case c = make("Transpose " + s.to_string() + " perm " + std::to_string(perm.size()), "Transpose",
                {data(s)});
  if (!perm.empty()) c.attrs.set("perm", attr_ints(perm));
  return c;
}

TEST_F(VulkanDataKernelsTest, Transpose) {
  check_all({
      transpose({3, 5}, {}),
      transpose({3, 5}, {1, 0}),
      transpose({7}, {0}),
      transpose({}, {}),
      transpose({4, 5, 6}, {2, 0, 1}),
      transpose({4, 5, 6}, {1, 0, 2}),
      transpose({4, 5, 6}, {-1, 0, 1}),
      transpose({2, 3, 4, 5}, {0, 2, 3, 1}),
      transpose({2, 3, 4, 5}, {3, 1, 2, 0}),
      transpose({2, 3, 1, 4, 5}, {4, 0, 2, 1, 3}),
      transpose({2, 3, 2, 3, 2, 4}, {5, 4, 3, 2, 1, 0}),
      transpose({2, 3, 2, 3, 2, 4}, {0, 2, 4, 1, 3, 5}),
      transpose({2, 1, 2, 1, 2, 1, 2, 3}, {7, 6, 5, 4, 3, 2, 1, 0}),
      transpose({0, 3}, {1, 0}),
      transpose({64, 300, 17}, {2, 0, 1}),
  });
}

TEST_F(VulkanDataKernelsTest, TransposeErrorsMatchCpu) {
  if (!backend_) GTEST_SKIP();
  check(transpose({2, 3}, {0, 0}), true, 1);
  check(transpose({2, 3}, {0, 1, 2}), true, 2);
  check(transpose({2, 3}, {0, 2}), true, 3);
}

Case concat(int64_t axis, std::vector<Shape> shapes) {
  Case c;
  c.label = "Concat axis " + std::to_string(axis) + " of " + std::to_string(shapes.size());
  c.op = "Concat";
  for (const Shape& s : shapes) {
    c.label += " " + s.to_string();
    c.inputs.push_back(data(s));
  }
  c.attrs.set("axis", attr_int(axis));
  return c;
}

TEST_F(VulkanDataKernelsTest, Concat) {
  if (!backend_) GTEST_SKIP();
  struct {
    Case c;
    int dispatches;
  } cases[] = {
      {concat(0, {{4, 3, 2}}), 1},
      {concat(0, {{4, 3, 2}, {1, 3, 2}}), 2},
      {concat(1, {{4, 3, 2}, {4, 1, 2}, {4, 5, 2}}), 3},
      {concat(2, {{4, 3, 2}, {4, 3, 1}, {4, 3, 3}, {4, 3, 2}}), 4},
      {concat(-1, {{4, 3, 2}, {4, 3, 1}, {4, 3, 3}, {4, 3, 2}, {4, 3, 5}}), 5},
      {concat(1, {{2, 3, 4}, {2, 0, 4}, {2, 5, 4}}), 2},
      {concat(0, {{0, 3}, {2, 3}, {0, 3}}), 1},
      {concat(0, {{0, 3}, {0, 3}}), 0},
      {concat(1, {{2, 0}, {2, 0}}), 0},
      {concat(0, {{5}, {7}, {1}}), 3},
      {concat(-3, {{2, 3, 4, 5}, {2, 1, 4, 5}}), 2},
      {concat(3, {{2, 3, 4, 5}, {2, 3, 4, 1}, {2, 3, 4, 7}}), 3},
      {concat(1, {{300, 129}, {300, 257}}), 2},
  };
  uint32_t seed = 1;
  for (auto& [c, n] : cases) {
    check(c, seed % 2 == 0, seed, -1, n);
    ++seed;
  }
  check(concat(1, {{2, 3}, {3, 3}}), true, 99);  // shapes differ: the CPU's error
  check(concat(2, {{2, 3}, {2, 3}}), true, 98);  // axis out of range
}

Case slice(std::string label, Shape s, In starts, In ends, In axes = none(), In steps = none()) {
  std::vector<In> in = {data(s), starts, ends, axes, steps};
  while (!in.back().present) in.pop_back();
  return make("Slice " + label, "Slice", in);
}

TEST_F(VulkanDataKernelsTest, Slice) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<Case> cases = {
      slice("first axis", {5, 6, 7}, i64s({1}), i64s({4})),
      slice("all axes", {5, 6, 7}, i64s({1, 0, 2}), i64s({4, 6, 5})),
      slice("negative axes", {5, 6, 7}, i64s({-3, 1}), i64s({-1, 3}), i64s({-1, -2})),
      slice("clamped ends", {5, 6, 7}, i64s({-100, 2}), i64s({100, kMax}), i64s({0, 2})),
      slice("steps", {5, 6, 7}, i64s({0, 1}), i64s({5, 7}), i64s({0, 2}), i64s({2, 3})),
      slice("negative step", {5, 6, 7}, i64s({-1}), i64s({kMin}), i64s({1}), i64s({-1})),
      slice("negative steps", {5, 6, 7}, i64s({-1, 10, 0}), i64s({-1000, -10, 7}), i64s({0, 2, 1}),
            i64s({-2, -3, 2})),
      slice("reverse all", {5, 6, 7}, i64s({-1, -1, -1}), i64s({kMin, kMin, kMin}), i64s({0, 1, 2}),
            i64s({-1, -1, -1})),
      slice("huge step", {5, 6, 7}, i64s({2}), i64s({kMax}), i64s({2}), i64s({kMax})),
      slice("huge negative step", {5, 6, 7}, i64s({3}), i64s({kMin}), i64s({1}), i64s({kMin})),
      slice("empty", {5, 6, 7}, i64s({3}), i64s({2}), i64s({2})),
      slice("empty negative", {5, 6, 7}, i64s({2}), i64s({3}), i64s({2}), i64s({-1})),
      slice("int32", {5, 6, 7}, i32s({1, -5}), i32s({3, -1}), i32s({2, 1})),
      slice("rank 1", {10}, i64s({8}), i64s({1}), i64s({0}), i64s({-3})),
      slice("rank 6", {2, 3, 4, 3, 2, 5}, i64s({1, 1, -2}), i64s({2, -4, 0}), i64s({1, 3, 5}),
            i64s({1, -1, -1})),
      slice("zero dim", {0, 6}, i64s({0}), i64s({3}), i64s({1})),
      slice("large", {512, 1030}, i64s({1, 3}), i64s({511, 1027}), i64s({0, 1}), i64s({1, 2})),
  };
  Case v1 = make("Slice-1 attributes", "Slice", {data({5, 6, 7})}, 9);
  v1.attrs.set("starts", attr_ints({1, -4}));
  v1.attrs.set("ends", attr_ints({1000, -1}));
  v1.attrs.set("axes", attr_ints({2, 0}));
  cases.push_back(v1);
  check_all(cases);
}

TEST_F(VulkanDataKernelsTest, SliceErrorsMatchCpu) {
  if (!backend_) GTEST_SKIP();
  check(slice("repeated axis", {5, 6}, i64s({0, 1}), i64s({2, 3}), i64s({1, -1})), true, 1);
  check(slice("step 0", {5, 6}, i64s({0}), i64s({2}), i64s({0}), i64s({0})), true, 2);
  check(slice("ends differ", {5, 6}, i64s({0}), i64s({2, 3})), true, 3);
  check(slice("bad axis", {5, 6}, i64s({0}), i64s({2}), i64s({2})), true, 4);
}

Case gather(std::string label, int64_t axis, Shape s, In indices) {
  Case c = make("Gather " + label, "Gather", {data(s), std::move(indices)});
  c.attrs.set("axis", attr_int(axis));
  return c;
}

TEST_F(VulkanDataKernelsTest, Gather) {
  check_all({
      gather("axis 0", 0, {5, 4, 3}, idx({2, 3}, {0, 4, -1, 2, -5, 3})),
      gather("axis 1", 1, {5, 4, 3}, idx({3}, {-1, 0, 2})),
      gather("axis -1", -1, {5, 4, 3}, idx({2, 2}, {2, -3, 1, -1}, DType::kInt32)),
      gather("scalar axis 0", 0, {5, 4, 3}, idx({}, {-2})),
      gather("scalar axis 1", 1, {5, 4, 3}, idx({}, {3})),
      gather("scalar axis -1 int32", -1, {5, 4, 3}, idx({}, {-1}, DType::kInt32)),
      gather("rank 1", 0, {7}, idx({4}, {6, 0, -7, 3})),
      gather("rank 1 scalar", 0, {7}, idx({}, {-1})),
      gather("no indices", 0, {5, 3}, idx({0}, {})),
      gather("repeats", 1, {2, 6}, idx({8}, {1, 1, 1, -5, 5, 5, 0, 0})),
      gather("embedding", 0, {1000, 64}, idx({2, 37}, std::vector<int64_t>(74, 999))),
      gather("rank 4 axis 2", 2, {2, 3, 4, 5}, idx({2, 1}, {-4, 3})),
  });
}

TEST_F(VulkanDataKernelsTest, GatherErrorsMatchCpu) {
  if (!backend_) GTEST_SKIP();
  check(gather("index too large", 0, {5, 3}, idx({2}, {1, 5})), true, 1);
  check(gather("index too small", 1, {5, 3}, idx({2}, {-4, 0})), false, 2);
  check(gather("axis", 2, {5, 3}, idx({1}, {0})), true, 3);
  check(gather("float indices", 0, {5, 3}, idx({1}, {}, DType::kFloat)), true, 4);
}

Case reshape(std::string label, Shape s, std::vector<int64_t> shape, int64_t allowzero = 0) {
  Case c = make("Reshape " + label, "Reshape", {data(s), i64s(shape)}, 14);
  if (allowzero) c.attrs.set("allowzero", attr_int(allowzero));
  return c;
}

TEST_F(VulkanDataKernelsTest, ReshapeFamily) {
  std::vector<Case> cases = {
      reshape("0 and -1", {2, 3, 4}, {0, -1}),
      reshape("-1 in the middle", {2, 3, 4}, {4, -1, 0}),
      reshape("flat", {2, 3, 4}, {-1}),
      reshape("split dims", {2, 3, 4}, {2, 3, 2, 2}),
      reshape("to scalar", {1, 1}, {}),
      reshape("empty", {0, 3}, {3, 0}),
      reshape("allowzero", {0, 3}, {3, 0}, 1),
      with(make("Reshape-1 attribute", "Reshape", {data({2, 3, 4})}, 1), "shape",
           attr_ints({0, 2, -1})),
      with(make("Flatten axis 0", "Flatten", {data({2, 3, 4})}), "axis", attr_int(0)),
      with(make("Flatten axis 2", "Flatten", {data({2, 3, 4})}), "axis", attr_int(2)),
      with(make("Flatten axis -1", "Flatten", {data({2, 3, 4})}), "axis", attr_int(-1)),
      make("Flatten default", "Flatten", {data({2, 3, 4})}),
      make("Squeeze axes input", "Squeeze", {data({1, 3, 1, 2}), i64s({0, -2})}),
      make("Squeeze all", "Squeeze", {data({1, 3, 1, 2})}),
      with(make("Squeeze-11 attribute", "Squeeze", {data({1, 3, 1, 2})}, 11), "axes",
           attr_ints({2})),
      make("Unsqueeze axes input", "Unsqueeze", {data({3, 4}), i64s({0, -1})}),
      make("Unsqueeze middle", "Unsqueeze", {data({3, 4}), i64s({1, 3})}),
      with(make("Unsqueeze-11 attribute", "Unsqueeze", {data({3, 4})}, 11), "axes",
           attr_ints({-3})),
  };
  check_all(cases);
}

TEST_F(VulkanDataKernelsTest, ReshapeErrorsMatchCpu) {
  if (!backend_) GTEST_SKIP();
  check(reshape("two -1", {2, 3, 4}, {-1, -1}), true, 1);
  check(reshape("wrong count", {2, 3, 4}, {5, 5}), true, 2);
  check(make("Squeeze not 1", "Squeeze", {data({1, 3}), i64s({1})}), true, 3);
  check(make("Unsqueeze repeated", "Unsqueeze", {data({3}), i64s({0, 0})}), true, 4);
  check(with(make("Flatten axis", "Flatten", {data({2, 3})}), "axis", attr_int(3)), true, 5);
}

// Beyond one dimension of workgroups (65535 x 256 elements): the grid folds into y.
TEST_F(VulkanDataKernelsTest, LargeCopy) {
  if (!backend_) GTEST_SKIP();
  check(reshape("17M", {4200, 4000}, {-1}), true, 1);
  check(transpose({2100, 4000, 2}, {0, 2, 1}), true, 2);
}

// The memory plan may place the output over an input this node is the last to read.
TEST_F(VulkanDataKernelsTest, OutputOverInput) {
  if (!backend_) GTEST_SKIP();
  check(transpose({33, 65}, {1, 0}), true, 1, 0);
  check(transpose({4, 5, 6}, {2, 1, 0}), false, 2, 0);
  check(reshape("in place", {6, 7}, {7, 6}), true, 3, 0, 0);
  check(slice("in place", {5, 6}, i64s({-1}), i64s({std::numeric_limits<int64_t>::min()}),
              i64s({0}), i64s({-1})),
        true, 4, 0);
  check(gather("in place", 0, {6, 4}, idx({6}, {5, 4, 3, 2, 1, 0})), true, 5, 0);
  check(concat(0, {{3, 4}, {8, 4}}), true, 6, 1, 2);
}

TEST_F(VulkanDataKernelsTest, NotTaken) {
  if (!backend_) GTEST_SKIP();
  check_not_taken(make("Split", "Split", {data({4})}), "Split: no hand-written shader");
  Case ms = make("other domain", "Transpose", {data({4})});
  NodeInfo n = node_of(ms);
  n.domain = "com.microsoft";
  std::unique_ptr<Kernel> none;
  std::string why;
  Expected<std::unique_ptr<Kernel>> vk = make_data_kernel(*backend_, n, none, &why);
  ASSERT_TRUE(vk.ok());
  EXPECT_EQ(*vk, nullptr);
  EXPECT_EQ(why, "Transpose: no hand-written shader");

  In int_data{Shape{5, 3}, DType::kInt64, std::vector<int64_t>(15, 1)};
  Case g = gather("int64 data", 0, {5, 3}, idx({1}, {0}));
  g.inputs[0] = int_data;
  check_not_taken(g, "Gather: only float32 data is on Vulkan");
  Case c = concat(0, {{2, 3}, {2, 3}});
  c.inputs[1].dtype = DType::kInt64;
  check_not_taken(c, "Concat: only float32 data is on Vulkan");
  Case r = reshape("undefined", {2, 3}, {-1});
  r.inputs[0].dtype = DType::kUndefined;
  check_not_taken(r, "Reshape: only float32 data is on Vulkan");
}

}  // namespace
}  // namespace sod2::rt::vk

// Generated shaders for hand-made elementwise groups: which nodes fusion groups for Vulkan (and
// where it must split), and that a Vulkan session running each group as one dispatch gives the
// CPU kernels' shapes exactly and their values within rtol 1e-3 / atol 1e-4, at several
// bindings of the same shader, with no validation error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "../onnx/proto_builder.h"
#include "app/cli/output_compare.h"
#include "core/onnx/onnx_import.h"
#include "core/package/package_writer.h"
#include "core/pipeline/compiled_model.h"
#include "vulkan_test_util.h"

namespace sod2 {
namespace {

using testing::add_float_initializer;
using testing::add_input;
using testing::add_node;
using testing::add_output;

onnx::AttributeProto* add_float_attr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
  return a;
}

Expected<rt::ProgramDesc> compile(const onnx::ModelProto& m) {
  const auto bytes = testing::serialize(m);
  SOD2_ASSIGN_OR_RETURN(Model model, import_onnx_bytes(bytes, "", "test model"));
  pipeline::CompileOptions o;
  o.target = sod2::pipeline::Target::kVulkan;
  o.rdp.ranges["n"] = {1, 64, 1};
  return pipeline::compile_program(model, o);
}

// Runs `program` on the CPU and on Vulkan with the same random inputs of these shapes and
// compares every output.
void expect_same_on_vulkan(const rt::ProgramDesc& program, const std::vector<rt::Shape>& shapes,
                           float lo = -2.f, float hi = 2.f) {
  auto vk = testing::make_vulkan();
  if (!vk.backend) GTEST_SKIP() << "no Vulkan device: " << vk.skip_reason;
  const int errors_before = vk.context->validation_errors();
  std::vector<rt::HostTensor> inputs;
  std::vector<rt::Tensor> views;
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(testing::random_tensor(shapes[i], 17 + static_cast<uint32_t>(i), lo, hi));
  }
  for (const auto& h : inputs) views.push_back(h.view());
  auto cpu = rt::Session::create(program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  rt::SessionOptions options;
  options.threads = 1;
  options.backend = vk.backend;
  auto gpu = rt::Session::create(program, rt::KernelRegistry::standard(), options);
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  auto want = (*cpu)->run(views);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  auto got = (*gpu)->run(views);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ((*got)[i].shape, (*want)[i].shape) << "output " << i;
    const cli::Comparison c = cli::compare_tensors((*got)[i], (*want)[i], 1e-3, 1e-4);
    EXPECT_TRUE(c.ok()) << "output " << i << ": max abs " << c.max_abs << ", max rel " << c.max_rel
                        << ", " << c.mismatches << " mismatches";
  }
  EXPECT_GT(vk.backend->counters().dispatches, 0);
  EXPECT_EQ(vk.context->validation_errors(), errors_before)
      << testing::validation_report(*vk.context);
}

// The model's nodes a generated kernel runs: a FusedElementwise node counts its members.
int model_nodes(const rt::ProgramDesc& p, const rt::GpuKernelDesc& k) {
  int n = 0;
  for (int32_t i : k.nodes) {
    const rt::NodeDesc& node = p.graphs[0].nodes[static_cast<size_t>(i)];
    n += node.fused_nodes.empty() ? 1 : static_cast<int>(node.fused_nodes.size());
  }
  return n;
}

int grouped_nodes(const rt::ProgramDesc& p) {
  int n = 0;
  for (const auto& k : p.gpu_kernels) n += model_nodes(p, k);
  return n;
}

TEST(ElementwiseGroups, ChainWithScalarAndBiasIsOneShaderWithTwoInputs) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_float_initializer(g, "half", {}, {0.5f});
  std::vector<float> b(16);
  for (int i = 0; i < 16; ++i) b[i] = 0.1f * i - 0.7f;
  add_float_initializer(g, "b", {16}, b);
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "Mul", {"r", "half"}, {"h"}, "scale");
  add_node(g, "Add", {"h", "b"}, {"a"}, "bias");
  add_node(g, "Sigmoid", {"a"}, {"y"}, "sig");
  add_output(g, "y");
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->gpu_kernels.size(), 1u);
  const rt::GpuKernelDesc& k = p->gpu_kernels[0];
  EXPECT_EQ(model_nodes(*p, k), 4);  // one FusedElementwise node
  EXPECT_EQ(k.inputs.size(), 2u);    // x and b; 0.5 is a literal
  EXPECT_EQ(k.rank, 2);
  EXPECT_NE(k.source.find("uintBitsToFloat(0x3f000000u)"), std::string::npos) << k.source;
  ASSERT_FALSE(k.spirv.empty());
  EXPECT_EQ(k.spirv[0], 0x07230203u);
  // One shader, every binding.
  for (int64_t n : {1, 7, 64}) expect_same_on_vulkan(*p, {rt::Shape{n, 16}});
}

TEST(ElementwiseGroups, BroadcastBothWays) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "a", {std::string("n"), int64_t{1}, int64_t{8}});
  add_input(g, "b", {int64_t{3}, int64_t{1}});
  add_node(g, "Add", {"a", "b"}, {"s"}, "add");
  add_node(g, "Tanh", {"s"}, {"y"}, "tanh");
  add_output(g, "y");
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->gpu_kernels.size(), 1u);
  EXPECT_EQ(p->gpu_kernels[0].rank, 3);
  for (int64_t n : {1, 5}) expect_same_on_vulkan(*p, {rt::Shape{n, 1, 8}, rt::Shape{3, 1}});
}

TEST(ElementwiseGroups, SwishReadsItsInputTwice) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{3}, int64_t{5}, int64_t{5}});
  add_node(g, "Sigmoid", {"x"}, {"s"}, "sig");
  add_node(g, "Mul", {"x", "s"}, {"y"}, "mul");
  add_output(g, "y");
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->gpu_kernels.size(), 1u);
  EXPECT_EQ(p->gpu_kernels[0].inputs.size(), 1u);
  EXPECT_EQ(model_nodes(*p, p->gpu_kernels[0]), 2);
  expect_same_on_vulkan(*p, {rt::Shape{2, 3, 5, 5}}, -8.f, 8.f);
}

TEST(ElementwiseGroups, EveryOpTheGeneratorKnows) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{33}});
  add_input(g, "z", {std::string("n"), int64_t{33}});
  add_float_initializer(g, "lo", {}, {-0.75f});
  add_float_initializer(g, "hi", {}, {1.25f});
  add_float_initializer(g, "two", {}, {2.f});
  add_float_initializer(g, "onehalf", {}, {1.5f});
  add_float_initializer(g, "one", {}, {1.f});
  add_float_initializer(g, "slope", {33}, std::vector<float>(33, 0.3f));
  std::string v = "x";
  int k = 0;
  auto step = [&](const std::string& op, std::vector<std::string> extra = {}) {
    std::vector<std::string> ins = {v};
    for (auto& e : extra) ins.push_back(e);
    const std::string out = "t" + std::to_string(k++);
    auto* n = add_node(g, op, ins, {out}, op + std::to_string(k));
    v = out;
    return n;
  };
  step("Abs");
  step("Add", {"one"});
  step("Log");
  step("Sqrt");
  step("Pow", {"onehalf"});
  step("Sub", {"z"});
  step("Erf");
  step("Mul", {"z"});
  step("Softplus");
  step("Neg");
  step("HardSwish");
  add_float_attr(step("HardSigmoid"), "alpha", 0.3f);
  step("Sub", {"z"});
  add_float_attr(step("LeakyRelu"), "alpha", 0.2f);
  step("Elu");
  step("Selu");
  step("Clip", {"lo", "hi"});
  step("Pow", {"two"});
  step("Max", {"z"});
  step("Min", {"two"});
  step("Softsign");
  step("Sin");
  step("Cos");
  step("Exp");
  step("Reciprocal");
  step("Div", {"onehalf"});
  step("PRelu", {"slope"});
  step("Identity");
  step("Tanh");
  step("Relu");
  add_node(g, "Sigmoid", {v}, {"y"}, "last");
  add_output(g, "y");
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  // Two graph inputs and the slope: all of it is one FusedElementwise and fits one shader.
  EXPECT_EQ(p->graphs[0].nodes.size(), 1u);
  EXPECT_EQ(p->gpu_kernels.size(), 1u);
  expect_same_on_vulkan(*p, {rt::Shape{4, 33}, rt::Shape{4, 33}});
}

// Rounding ops on values whose every step is exact on both sides (IEEE add and multiply), so
// no result sits a rounding error away from a step of Floor / Ceil / Round.
TEST(ElementwiseGroups, RoundingOps) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{40}});
  add_float_initializer(g, "half", {}, {0.5f});
  add_node(g, "Floor", {"x"}, {"f"}, "floor");
  add_node(g, "Add", {"f", "x"}, {"s"}, "add");
  add_node(g, "Ceil", {"s"}, {"c"}, "ceil");
  add_node(g, "Mul", {"c", "half"}, {"h"}, "half");
  add_node(g, "Round", {"h"}, {"y"}, "round");
  add_output(g, "y");
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->gpu_kernels.size(), 1u);
  expect_same_on_vulkan(*p, {rt::Shape{3, 40}}, -9.f, 9.f);
}

TEST(ElementwiseGroups, AValueReadOutsideEndsTheGroup) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{8}});
  add_node(g, "Relu", {"x"}, {"a"}, "relu");
  add_node(g, "Sigmoid", {"a"}, {"y"}, "sig");
  add_output(g, "a");
  add_output(g, "y");
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->gpu_kernels.size(), 2u);  // a is a graph output: Relu cannot hide it
  EXPECT_EQ(p->gpu_kernels[0].nodes.size(), 1u);
  EXPECT_EQ(p->gpu_kernels[1].nodes.size(), 1u);
  expect_same_on_vulkan(*p, {rt::Shape{3, 8}});
}

TEST(ElementwiseGroups, InputsBeyondThePushConstantsSplitTheGroup) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  std::vector<testing::DimSpec> dims = {std::string("n"), int64_t{2}, int64_t{1},
                                        int64_t{3},       int64_t{2}, int64_t{2}};
  for (int i = 0; i < 6; ++i) add_input(g, "x" + std::to_string(i), dims);
  add_node(g, "Add", {"x0", "x1"}, {"a1"}, "add1");
  add_node(g, "Add", {"a1", "x2"}, {"a2"}, "add2");
  add_node(g, "Add", {"a2", "x3"}, {"a3"}, "add3");
  add_node(g, "Add", {"a3", "x4"}, {"a4"}, "add4");
  add_node(g, "Add", {"a4", "x5"}, {"y"}, "add5");
  add_output(g, "y");
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  // Rank 6: 2 + K + 6 + 6K <= 32 allows K = 3 inputs per shader.
  ASSERT_GE(p->gpu_kernels.size(), 2u);
  for (const auto& k : p->gpu_kernels) {
    EXPECT_LE(rt::gpu_group_push_words(uint32_t(k.inputs.size()), uint32_t(k.rank)), 32u);
  }
  EXPECT_EQ(grouped_nodes(*p), 5);
  std::vector<rt::Shape> shapes(6, rt::Shape{2, 2, 1, 3, 2, 2});
  expect_same_on_vulkan(*p, shapes);
}

onnx::ModelProto swish_model() {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{8}});
  add_node(g, "Sigmoid", {"x"}, {"s"}, "sig");
  add_node(g, "Mul", {"x", "s"}, {"y"}, "mul");
  add_output(g, "y");
  return m;
}

TEST(ElementwiseGroups, AGroupThatDoesNotEndInItsOutputIsRefused) {
  auto p = compile(swish_model());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->gpu_kernels.size(), 1u);
  p->gpu_kernels[0].output = p->graphs[0].inputs[0];
  auto vk = testing::make_vulkan();
  SOD2_REQUIRE_VULKAN(vk);
  rt::SessionOptions options;
  options.backend = vk.backend;
  auto s = rt::Session::create(*p, rt::KernelRegistry::standard(), options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("does not name a run of plain main-graph nodes"),
            std::string::npos)
      << s.status().message();
  // The CPU ignores the shaders.
  EXPECT_TRUE(rt::Session::create(*p, rt::KernelRegistry::standard(), {}).ok());
}

// SOD2_WRITE_FUZZ_SEED=DIR writes a package with a generated shader as
// DIR/small_gpu_kernels.sod2, the seed of tests/fuzz/seeds/package_load for that section.
TEST(ElementwiseGroups, WritesTheFuzzSeedWhenAsked) {
  const char* dir = std::getenv("SOD2_WRITE_FUZZ_SEED");
  if (!dir) GTEST_SKIP() << "set SOD2_WRITE_FUZZ_SEED=DIR to write the seed";
  auto p = compile(swish_model());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_TRUE(package::write_package(*p, std::string(dir) + "/small_gpu_kernels.sod2").ok());
}

// CPU kernels that touch no bytes the pending dispatches read or write (shape arithmetic) run
// without waiting for the device: one sync per run, at its end. One that reads a dispatch's
// output waits for it.
TEST(ElementwiseGroups, OnlyCpuKernelsThatTouchDeviceBytesWait) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{8}});
  add_node(g, "Sigmoid", {"x"}, {"s"}, "sig");
  add_node(g, "Shape", {"s"}, {"sh"}, "shape");
  auto* cast = add_node(g, "Cast", {"sh"}, {"c"}, "cast");
  testing::add_int_attr(cast, "to", onnx::TensorProto::FLOAT);
  add_node(g, "Relu", {"s"}, {"r"}, "relu");
  auto* argmax = add_node(g, "ArgMax", {"r"}, {"am"}, "argmax");
  testing::add_int_attr(argmax, "axis", 1);
  add_output(g, "s");
  add_output(g, "c");
  add_output(g, "am", {}, onnx::TensorProto::INT64);
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  auto vk = testing::make_vulkan();
  SOD2_REQUIRE_VULKAN(vk);
  rt::SessionOptions options;
  options.backend = vk.backend;
  auto session = rt::Session::create(*p, rt::KernelRegistry::standard(), options);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  const rt::HostTensor x = testing::random_tensor(rt::Shape{3, 8}, 5);
  const rt::Tensor views[] = {x.view()};
  ASSERT_TRUE((*session)->run(views).ok());
  vk.backend->reset_counters();
  auto out = (*session)->run(views);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const rt::BackendCounters& c = vk.backend->counters();
  EXPECT_EQ(c.dispatches, 2);   // Sigmoid, Relu
  EXPECT_EQ(c.cpu_kernels, 3);  // Shape, Cast, ArgMax
  // ArgMax reads Relu's output: the one sync, before it; Shape and Cast never waited.
  EXPECT_EQ(c.syncs, 1);
  EXPECT_EQ((*out)[1].as<float>()[0], 3.f);  // Cast(Shape(s))
  const float* r = (*out)[0].as<float>();
  for (int64_t row = 0; row < 3; ++row) {
    int64_t best = 0;
    for (int64_t k = 1; k < 8; ++k)
      if (r[row * 8 + k] > r[row * 8 + best]) best = k;
    EXPECT_EQ((*out)[2].as<int64_t>()[row], best);  // Relu keeps sigmoid's order
  }
}

// A package's shaders reach no driver unless they are valid SPIR-V whose bindings and push
// constants are the ones their group provides.
TEST(ElementwiseGroups, HostileShadersAreRefusedBeforeTheDriver) {
  auto swish = compile(swish_model());  // one input, rank 2
  ASSERT_TRUE(swish.ok()) << swish.status().to_string();
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "a", {std::string("n"), int64_t{8}});
  add_input(g, "b", {std::string("n"), int64_t{8}});
  add_node(g, "Add", {"a", "b"}, {"y"}, "add");
  add_output(g, "y");
  auto add = compile(m);  // two inputs, rank 2
  ASSERT_TRUE(add.ok()) << add.status().to_string();
  auto vk = testing::make_vulkan();
  SOD2_REQUIRE_VULKAN(vk);
  auto refused = [&](rt::ProgramDesc p, const std::function<void(rt::GpuKernelDesc&)>& edit) {
    edit(p.gpu_kernels[0]);
    rt::SessionOptions options;
    options.backend = vk.backend;
    auto s = rt::Session::create(std::move(p), rt::KernelRegistry::standard(), options);
    return s.ok() ? std::string("accepted") : s.status().message();
  };
  const int before = vk.context->validation_errors();
  EXPECT_NE(refused(*swish, [&](rt::GpuKernelDesc& k) { k.spirv = add->gpu_kernels[0].spirv; })
                .find("reads binding 2, beyond its 2 buffers"),
            std::string::npos);
  EXPECT_NE(refused(*swish, [](rt::GpuKernelDesc& k) { k.rank = 1; })
                .find("bytes of constants, more than the"),
            std::string::npos);
  EXPECT_NE(
      refused(*swish, [](rt::GpuKernelDesc& k) { k.spirv[k.spirv.size() / 2] ^= 0x5A5A5A5Au; })
          .find("is not valid SPIR-V"),
      std::string::npos);
  EXPECT_NE(
      refused(*swish, [](rt::GpuKernelDesc& k) { k.spirv.resize(5); }).find("is not valid SPIR-V"),
      std::string::npos);
  EXPECT_EQ(vk.context->validation_errors(), before) << testing::validation_report(*vk.context);
}

// A backend holds one program's device state: a second live session is refused, and one made
// after the first ended gets a clean backend.
TEST(ElementwiseGroups, ABackendServesOneSessionAtATime) {
  auto p = compile(swish_model());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  auto vk = testing::make_vulkan();
  SOD2_REQUIRE_VULKAN(vk);
  rt::SessionOptions options;
  options.backend = vk.backend;
  auto first = rt::Session::create(*p, rt::KernelRegistry::standard(), options);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  auto second = rt::Session::create(*p, rt::KernelRegistry::standard(), options);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("make one backend per session"), std::string::npos);
  first->reset();
  auto third = rt::Session::create(*p, rt::KernelRegistry::standard(), options);
  ASSERT_TRUE(third.ok()) << third.status().to_string();
  const rt::HostTensor x = testing::random_tensor(rt::Shape{2, 8}, 3);
  const rt::Tensor views[] = {x.view()};
  EXPECT_TRUE((*third)->run(views).ok());
}

// The other tests' "zero validation errors" means something only if errors are counted: a
// pipeline whose layout leaves out most of the shader's push constants is one.
TEST(ElementwiseGroups, TheValidationLayerReportsErrors) {
  auto p = compile(swish_model());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  auto vk = testing::make_vulkan();
  SOD2_REQUIRE_VULKAN(vk);
  const int before = vk.context->validation_errors();
  auto pipeline = vk.backend->pipeline("broken", p->gpu_kernels[0].spirv, 2, 4);
  EXPECT_GT(vk.context->validation_errors(), before);
}

TEST(ElementwiseGroups, NonFloatNodesStayOutOfShaders) {
  auto m = testing::make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{4}}, onnx::TensorProto::INT64);
  add_node(g, "Add", {"x", "x"}, {"y"}, "iadd");
  add_output(g, "y", {}, onnx::TensorProto::INT64);
  auto p = compile(m);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_TRUE(p->gpu_kernels.empty());
}

}  // namespace
}  // namespace sod2

// The per-op table (core/ops/op_support.h) against what exists: the CPU kernels, the fused
// epilogue's activations, the shader generator and the Vulkan backend's hand-written shaders.
// A row that claims what no kernel does, or a kernel the table does not know, fails here.
#include "core/ops/op_support.h"
#include "runtime/kernels/elementwise_program.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/codegen/elementwise_shader.h"
#include "core/codegen/spirv_compiler.h"
#include "core/ops/op_registry.h"
#include "core/opt/fusion_rules.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/vulkan/vulkan_backend.h"

namespace sod2 {
namespace {

TEST(OpSupport, RowsAreSortedUniqueAndFindable) {
  const auto table = op_support_table();
  ASSERT_FALSE(table.empty());
  for (size_t i = 1; i < table.size(); ++i)
    EXPECT_LT(table[i - 1].op_type, table[i].op_type)
        << "rows must be sorted: " << table[i].op_type;
  for (const OpSupport& row : table) {
    const OpSupport* found = find_op_support(row.op_type);
    ASSERT_NE(found, nullptr) << row.op_type;
    EXPECT_EQ(found->op_type, row.op_type);
  }
  EXPECT_EQ(find_op_support("NoSuchOp"), nullptr);
  EXPECT_EQ(find_op_support(""), nullptr);
}

TEST(OpSupport, EveryRowIsAStandardOpWithAShapeRuleAndACpuKernel) {
  const rt::KernelRegistry& cpu = rt::KernelRegistry::standard();
  for (const OpSupport& row : op_support_table()) {
    const std::string op(row.op_type);
    EXPECT_NE(OpRegistry::standard().versions(op), nullptr) << op << ": RDP has no spec for it";
    EXPECT_TRUE(cpu.find("", op, 23) != nullptr) << op << ": the CPU has no kernel for it";
  }
}

TEST(OpSupport, EpilogueActivationsAreExactlyThoseTheFusedKernelsRun) {
  for (const OpSupport& row : op_support_table()) {
    rt::Activation a = rt::Activation::kNone;
    EXPECT_EQ(rt::activation_from_name(std::string(row.op_type), &a), row.epilogue_activation)
        << row.op_type;
    if (row.epilogue_activation) EXPECT_EQ(row.role, FusionRole::kElementwise) << row.op_type;
  }
}

// The table's fused_elementwise ops are exactly those a FusedElementwise program evaluates
// (rt::EwOp, which the CPU kernel and the shader generator both switch over), and each compiles
// to SPIR-V as a one-step group.
TEST(OpSupport, FusedElementwiseOpsAreThoseTheProgramEvaluatesAndCompileToSpirv) {
  int listed = 0;
  for (const OpSupport& row : op_support_table()) {
    const std::string op(row.op_type);
    EXPECT_EQ(codegen::is_elementwise_op(op), row.fused_elementwise) << op;
    EXPECT_EQ(rt::ew_op_from_name(op).has_value(), row.fused_elementwise) << op;
    if (!row.fused_elementwise) continue;
    ++listed;
    EXPECT_EQ(row.role, FusionRole::kElementwise) << op;
    const bool two = rt::ew_op_arity(*rt::ew_op_from_name(op)).hi > 1;
    std::vector<rt::EwOperand> args = {{false, 0}};
    if (two) args.push_back({false, 1});
    auto step = rt::elementwise_step(op, 23, args, [](const char*) { return std::nullopt; });
    ASSERT_TRUE(step.ok()) << op << ": " << step.status().message();
    codegen::ElementwiseShader s;
    s.program.steps.push_back(*step);
    s.literals = {std::nullopt, std::nullopt};
    s.rank = 1;
    Expected<std::string> glsl = codegen::generate_elementwise_glsl(s);
    ASSERT_TRUE(glsl.ok()) << op << ": " << glsl.status().message();
    Expected<std::vector<uint32_t>> spirv = codegen::compile_compute_shader(*glsl, op);
    EXPECT_TRUE(spirv.ok()) << op << ": " << (spirv.ok() ? "" : spirv.status().message());
  }
  EXPECT_EQ(listed, rt::kNumEwOps);
  // And a program never takes an op the table does not give it.
  ASSERT_FALSE(find_op_support("Gelu")->fused_elementwise);
  EXPECT_FALSE(rt::elementwise_step("Gelu", 23, {{false, 0}}, [](const char*) {
                 return std::nullopt;
               }).ok());
}

TEST(OpSupport, VulkanShadersAreExactlyThoseTheBackendHas) {
  std::set<std::string> listed;
  for (const OpSupport& row : op_support_table()) {
    const std::string op(row.op_type);
    listed.insert(op);
    EXPECT_EQ(rt::vk::shader_family("", op) != rt::vk::ShaderFamily::kNone, row.vulkan_shader)
        << op;
  }
  // Every standard op the backend has a shader for has a row (so the table misses none).
  for (const std::string& op : OpRegistry::standard().op_types())
    if (rt::vk::shader_family("", op) != rt::vk::ShaderFamily::kNone)
      EXPECT_TRUE(listed.count(op)) << op << " has a Vulkan shader but no row in the table";
  // The fused contractions the CPU matcher makes run there too.
  for (const char* fused : {"FusedConv", "FusedMatMul", "FusedGemm"})
    EXPECT_EQ(rt::vk::shader_family("sod2", fused), rt::vk::ShaderFamily::kContraction) << fused;
}

TEST(OpSupport, FusionReadsItsRolesFromTheTable) {
  for (const OpSupport& row : op_support_table()) {
    Node n;
    n.op_type = std::string(row.op_type);
    EXPECT_EQ(opt::fusion_role(n), row.role) << row.op_type;
    n.domain = "com.example";  // another domain's op of the same name is nothing we know
    EXPECT_EQ(opt::fusion_role(n), FusionRole::kOpaque) << row.op_type;
  }
  Node unknown;
  unknown.op_type = "NonZero";
  EXPECT_EQ(opt::fusion_role(unknown), FusionRole::kOpaque);
}

}  // namespace
}  // namespace sod2

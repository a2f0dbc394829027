// The program carries each execution symbol's bound at a binding and the step from which each
// arena tensor's size is known (rt::ProgramDesc::execution_bounds, arena_known_steps): the
// session checks every value a node binds against that bound and lays bindings out with it.
#include <gtest/gtest.h>

#include <algorithm>

#include "../onnx/proto_builder.h"
#include "core/onnx/onnx_import.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/program/execution_bounds.h"

namespace sod2 {
namespace {

using testing::add_float_initializer;
using testing::add_input;
using testing::add_node;
using testing::add_output;

// x[n] -> Greater(0) -> NonZero -> idx[1, k]; Exp(x) gathered at idx -> Relu -> y[1, k].
pipeline::CompiledModel compile_nonzero_model() {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"n"});
  add_float_initializer(g, "zero", {1}, {0});
  add_node(g, "Greater", {"x", "zero"}, {"mask"}, "greater");
  add_node(g, "NonZero", {"mask"}, {"idx"}, "nonzero");
  add_node(g, "Exp", {"x"}, {"e"}, "exp");
  add_node(g, "Gather", {"e", "idx"}, {"picked"}, "gather");
  add_node(g, "Relu", {"picked"}, {"y"}, "relu");
  add_output(g, "y", {});
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "nonzero model");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  pipeline::CompileOptions o;
  o.rdp.ranges["n"] = {1, 64, 1};
  auto c = pipeline::compile(std::move(*model), o);
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return std::move(*c);
}

size_t symbol_index(const rt::ProgramDesc& p, bool execution) {
  for (size_t k = 0; k < p.symbols.size(); ++k)
    if (p.symbols[k].execution == execution) return k;
  ADD_FAILURE() << "no " << (execution ? "execution" : "input") << " symbol";
  return 0;
}

// The main-graph node index that writes `value`, and that value's arena tensor.
std::pair<int32_t, int32_t> writer_and_tensor(const rt::ProgramDesc& p, const std::string& value) {
  const rt::GraphDesc& main = p.graphs[0];
  for (size_t n = 0; n < main.nodes.size(); ++n) {
    for (int32_t v : main.nodes[n].outputs) {
      if (v >= 0 && main.values[static_cast<size_t>(v)].name == value)
        return {static_cast<int32_t>(n), main.values[static_cast<size_t>(v)].arena_tensor};
    }
  }
  ADD_FAILURE() << "no node writes " << value;
  return {-1, -1};
}

TEST(ExecutionBoundsProgram, BoundsAreExpressionsOfTheInputSizes) {
  const pipeline::CompiledModel c = compile_nonzero_model();
  const rt::ProgramDesc& p = c.program;
  ASSERT_EQ(p.execution_bounds.num_outputs(), p.symbols.size());
  const size_t n = symbol_index(p, false), k = symbol_index(p, true);
  std::vector<int64_t> values(p.symbols.size(), 0);
  values[n] = 10;
  plan::ExecutionBounds bounds;
  auto b = bounds.bound_of(p, values, k);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(*b, 10);  // NonZero's count is at most the numel of its input, not 64
  ASSERT_TRUE(bounds.bound_all(p, values).ok());
  EXPECT_EQ(values[k], 10);
  EXPECT_EQ(values[n], 10);
}

TEST(ExecutionBoundsProgram, EachTensorIsKnownFromTheNodeThatBindsItsSymbols) {
  const pipeline::CompiledModel c = compile_nonzero_model();
  const rt::ProgramDesc& p = c.program;
  ASSERT_EQ(p.arena_known_steps.size(), p.num_arena_tensors);
  const auto [nonzero, idx] = writer_and_tensor(p, "idx");
  const auto [exp, e] = writer_and_tensor(p, "e");
  const auto [gather, picked] = writer_and_tensor(p, "picked");
  ASSERT_GE(idx, 0);
  ASSERT_GE(e, 0);
  ASSERT_GE(picked, 0);
  EXPECT_EQ(p.arena_known_steps[static_cast<size_t>(idx)], nonzero);
  EXPECT_EQ(p.arena_known_steps[static_cast<size_t>(picked)], nonzero);
  EXPECT_EQ(p.arena_known_steps[static_cast<size_t>(e)], 0);
  EXPECT_LE(nonzero, gather);
  (void)exp;
}

Expected<std::span<const rt::Tensor>> run(rt::Session& s, const rt::HostTensor& x) {
  const rt::Tensor view = x.view();
  return s.run(std::span<const rt::Tensor>(&view, 1));
}

rt::HostTensor input(std::vector<float> v) {
  rt::HostTensor x(rt::DType::kFloat, rt::Shape{static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), x.data<float>());
  return x;
}

TEST(ExecutionBoundsProgram, ARunWithinTheBoundsRuns) {
  const pipeline::CompiledModel c = compile_nonzero_model();
  auto s = rt::Session::create(c.program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = run(**s, input({1, -2, 0.5f, -1}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape, (rt::Shape{1, 2}));
}

// A package whose bound is wrong (here: 1 for every symbol) cannot make the runtime place more
// than it reserved: the node's count is checked before anything is written.
TEST(ExecutionBoundsProgram, AValueAboveItsBoundIsAnErrorNamingTheSymbolAndTheLimit) {
  pipeline::CompiledModel c = compile_nonzero_model();
  rt::ProgramDesc p = c.program;
  std::vector<rt::ShapeInstruction> code{{rt::ShapeOp::kLoadImm, 0, 0, 0, 1}};
  for (size_t k = 0; k < p.symbols.size(); ++k)
    code.push_back({rt::ShapeOp::kStore, static_cast<int32_t>(k), 0, 0, 0});
  auto bounds = rt::ShapeProgram::from_instructions(code, p.symbols.size(), p.symbols.size(), 1);
  ASSERT_TRUE(bounds.ok()) << bounds.status().to_string();
  p.execution_bounds = std::move(*bounds);
  auto s = rt::Session::create(p, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = run(**s, input({1, 2, 3, -1}));
  ASSERT_FALSE(out.ok());
  const std::string& msg = out.status().message();
  EXPECT_NE(msg.find(p.symbols[symbol_index(p, true)].name), std::string::npos) << msg;
  EXPECT_NE(msg.find("3, above its bound 1"), std::string::npos) << msg;
  // One within it still runs.
  auto ok = run(**s, input({1, -2, -3, -1}));
  EXPECT_TRUE(ok.ok()) << ok.status().to_string();
}

TEST(ExecutionBoundsProgram, AMalformedBoundsProgramIsRefusedAtCreation) {
  pipeline::CompiledModel c = compile_nonzero_model();
  rt::ProgramDesc p = c.program;
  p.arena_known_steps.push_back(0);
  auto s = rt::Session::create(p, rt::KernelRegistry::standard(), {1});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("arena known steps"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace sod2
